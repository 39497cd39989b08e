"""Every document cited in the code, specs, docs, notebooks and scripts exists, and so does
every section cited with it: a quoted name (docs/X.md "Section", docs/X.md, "Section",
`docs/X.md` section "Section", 'Section', a name wrapped onto a comment's next line) or a
number (docs/X.md, section 10). A section is a heading of that document (a line starting
with #, outside fenced code) or a bold paragraph label starting a line (**Power: ...**,
* **The fault.**), which the docs use as run-in headings; the cited name must occur in it
at word boundaries. About 15 places once cited a "Socket benchmarks" section of docs/spec.md
that was never there (it is docs/sockets.md)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SKIP = ("paper/", "data/", "tests/golden/")

# a quoted section name: may wrap once onto the next line of a comment (its leader dropped)
_WRAP = r"\n[ \t]*(?:[*#/%;]+[ \t]*)?"
_NAME = r"(?!\s)((?:[^{q}\\\n]|" + _WRAP + r"){{3,80}}?)"
CITE = re.compile(
    r"(?<![\w/.-])(?:\.\./)*docs/([\w.-]+\.md)"  # the document (relative links ../docs/ too)
    r"(?:`?,?[ \t]+(?:section[ \t]+)?(?:"  # then, after a space, comma or `section`:
    r"(?<=section )(\d+[a-z]?)\b"  # a section number,
    r'|\\?"' + _NAME.format(q='"') + r'\\?"'  # or "name" (\"name\" inside JSON),
    r"|\u201c" + _NAME.format(q="\u201d") + r"\u201d"  # or curly quotes,
    r"|'" + _NAME.format(q="'") + r"'"  # or 'name'
    r"))?"
)


def _tracked() -> list[Path]:
    out = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    me = Path(__file__).resolve()  # its own examples of bad citations are not citations
    return [ROOT / f for f in out.split() if not f.startswith(SKIP) and (ROOT / f).resolve() != me]


def _text(f: Path) -> str:
    """The file's text; a notebook's cell sources (so that quotes are not JSON-escaped)."""
    text = f.read_text(encoding="utf-8")
    if f.suffix == ".ipynb":
        cells = json.loads(text).get("cells", [])
        return "\n".join("".join(c["source"]) if isinstance(c["source"], list) else c["source"] for c in cells)
    return text


def _norm(s: str) -> str:
    s = re.sub(_WRAP, " ", s)
    return " ".join(s.replace("`", "").replace("*", " ").lower().split()).strip(" .,:;")


def sections(doc: Path) -> list[str]:
    """Headings (outside fenced code) and bold paragraph labels of a Markdown document."""
    out, fenced = [], False
    for line in doc.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and (re.match(r"#+ ", line) or line.startswith(("**", "* **"))):
            out.append(_norm(line.lstrip("#")))
    return out


def _has(heads: list[str], name: str | None, number: str | None) -> bool:
    if number:
        return any(re.match(re.escape(number) + r"\. ", h) for h in heads)
    pat = re.compile(r"(?<!\w)" + re.escape(_norm(name or "")) + r"(?!\w)")
    return any(pat.search(h) for h in heads)


def _made_at_the_freeze(f: Path, cited: str) -> bool:
    """The protocol draft names the newest version's human text by the archived name the
    freeze gives it (docs/protocol-<v>.md), which exists only from then on."""
    from serverbench import protocol

    return f.name == protocol.DRAFT and cited == protocol.archived(protocol.DOC, protocol.newest())


def citations_that_do_not_resolve() -> list[str]:
    bad: list[str] = []
    cache: dict[Path, list[str]] = {}
    for f in _tracked():
        try:
            text = _text(f)
        except (UnicodeDecodeError, OSError, ValueError, KeyError):
            continue
        for m in CITE.finditer(text):
            doc = ROOT / "docs" / m.group(1)
            where = f"{f.relative_to(ROOT)}: {' '.join(m.group(0).split())}"
            if not doc.exists() and not _made_at_the_freeze(f, m.group(1)):
                bad.append(f"{where} (no such document)")
                continue
            number, name = m.group(2), next((g for g in m.groups()[2:] if g), None)
            if (number or (name and _norm(name))) and not _has(cache.setdefault(doc, sections(doc)), name, number):
                bad.append(f"{where} (no such section)")
    return bad


def test_every_cited_document_and_section_exists():
    assert citations_that_do_not_resolve() == []


def test_the_check_finds_missing_documents_and_sections(tmp_path, monkeypatch):
    fake = tmp_path / "x.py"
    fake.write_text(
        '# see docs/spec.md "Socket benchmarks" and docs/nowhere.md\n'
        "# `docs/spec.md` section \"Other\", docs/spec.md, section 2 and docs/spec.md 'Missing'\n"
        '/** docs/spec.md "Socket\n  * benchmarks": wrapped; docs/spec.md section 1, docs/spec.md "other" */\n'
        '# ../docs/spec.md, "1. Intro" and docs/spec.md, “Code” (a heading only inside fenced code)\n'
        'x = ("docs/spec.md", "not a section")  # docs/spec.md "Bold label"\n',
        encoding="utf-8",
    )
    nb = tmp_path / "n.ipynb"
    nb.write_text(json.dumps({"cells": [{"cell_type": "markdown", "source": ['docs/spec.md, "Gone"']}]}))
    me = sys.modules[__name__]
    monkeypatch.setattr(me, "_tracked", lambda: [fake, nb])
    monkeypatch.setattr(me, "ROOT", tmp_path)
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "spec.md").write_text(
        "# Spec\n## 1. Intro\n## Other things\n```sh\n# Code\n```\n**Bold label.** text\n", encoding="utf-8"
    )
    assert citations_that_do_not_resolve() == [
        'x.py: docs/spec.md "Socket benchmarks" (no such section)',
        "x.py: docs/nowhere.md (no such document)",
        "x.py: docs/spec.md, section 2 (no such section)",
        "x.py: docs/spec.md 'Missing' (no such section)",
        'x.py: docs/spec.md "Socket * benchmarks" (no such section)',
        "x.py: docs/spec.md, “Code” (no such section)",
        'n.ipynb: docs/spec.md, "Gone" (no such section)',
    ]
