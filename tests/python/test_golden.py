"""Golden test: a small real raw sweep (tests/golden/raw/, a smoke run) must give exactly
the processed tables and claim verdicts in tests/golden/expected/. Regenerate on purpose
with `python -m serverbench golden --update` (it prints the diff)."""

import pytest

from serverbench.analysis.claims import golden
from serverbench.analysis.statistics import stats


@pytest.mark.slow
def test_golden_sweep_gives_the_expected_tables_and_verdicts(tmp_path):
    gen = golden.build(tmp_path / "generated")
    diffs = golden.diff(golden.golden_dir() / "expected", gen)
    assert not diffs, (
        "processed tables differ from tests/golden/expected/ (python -m serverbench golden):\n"
        + "\n".join(diffs)[:4000]
    )
    assert (gen / "claims.csv").read_text().count("\n") >= 14  # header + 13 claims


@pytest.mark.slow
def test_golden_comparison_catches_a_perturbed_statistic(tmp_path, monkeypatch):
    """The median's interval 1 % low (its lower order statistic scaled): the summary table
    changes, and the comparison says so, naming that table."""
    real = stats.median_ci

    def low(values, confidence=stats.CONFIDENCE):
        m = real(values, confidence)
        return stats.MedianCI(m.n, m.median, m.lo * 0.99, m.hi, m.level)

    monkeypatch.setattr(stats, "median_ci", low)
    gen = golden.build(tmp_path / "perturbed")
    diffs = golden.diff(golden.golden_dir() / "expected", gen)
    assert diffs and any(d.startswith("--- expected/summary") for d in diffs), diffs[:3]


def test_raw_sweeps_are_judged_from_their_own_logs(tmp_path):
    """The stability command's record: each raw repeat judged from its raw log, into the
    one verdict table across sweeps (a repeat that lost a language differs where it must)."""
    import shutil

    import pandas as pd

    from serverbench.analysis.claims import replication

    raw = golden.golden_dir() / "raw" / golden.GOLDEN_SWEEP
    for name in ("g-r1", "g-r2"):
        shutil.copytree(raw, tmp_path / name)
    log = tmp_path / "g-r2" / "runs.jsonl"
    log.write_text("".join(x for x in log.read_text().splitlines(True) if '"language":"scala_akka"' not in x))
    rec = replication.of_raw_sweeps([tmp_path / "g-r1", tmp_path / "g-r2"])
    assert list(rec.columns) == replication.COLUMNS
    expected = pd.read_csv(golden.golden_dir() / "expected" / "claims.csv")
    assert dict(zip(rec.loc[rec.sweep == "g-r1", "id"], rec.loc[rec.sweep == "g-r1", "verdict"])) == dict(
        zip(expected["id"], expected["verdict"])
    )
    table = replication.by_sweep(rec)
    assert list(table.columns) == ["claim", "g-r1", "g-r2", "agree"]
    differs = table["agree"] == "NO"
    assert differs.any() and (table.loc[differs, "g-r1"] != table.loc[differs, "g-r2"]).all()
    assert (table.loc[~differs, "g-r1"] == table.loc[~differs, "g-r2"]).all()


def _rewrite_floats(folder, change):
    """Apply change(float) to every non-integer number cell of every CSV table in folder."""
    import csv

    for p in folder.glob("*.csv"):
        rows = list(csv.reader(p.read_text(encoding="utf-8").splitlines()))
        for row in rows[1:]:
            for i, cell in enumerate(row):
                try:
                    x = float(cell)
                except ValueError:
                    continue
                if "." in cell and x == x:
                    row[i] = repr(change(x))
        with open(p, "w", encoding="utf-8", newline="") as f:
            csv.writer(f, lineterminator="\n").writerows(rows)


@pytest.mark.slow
def test_golden_comparison_ignores_the_last_bits_of_floats(tmp_path):
    """Another CPU's last bits (1e-13 relative, printed with another repr) are not a change."""
    gen = golden.build(tmp_path / "generated")
    _rewrite_floats(gen, lambda x: x * (1 + 1e-13))
    assert any(
        a != b
        for a, b in zip(
            (golden.golden_dir() / "expected" / "ratios.csv").read_text().splitlines(),
            (gen / "ratios.csv").read_text().splitlines(),
        )
    ), "the rewrite must change the text"
    assert golden.diff(golden.golden_dir() / "expected", gen) == []


@pytest.mark.slow
def test_golden_comparison_names_a_changed_number_text_and_column(tmp_path):
    import csv

    gen = golden.build(tmp_path / "generated")
    _rewrite_floats(gen, lambda x: x * (1 + 1e-6))
    diffs = golden.diff(golden.golden_dir() / "expected", gen)
    assert diffs and all("generated" in d for d in diffs)
    assert any(d.startswith("--- expected/ratios.csv") for d in diffs)

    gen2 = golden.build(tmp_path / "generated2")
    p = gen2 / "claims.csv"
    rows = list(csv.reader(p.read_text(encoding="utf-8").splitlines()))
    col = rows[0].index("verdict")
    rows[1][col] = "supported" if rows[1][col] != "supported" else "contradicted"
    with open(p, "w", encoding="utf-8", newline="") as f:
        csv.writer(f, lineterminator="\n").writerows(rows)
    (gen2 / "summary.csv").write_text(
        (gen2 / "summary.csv").read_text(encoding="utf-8") + (gen2 / "summary.csv").read_text().splitlines()[-1] + "\n",
        encoding="utf-8",
    )
    diffs = golden.diff(golden.golden_dir() / "expected", gen2)
    assert len(diffs) == 2
    assert diffs[0].startswith("--- expected/claims.csv") and "column verdict" in diffs[0]
    assert diffs[1].startswith("--- expected/summary.csv") and "rows:" in diffs[1]


def test_cells_compare_numbers_with_a_tolerance_and_text_exactly():
    assert golden.cells_equal("0.007590990198612106", "0.007590990198612105")
    assert golden.cells_equal("0.27230806980531097", "0.2723080698053109")
    assert not golden.cells_equal("0.27230806", "0.27230807")  # 4e-8 relative
    assert golden.cells_equal("", "") and not golden.cells_equal("", "0.0")
    assert golden.cells_equal("nan", "nan") and not golden.cells_equal("nan", "1.0")
    assert not golden.cells_equal("supported", "Supported")
