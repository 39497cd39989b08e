"""The house rules a reviewer would otherwise check by hand (the developers' guide): no
tracked file over 5 MiB (a large raw log is sealed, not exempted), no Python module far
past ~350 lines, and no comment or docstring that narrates history (an issue number or a
date: that is the CHANGELOG's and git's job)."""

from __future__ import annotations

import re
import subprocess

import pytest

from serverbench import paths

ROOT = paths.repo_root()
MAX_FILE_BYTES = 5 * 2**20
MAX_MODULE_LINES = 400  # "~350": a module may run a little past it, not far
MONTHS = "Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec"
HISTORY = re.compile(rf"\bissues? #?\d+\b|\b\d{{1,2}} ({MONTHS})[a-z]* 20\d\d\b", re.I)
# code, contract, scripts and tests whose comments must say what and why, not when (the frozen protocols
# cite their sources' dates and the sweeps they were dimensioned on: data, not history)
SOURCES = ("src/", "spec/", "scripts/", "tests/")
# this file names the pattern's own examples
FROZEN = (
    "spec/protocol.json",
    "spec/protocol-versions.json",
    "tests/python/test_house_rules.py",
    *(f"spec/{f.name}" for f in (ROOT / "spec").glob("protocol-*.json")),  # superseded versions, byte for byte
)
CODE = (".py", ".go", ".erl", ".hrl", ".scala", ".java", ".rs", ".c", ".h", ".js", ".json", ".toml", ".sh")


def _tracked() -> list[str]:
    try:
        out = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")
    return [p for p in out.stdout.decode().split("\0") if p]


def test_no_tracked_file_is_over_5_mib():
    big = [(p, (ROOT / p).stat().st_size) for p in _tracked() if (ROOT / p).is_file()]
    assert [b for b in big if b[1] > MAX_FILE_BYTES] == []


def test_no_python_module_runs_far_past_350_lines():
    long = []
    for p in _tracked():
        if p.startswith("src/python/serverbench/") and p.endswith(".py"):
            n = (ROOT / p).read_text(encoding="utf-8").count("\n")
            if n > MAX_MODULE_LINES:
                long.append((p, n))
    assert long == []


def test_no_comment_or_docstring_narrates_history():
    found = []
    for p in _tracked():
        if p.startswith(SOURCES) and p.endswith(CODE) and p not in FROZEN and (ROOT / p).is_file():
            for no, line in enumerate((ROOT / p).read_text(encoding="utf-8", errors="replace").splitlines(), 1):
                if HISTORY.search(line):
                    found.append(f"{p}:{no}: {line.strip()[:100]}")
    assert found == []


def test_the_history_pattern_finds_what_it_should():
    # so that the test above cannot pass by matching nothing
    assert HISTORY.search("# fixed in issue 30") and HISTORY.search("Until 26 Nov 2026 (evening)")
    assert not HISTORY.search("lambda = 10^4, 30 s runs") and not HISTORY.search("2026-01-01T00:00:00Z")
