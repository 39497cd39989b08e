"""The dimensioning analysis (analysis/reporting/dimension.py) on synthetic sweeps whose answers are
known: a runtime that warms up for 8 s, one that is steady from the start, a ratio that
stays put as R grows and one that moves."""

from __future__ import annotations

import io

import numpy as np
import pytest

from serverbench import cli
from serverbench.analysis.reading import synthetic
from serverbench.analysis.reporting import dimension

RATE = 100_000.0  # exchanges per second once steady


def _samples(warm_s: float, rate: float = RATE, end_s: float = 60.0, step_s: float = 0.1) -> list[list[float]]:
    """Cumulative exchanges of a run whose rate climbs linearly from half to full over warm_s."""
    t = np.arange(step_s, end_s + 1e-9, step_s)
    r = np.where(t < warm_s, rate * (0.5 + 0.5 * t / max(warm_s, 1e-9)), rate)
    cum = np.cumsum(r * step_s)
    out = [[float(a), float(b)] for a, b in zip(t, cum)]
    return out + [[end_s + 0.01, out[-1][1] + 7]]  # the final exact sample: remainders added at once


def _throughput(lang: str, warm_s: float, trials: int = 3) -> list[dict]:
    return [
        synthetic.raw_record(
            "throughput",
            lang,
            {"pairs": 2, "duration_s": 60.0},
            {"paper_msgs_per_min": RATE * 60, "samples": _samples(warm_s)},
            cores=2,
            trial=i,
        )
        for i in range(1, trials + 1)
    ]


@pytest.fixture
def sweep(tmp_path):
    recs = _throughput("scala_akka", warm_s=8.0) + _throughput("go", warm_s=0.0)
    for i in range(1, 4):
        for reps in (1000, 100_000):
            # Akka: 4 us a message at small R (start-up), 2 us at large R: the ratio moves
            for lang, per in (("go", 1e-6), ("scala_akka", 4e-6 if reps == 1000 else 2e-6)):
                params = {"message_bytes": 5000, "repetitions": reps}
                recs.append(synthetic.raw_record("pingping", lang, params, {"elapsed_s": reps * per}, trial=i))
    return synthetic.write_sweep(tmp_path / "raw" / "dimension-1", recs)


def test_a_warm_up_shows_in_the_shorter_runs_and_the_steady_point(sweep):
    d = dimension.throughput_lengths(sweep).set_index(["language", "trial"])
    akka, go = d.loc["scala_akka"], d.loc["go"]
    assert np.allclose(go["reference_rate_per_s"], RATE, rtol=1e-3)
    assert (go["steady_from_s"] == 0).all() and (go["within_run_cv"] < 1e-6).all()
    assert np.allclose(go[[c for c in d.columns if c.startswith("ratio_")]], 1.0, atol=1e-3)
    # warm-up over the first 8 s: a 2 s run's second half is at ~half rate, 10 s short of it,
    # 20 s ([10, 20] s) steady; every 5 s block from 10 s on is within 5 %
    assert (akka["ratio_2s_to_60s"] < 0.7).all() and (akka["ratio_10s_to_60s"] < 0.98).all()
    assert np.allclose(akka["ratio_20s_to_60s"], 1.0, atol=1e-3)
    assert (akka["steady_from_s"] == 10).all()


def test_windows_are_one_second_rates(sweep):
    w = dimension.throughput_windows(sweep)
    go = w[w["language"].eq("go")]
    assert go.groupby("trial").size().eq(60).all()
    assert np.allclose(go["rate_per_s"], RATE, rtol=1e-3)


def test_scaling_tells_a_moving_ratio_from_a_steady_one(sweep):
    s = dimension.scaling(sweep).set_index(["benchmark", "language", "size"])
    assert s.loc[("pingping", "go", 1000), "median_per_unit_s"] == pytest.approx(1e-6)
    assert s.loc[("pingping", "go", 1000), "ratio_to_akka"] == pytest.approx(0.25)
    assert s.loc[("pingping", "go", 100_000), "ratio_to_akka"] == pytest.approx(0.5)
    assert s.loc[("pingping", "go", 1000), "rounds"] == 3


def test_write_gives_tables_and_the_figure(sweep, tmp_path):
    (tmp_path / "processed").mkdir()
    written = dimension.write(
        sweep, out_dir=tmp_path / "out", figures_dir=tmp_path / "fig", processed_dir=tmp_path / "processed"
    )
    assert {"dimension_throughput", "dimension_scaling", "dimension_levels", "figure.png", "figure.pdf"} <= set(written)
    assert (tmp_path / "fig" / "dimensioning.png").stat().st_size > 10_000


def test_an_unknown_sweep_is_a_clear_usage_error():
    out, err = io.StringIO(), io.StringIO()
    rc = cli.run(["dimension", "no-such-sweep-here"], stdout=out, stderr=err)
    assert rc == 2 and "no raw sweep no-such-sweep-here" in err.getvalue() and not out.getvalue()


def test_the_dimension_profiles_render_writes_its_tables(sweep, tmp_path, monkeypatch):
    """`./run_all.sh --profile dimension` renders through `serverbench notebooks`; the tables
    that docs/dimensioning.md is generated from must come out of it, not only out of
    `serverbench dimension`."""
    import nbformat
    import papermill

    monkeypatch.setenv("SERVERBENCH_DATA", str(tmp_path))  # the fixture's sweep is tmp_path/raw/dimension-1

    def execute(src, out, **kw):
        nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# Report")]), out)

    monkeypatch.setattr(papermill, "execute_notebook", execute)
    paper = tmp_path / "paper"
    argv = ["notebooks", "--no-run", "--no-pdf", "--profile", "dimension", "--sweep-id", "dimension-1"]
    out, err = io.StringIO(), io.StringIO()
    assert cli.run([*argv, "--paper-dir", str(paper)], out, err) == 0, err.getvalue()
    tables = tmp_path / "processed" / "dimension-1"
    assert (tables / "dimension_throughput.csv").stat().st_size > 0 and (tables / "dimension_scaling.csv").exists()
    assert (paper / "figures" / "dimensioning.png").exists()
    assert dimension.latest(tmp_path / "processed") == tables
