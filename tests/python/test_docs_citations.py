"""Every document cited in the code, specs and docs exists, and so does every section cited
by name with it (docs/X.md "Section" or docs/X.md, "Section"): a heading or a bold paragraph
label of that document. About 15 places once cited a "Socket benchmarks" section of
docs/spec.md that was never there (it is docs/sockets.md)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CITE = re.compile(r'docs/([\w.-]+\.md)(?:[ ,]*(?:section\s+)?["\u201c]([^"\u201d\n]{3,80})["\u201d])?')
SKIP = ("paper/", "data/", "tests/golden/")


def _tracked() -> list[Path]:
    out = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    me = Path(__file__).resolve()  # its own examples of bad citations are not citations
    return [ROOT / f for f in out.split() if not f.startswith(SKIP) and (ROOT / f).resolve() != me]


def _sections(doc: Path) -> list[str]:
    return [
        line.lower() for line in doc.read_text(encoding="utf-8").splitlines() if line.startswith(("#", "**", "* **"))
    ]


def citations_that_do_not_resolve() -> list[str]:
    bad, cache = [], {}
    for f in _tracked():
        try:
            text = f.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        for m in CITE.finditer(text):
            doc = ROOT / "docs" / m.group(1)
            where = f"{f.relative_to(ROOT)}: {m.group(0)}"
            if not doc.exists():
                bad.append(f"{where} (no such document)")
                continue
            if m.group(2):
                heads = cache.setdefault(doc, _sections(doc))
                if not any(m.group(2).lower().strip(". ") in h for h in heads):
                    bad.append(f"{where} (no such section)")
    return bad


def test_every_cited_document_and_section_exists():
    assert citations_that_do_not_resolve() == []


def test_the_check_finds_a_missing_section(tmp_path, monkeypatch):
    fake = tmp_path / "x.py"
    fake.write_text('# see docs/spec.md "Socket benchmarks" and docs/nowhere.md\n', encoding="utf-8")
    me = sys.modules[__name__]
    monkeypatch.setattr(me, "_tracked", lambda: [fake])
    monkeypatch.setattr(me, "ROOT", tmp_path)
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "spec.md").write_text("# Spec\n## Other\n", encoding="utf-8")
    assert citations_that_do_not_resolve() == [
        'x.py: docs/spec.md "Socket benchmarks" (no such section)',
        "x.py: docs/nowhere.md (no such document)",
    ]
