"""CITATION.bib says what CITATION.cff says: the package's title, version, release date,
licence and authors, and the paper's authors, title, proceedings, pages, year and DOI; and
README's BibTeX of the paper is the file's entry, character for character."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from serverbench import __version__

ROOT = Path(__file__).resolve().parents[2]


def entries(text: str) -> dict[str, dict[str, str]]:
    """{key: {field: value}} of a BibTeX file whose values are braced (nested braces allowed)."""
    out: dict[str, dict[str, str]] = {}
    for m in re.finditer(r"^@(\w+)\{([^,]+),\n(.*?)\n\}", text, flags=re.M | re.S):
        fields = {"ENTRYTYPE": m.group(1)}
        for f in re.finditer(r"^\s*(\w+)\s*=\s*\{(.*)\},?\s*$", m.group(3), flags=re.M):
            fields[f.group(1)] = f.group(2)
        out[m.group(2)] = fields
    return out


def _plain(s: str) -> str:
    """A title without LaTeX quotes, braces and line breaks, for comparing with the CFF's."""
    s = s.replace("``", '"').replace("''", '"').replace("{", "").replace("}", "")
    return " ".join(s.split())


def test_the_bibtex_entries_match_citation_cff():
    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))
    bib = entries((ROOT / "CITATION.bib").read_text(encoding="utf-8"))
    pkg, paper = bib["serverbench"], bib["valkov2018comparing"]
    assert pkg["ENTRYTYPE"] == "software" and paper["ENTRYTYPE"] == "inproceedings"
    assert _plain(pkg["title"]) == _plain(cff["title"])
    assert pkg["version"] == cff["version"] == __version__
    assert pkg["date"] == str(cff["date-released"]) and pkg["year"] == str(cff["date-released"])[:4]
    assert pkg["license"] == cff["license"]
    assert _plain(pkg["author"]) == " and ".join(a["name"] for a in cff["authors"])
    ref = next(r for r in cff["references"] if r.get("doi") == paper["doi"])
    assert paper["title"] == ref["title"]
    assert paper["author"] == " and ".join(f"{a['family-names']}, {a['given-names']}" for a in ref["authors"])
    assert paper["booktitle"] == ref["collection-title"]
    assert paper["pages"] == f"{ref['start']}--{ref['end']}" and paper["year"] == str(ref["year"])
    assert paper["publisher"] == ref["publisher"]["name"]
    assert paper["doi"] in pkg["note"]


def test_readme_cites_with_the_files_paper_entry():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"```bibtex\n(.*?)```", readme, flags=re.S).group(1)
    bib = (ROOT / "CITATION.bib").read_text(encoding="utf-8")
    assert block.strip() in bib
    assert "CITATION.bib" in readme and "CITATION.cff" in readme
