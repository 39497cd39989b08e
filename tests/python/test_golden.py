"""Golden test: a small real raw sweep (tests/golden/raw/, a smoke run) must give exactly
the processed tables and claim verdicts in tests/golden/expected/. Regenerate on purpose
with `python -m serverbench golden --update` (it prints the diff)."""

from serverbench.analysis import golden, stats


def test_golden_sweep_gives_the_expected_tables_and_verdicts(tmp_path):
    gen = golden.build(tmp_path / "generated")
    diffs = golden.diff(golden.golden_dir() / "expected", gen)
    assert not diffs, (
        "processed tables differ from tests/golden/expected/ (python -m serverbench golden):\n"
        + "\n".join(diffs)[:4000]
    )
    assert (gen / "claims.csv").read_text().count("\n") >= 14  # header + 13 claims


def test_golden_comparison_catches_a_perturbed_statistic(tmp_path, monkeypatch):
    """The best confidence n vs m trials can reach, off by a factor 2 (1 - 1/C(n+m, n)
    instead of 1 - 2/C(n+m, n)): the verdicts' reasons change, and the comparison says so."""
    from math import comb

    monkeypatch.setattr(stats, "max_confidence", lambda n, m: 1.0 - 1.0 / comb(n + m, n) if n and m else 0.0)
    gen = golden.build(tmp_path / "perturbed")
    diffs = golden.diff(golden.golden_dir() / "expected", gen)
    assert diffs and all(d.startswith("--- expected/claims") for d in diffs)


def test_verdicts_for_sweep_reads_a_raw_folder():
    import pandas as pd

    from serverbench.analysis import verdicts_for_sweep

    v = verdicts_for_sweep(golden.golden_dir() / "raw" / golden.GOLDEN_SWEEP)
    expected = pd.read_csv(golden.golden_dir() / "expected" / "claims.csv")
    assert v == dict(zip(expected["id"], expected["verdict"]))
