"""Golden test data: a small real raw sweep (tests/golden/raw/<id>/, from a smoke run)
and the processed tables and claim verdicts it must give (tests/golden/expected/).

    python -m serverbench golden            compare, print the differences, exit 1 if any
    python -m serverbench golden --update   regenerate tests/golden/expected/ and print the diff

tests/python/test_golden.py compares them structurally: verdicts, texts, counts, column
sets and row counts exactly; numbers at a relative tolerance (REL_TOL), because the last
bits of floating-point results differ between CPUs and vector instruction sets (AMD EPYC
and Intel Xeon give 0.007590990198612105 and ...106). No real change of a statistic hides
under 1e-9, so any change in how raw logs become tables, statistics or verdicts still shows
up as a difference that has to be committed on purpose.
"""

from __future__ import annotations

import csv
import difflib
import json
import math
import shutil
import tempfile
from pathlib import Path

from serverbench.paths import golden_dir

GOLDEN_SWEEP = "golden-smoke"
# sweep.json keys left out of the comparison: copies of the raw manifest (machine paths)
VOLATILE_INFO_KEYS = ("manifest",)
# Numbers agree when within this relative tolerance (or ABS_TOL of zero): last-bit noise
# between CPUs is ~1e-16 relative; a perturbed statistic moves far more.
REL_TOL = 1e-9
ABS_TOL = 1e-12


def build(out_dir: Path, raw_dir: Path | None = None) -> Path:
    """Process the golden raw sweep into out_dir: every processed table, claims.csv,
    claims_evidence.csv and sweep.json (without its volatile keys)."""
    from serverbench.analysis import claims
    from serverbench.analysis.reading import process

    raw = Path(raw_dir) if raw_dir else golden_dir() / "raw" / GOLDEN_SWEEP
    out_dir = Path(out_dir)
    process.process_sweep(raw, out_dir)
    claims.write_claims(process.Processed(out_dir))
    info = json.loads((out_dir / "sweep.json").read_text(encoding="utf-8"))
    for k in VOLATILE_INFO_KEYS:
        info.pop(k, None)
    (out_dir / "sweep.json").write_text(json.dumps(info, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return out_dir


def _files(d: Path) -> dict[str, Path]:
    return {p.name: p for p in sorted(Path(d).iterdir()) if p.is_file()} if Path(d).is_dir() else {}


def _number(text: str) -> float | None:
    """The float a cell holds, or None for text (an integer-looking cell is a number too)."""
    try:
        return float(text)
    except ValueError:
        return None


def cells_equal(a: str, b: str) -> bool:
    """Two cells' text: equal as text, or both numbers equal within REL_TOL / ABS_TOL."""
    if a == b:
        return True
    x, y = _number(a), _number(b)
    if x is None or y is None:
        return False
    if math.isnan(x) or math.isnan(y):
        return math.isnan(x) and math.isnan(y)
    return math.isclose(x, y, rel_tol=REL_TOL, abs_tol=ABS_TOL)


def _json_diff(a, b, where: str = "") -> list[str]:
    if isinstance(a, dict) and isinstance(b, dict):
        out = [f"{where}/{k}: only in expected" for k in sorted(set(a) - set(b))]
        out += [f"{where}/{k}: only in generated" for k in sorted(set(b) - set(a))]
        for k in sorted(set(a) & set(b)):
            out += _json_diff(a[k], b[k], f"{where}/{k}")
        return out
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return [f"{where}: {len(a)} items expected, {len(b)} generated"]
        return [d for i, (x, y) in enumerate(zip(a, b)) for d in _json_diff(x, y, f"{where}[{i}]")]
    if isinstance(a, bool) or isinstance(b, bool) or not isinstance(a, int | float) or not isinstance(b, int | float):
        return [] if a == b else [f"{where}: expected {a!r}, generated {b!r}"]
    if isinstance(a, int) and isinstance(b, int):
        return [] if a == b else [f"{where}: expected {a!r}, generated {b!r}"]
    return [] if cells_equal(repr(float(a)), repr(float(b))) else [f"{where}: expected {a!r}, generated {b!r}"]


def _csv_diff(a_text: str, b_text: str) -> list[str]:
    a = list(csv.reader(a_text.splitlines()))
    b = list(csv.reader(b_text.splitlines()))
    if not a or not b:
        return [] if a == b else ["one side is empty"]
    if a[0] != b[0]:
        return [f"columns: expected {a[0]}, generated {b[0]}"]
    if len(a) != len(b):
        return [f"rows: {len(a) - 1} expected, {len(b) - 1} generated"]
    head = a[0]
    out = []
    for i, (ra, rb) in enumerate(zip(a[1:], b[1:]), start=2):
        if len(ra) != len(rb):
            out.append(f"line {i}: {len(ra)} cells expected, {len(rb)} generated")
            continue
        key = ",".join(ra[:2])
        for col, x, y in zip(head, ra, rb):
            if not cells_equal(x, y):
                out.append(f"line {i} ({key}), column {col}: expected {x!r}, generated {y!r}")
    return out


def diff(expected_dir: Path, actual_dir: Path) -> list[str]:
    """One description per differing file ([] if all agree): CSV tables cell by cell and
    JSON as parsed structures, numbers within REL_TOL, everything else exactly. Each starts
    with '--- expected/<name>' and ends with the unified text diff of the differing lines."""
    exp, act = _files(expected_dir), _files(actual_dir)
    out = []
    for name in sorted(set(exp) | set(act)):
        if name not in exp or name not in act:
            out.append(f"--- expected/{name}: {'missing' if name not in act else 'not expected'} in generated tables")
            continue
        a_text, b_text = exp[name].read_text(encoding="utf-8"), act[name].read_text(encoding="utf-8")
        if name.endswith(".json"):
            found = _json_diff(json.loads(a_text), json.loads(b_text))
        elif name.endswith(".csv"):
            found = _csv_diff(a_text, b_text)
        else:
            found = [] if a_text == b_text else ["text differs"]
        if found:
            text = "".join(
                difflib.unified_diff(
                    a_text.splitlines(keepends=True), b_text.splitlines(keepends=True), "expected", "generated", n=0
                )
            )
            out.append(f"--- expected/{name}\n" + "\n".join(found) + "\n" + text)
    return out


def check(update: bool = False, stdout=None) -> int:
    """Regenerate into a temporary folder and compare with tests/golden/expected/; with
    update, replace the expected tables. Prints the diff. 0 if identical (or updated)."""
    import sys

    stdout = stdout or sys.stdout
    expected = golden_dir() / "expected"
    with tempfile.TemporaryDirectory(prefix="serverbench-golden-") as tmp:
        gen = build(Path(tmp) / "generated")
        diffs = diff(expected, gen)
        for d in diffs:
            print(d, file=stdout)
        if update:
            shutil.rmtree(expected, ignore_errors=True)
            shutil.copytree(gen, expected)
            print(f"tests/golden/expected/: {len(diffs)} file(s) changed", file=stdout)
            return 0
    print(
        "golden tables identical" if not diffs else f"{len(diffs)} file(s) differ from tests/golden/expected/",
        file=stdout,
    )
    return 1 if diffs else 0
