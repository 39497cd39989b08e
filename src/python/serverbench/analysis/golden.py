"""Golden test data: a small real raw sweep (tests/golden/raw/<id>/, from a smoke run)
and the processed tables and claim verdicts it must give (tests/golden/expected/).

    python -m serverbench golden            compare, print the differences, exit 1 if any
    python -m serverbench golden --update   regenerate tests/golden/expected/ and print the diff

tests/python/test_golden.py compares them exactly, so any change in how raw logs become
tables, statistics or verdicts shows up as a diff that has to be committed on purpose.
"""

from __future__ import annotations

import difflib
import json
import shutil
import tempfile
from pathlib import Path

GOLDEN_SWEEP = "golden-smoke"
# sweep.json keys left out of the comparison: copies of the raw manifest (machine paths)
VOLATILE_INFO_KEYS = ("manifest",)


def golden_dir() -> Path:
    return Path(__file__).resolve().parents[4] / "tests" / "golden"


def build(out_dir: Path, raw_dir: Path | None = None) -> Path:
    """Process the golden raw sweep into out_dir: every processed table, claims.csv,
    claims_evidence.csv and sweep.json (without its volatile keys)."""
    from serverbench.analysis import claims, process

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


def diff(expected_dir: Path, actual_dir: Path) -> list[str]:
    """Unified diffs, file by file, between two folders of tables ([] if identical)."""
    exp, act = _files(expected_dir), _files(actual_dir)
    out = []
    for name in sorted(set(exp) | set(act)):
        a = exp[name].read_text(encoding="utf-8").splitlines(keepends=True) if name in exp else []
        b = act[name].read_text(encoding="utf-8").splitlines(keepends=True) if name in act else []
        if a != b:
            out.append("".join(difflib.unified_diff(a, b, f"expected/{name}", f"generated/{name}", n=1)))
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
