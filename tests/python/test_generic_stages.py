"""The generic stages name no benchmark: what a benchmark is lives in its package
(serverbench/benchmarks/<id>/, docs/extending.md), found by one discovery. This test greps
the harness, the processing, the statistics, the claims engine, the report and the explorer
for benchmark ids as string literals.

Some generic files still name one, listed below with their count: a ratchet. A count may
only go down (and the list with it); a new file or a higher count fails. What is left, and
why it has not moved yet: the processed spawn_max side tables of the max-processes search
(process, side_tables and audit; the harness names no benchmark: it runs the search spawn
declares in benchmarks/spawn/search.py), the sources' own data turned into records
(paperdata, sourcedata), the synthetic records of the tests (synthetic), a docstring's
example command line (contract), and the dimensioning experiment (dimension), whose
questions are the paper's three benchmarks' by design (each benchmark's part of it could
move into its package, asked for by plugins.part)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from serverbench import contract

PKG = Path(__file__).resolve().parents[2] / "src" / "python" / "serverbench"
GENERIC = ("harness/**/*.py", "analysis/**/*.py", "*.py")
STILL_NAMING = {
    "analysis/auditing/audit.py": 1,
    "analysis/reporting/dimension.py": 9,
    "analysis/claims/paperdata.py": 5,
    "analysis/reading/process.py": 3,
    "analysis/reading/side_tables.py": 2,
    "analysis/claims/sourcedata.py": 3,
    "analysis/reading/synthetic.py": 17,
    "contract.py": 2,
}


def ids() -> list[str]:
    return [*contract.benchmarks(), "spawn_max"]


def mentions(text: str) -> int:
    alternatives = "|".join(map(re.escape, ids()))
    pattern = re.compile(r"""["'](""" + alternatives + r""")["']""")
    return sum(1 for line in text.splitlines() if pattern.search(line))


def counts() -> dict[str, int]:
    out = {}
    for glob in GENERIC:
        for p in sorted(PKG.glob(glob)):
            n = mentions(p.read_text(encoding="utf-8"))
            if n:
                out[p.relative_to(PKG).as_posix()] = n
    return out


def test_the_generic_stages_name_no_new_benchmark():
    found = counts()
    grew = {f: n for f, n in found.items() if n > STILL_NAMING.get(f, 0)}
    assert not grew, f"generic code names a benchmark id: move it into serverbench/benchmarks/<id>/ ({grew})"
    shrank = {f: (STILL_NAMING[f], found.get(f, 0)) for f in STILL_NAMING if found.get(f, 0) < STILL_NAMING[f]}
    assert not shrank, f"fewer mentions than listed: lower STILL_NAMING (listed, found) {shrank}"


def test_the_check_finds_a_mention():
    assert mentions('x = "pingping"\ny = 1') == 1 and mentions("pingping_figures = 2") == 0


@pytest.mark.parametrize("bench", contract.benchmarks())
def test_every_benchmark_has_its_package(bench):
    from serverbench import plugins

    assert bench in plugins.ids(), f"serverbench/benchmarks/{bench}/ is missing (docs/extending.md)"
