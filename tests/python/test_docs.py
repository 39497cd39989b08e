"""Docs that cannot drift: the generated tables in the docs (flags, languages, profiles,
profile settings) equal what `python -m serverbench docs` generates from spec/cli.json and
the profile files; and no doc points at a machine path."""

import re
from pathlib import Path

from serverbench.analysis import docsgen

ROOT = Path(__file__).resolve().parents[2]


def test_every_generated_block_is_present():
    assert docsgen.missing_blocks() == []


def test_committed_docs_equal_the_generated_ones():
    stale = [str(p.relative_to(ROOT)) for p, (old, new) in docsgen.generated().items() if old != new]
    assert stale == [], f"docs differ from spec/cli.json or the profiles: run `python -m serverbench docs` ({stale})"


def test_a_changed_profile_makes_the_check_fail(monkeypatch):
    real = docsgen._profiles

    def edited():
        p = real()
        p["quick"] = {**p["quick"], "description": "edited"}
        return p

    monkeypatch.setattr(docsgen, "_profiles", edited)
    assert any(old != new for old, new in docsgen.generated().values())


def test_docs_name_no_machine_paths():
    docs = [*ROOT.glob("docs/*.md"), ROOT / "README.md", *ROOT.glob("src/*/README.md"), *ROOT.glob("data/*/*.md")]
    bad = []
    for p in docs:
        for m in re.finditer(r"(/work/\S+|/home/\S+|\.\./shared/\S*|/root/\S+)", p.read_text(encoding="utf-8")):
            bad.append(f"{p.relative_to(ROOT)}: {m.group(1)}")
    assert bad == []
