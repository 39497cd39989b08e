"""recovery's analysis: relative throughput, restart latencies, supervision's
cost, the section's statements, on processed runs built here (no native program)."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from serverbench.analysis.reading import registry
from serverbench.benchmarks.recovery import figures as R
from serverbench.benchmarks.recovery import report as RR


class FakeProcessed:
    def __init__(self, runs: pd.DataFrame):
        self.runs = runs
        self.info = {"tables": ["recovery"]}


def _run(lang, rate, per_s, lats=(), table="recovery", fault="worker", trial=1):
    return {
        "table": table,
        "benchmark": table,
        "language": lang,
        "variant": "fair",
        "fault": fault,
        "cores": 2,
        "pairs": 2,
        "message_bytes": 500,
        "duration_s": 1.0,
        "crashes_per_s": rate,
        "exchanges_per_s": per_s,
        "steady_msgs_per_min": 60 * per_s,
        "exchanges_lost": 10 * (rate or 0),
        "restart_latency_s": json.dumps(list(lats)),  # as runs.csv holds a list
        "payload": "copy",
        "selected": True,
        "warmup": False,
        "is_ok": True,
        "trial": trial,
    }


@pytest.fixture
def P():
    rows = []
    for t in range(1, 6):
        for lang, base, lat in (("go", 1000.0, 10e-6), ("erlang", 500.0, 100e-6)):
            rows.append(_run(lang, 0, base + t, trial=t))
            rows.append(_run(lang, 10, (base + t) * (0.95 if lang == "go" else 0.8), [lat * (1 + t / 10)] * 4, trial=t))
            rows.append(_run(lang, 100, (base + t) * (0.9 if lang == "go" else 0.5), [lat * 2] * 4, trial=t))
            rows.append(_run(lang, None, (base + t) * 1.25, table="throughput", trial=t))
    rows.append({**_run("go", 0, 1.0), "is_ok": False})  # an invalid run is left out
    return FakeProcessed(pd.DataFrame(rows))


def test_relative_throughput_is_the_ratio_to_lambda_zero(P):
    rel = R.relative_throughput(P).set_index(["language", "crashes_per_s"])
    assert rel.loc[("go", 10), "ratio"] == pytest.approx(0.95, rel=1e-3)
    assert rel.loc[("erlang", 100), "ratio"] == pytest.approx(0.5, rel=1e-3)
    assert (rel["lo"] <= rel["ratio"]).all() and (rel["ratio"] <= rel["hi"]).all()
    assert set(rel["n"]) == {5} and set(rel["n_base"]) == {5}


def test_every_restart_latency_is_kept_and_summarised(P):
    lat = R.latencies(R.runs(P))
    assert len(lat) == 2 * 2 * 5 * 4
    s = R.latency_summary(P).set_index("language")
    assert s.loc["go", "restarts"] == 40 and s.loc["go", "median_us"] < s.loc["erlang", "median_us"]
    assert s.loc["go", "lo_us"] <= s.loc["go", "median_us"] <= s.loc["go", "hi_us"]


def test_supervision_overhead_against_throughput(P):
    sup = R.supervision_overhead(P).set_index("language")
    assert sup.loc["go", "ratio"] == pytest.approx(0.8, rel=1e-3)


def test_first_rate_losing_ten_percent(P):
    assert R.first_loss(R.relative_throughput(P)) == (10.0, "erlang")
    assert R.first_loss(R.relative_throughput(P), loss=0.4) == (None, None)


def test_section_states_fastest_and_least_loss(P):
    blocks = RR.section(P)
    text = "\n".join(b for b in blocks if isinstance(b, str))
    assert "Lowest median restart latency: **go**" in text and "do not overlap" in text
    assert "lambda = 100 crashes/s" in text and "least throughput lost: **go**" in text
    assert "lambda = 10/s (erlang)" in text
    assert {b.name for b in blocks if isinstance(b, registry.FigureRef)} == {
        "fig_recovery_latency",
        "fig_recovery_throughput",
    }


def test_figures_drawn_and_absent_without_runs(P):
    assert R.fig_recovery_throughput(P) is not None and R.fig_recovery_latency(P) is not None
    empty = FakeProcessed(pd.DataFrame(columns=["table"]))
    assert R.fig_recovery_throughput(empty) is None and R.fig_recovery_latency(empty) is None
    assert RR.section(empty) == []
