"""The warm-up classification (protocol 2, section 8): synthetic rate series of each class,
the rate series from a cumulative sample log, and a run too short to classify."""

import numpy as np
import pytest

from serverbench.analysis.statistics import warmup

pytest.importorskip("ruptures", reason="ruptures is in requirements.lock: scripts/setup.sh installs it")
RULE = warmup.Rule.of_protocol()


def _series(levels, rng, noise=0.01):
    x = np.concatenate([np.full(n, v) for v, n in levels])
    return x * (1 + noise * rng.standard_normal(len(x)))


@pytest.mark.parametrize(
    ("levels", "label"),
    [
        ([(1e6, 60)], warmup.FLAT),
        ([(5e5, 10), (1e6, 50)], warmup.WARMUP),
        ([(1e6, 20), (7e5, 40)], warmup.SLOWDOWN),
        ([(1e6, 52), (6e5, 8)], warmup.NO_STEADY),
        ([(1e6, 20), (1.02e6, 40)], warmup.FLAT),  # a 2 % step is one level (equivalent_share 5 %)
        ([(5e5, 10), (1.2e6, 20), (1e6, 30)], warmup.SLOWDOWN),  # warmed up, then fell below its best
    ],
)
def test_each_class(levels, label):
    c = warmup.classify(_series(levels, np.random.default_rng(7)), RULE)
    assert c.label == label, c


def test_the_steady_state_is_the_last_segment():
    c = warmup.classify(_series([(5e5, 15), (1e6, 45)], np.random.default_rng(1)), RULE)
    assert c.changepoints == (15,)
    assert c.steady_share == pytest.approx(45 / 60)
    assert c.steady_over_whole == pytest.approx(1e6 / ((5e5 * 15 + 1e6 * 45) / 60), rel=0.01)


def test_rates_from_cumulative_samples():
    samples = [[0.5, 50], [1.5, 250], [2.0, 350], [3.2, 600]]
    x = warmup.rates(samples, elapsed_s=3.2, window_s=1.0)
    assert x == pytest.approx([150.0, 200.0, 350.0 + 250.0 / 1.2 - 350.0])  # linear between samples, from (0, 0)


def test_a_short_run_is_not_classified():
    samples = [[0.1 * (i + 1), 1000 * (i + 1)] for i in range(10)]  # the quick profile's 1 s run
    c = warmup.classify_run({"samples": samples, "elapsed_s": 1.0}, {"report_every": 100})
    assert c.label == warmup.TOO_SHORT


def _run(trial, rates_per_s, **kw):
    t, total, samples = 0.0, 0.0, []
    for r in rates_per_s:  # one sample every 0.5 s
        for _ in range(2):
            t += 0.5
            total += r * 0.5
            samples.append([t, total])
    rec = {
        "benchmark": "throughput",
        "language": "scala_akka",
        "cores": 1,
        "config_id": "throughput/scala_akka/c1/pairs=64",
        "trial": trial,
        "status": "ok",
        "warmup": False,
        "params": {"pairs": 64, "report_every": 10},
        "metrics": {"samples": samples, "elapsed_s": t},
    }
    rec.update(kw)
    return rec


def test_a_sweeps_selected_runs_and_each_class_share(tmp_path):
    import json

    from serverbench.benchmarks.throughput import warmup as section

    rng = np.random.default_rng(4)
    flat = list(1e6 * (1 + 0.01 * rng.standard_normal(40)))
    warm = list(np.r_[np.full(8, 4e5), np.full(32, 1e6)] * (1 + 0.01 * rng.standard_normal(40)))
    recs = [
        _run(1, warm, status="ok", interfered=True),  # replaced by its re-run below
        _run(1, flat),
        _run(2, warm),
        _run(3, flat, warmup=True),  # a warm-up run: never classified
        _run(4, flat, status="crashed"),
    ]
    d = tmp_path / "paper-throughput-1core-x"
    d.mkdir()
    (d / "runs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in recs))
    runs = section.classify_sweep(d)
    assert sorted(zip(runs["trial"], runs["label"])) == [(1, warmup.FLAT), (2, warmup.WARMUP)]
    t = section.shares(runs)
    assert t.loc[0, "runs"] == 2 and t.loc[0, "flat"] == "50%" and t.loc[0, "warm-up"] == "50%"


def test_the_running_sum_cost_is_ruptures_least_squares_cost():
    """The cost PELT is given (running sums, O(1) a segment) equals ruptures' own CostL2 on
    every segment of series at the committed runs' scale (rates up to ~1e7 a minute, one
    level shift), and PELT finds the same change points with either."""
    import ruptures
    from ruptures.costs import CostL2

    rng = np.random.default_rng(7)
    for scale in (1.0, 1e4, 1e7):
        x = np.concatenate([rng.normal(1.0, 0.05, 40), rng.normal(1.3, 0.05, 80)]) * scale
        ours, theirs = warmup._l2_cost().fit(x.reshape(-1, 1)), CostL2().fit(x.reshape(-1, 1))
        for a, b in [(0, 120), (0, 40), (40, 120), (10, 11), (37, 45), (100, 120)]:
            assert ours.error(a, b) == pytest.approx(theirs.error(a, b), rel=1e-9, abs=1e-9 * scale**2)
        pen = 3 * np.log(len(x)) * (0.05 * scale) ** 2
        found = ruptures.Pelt(custom_cost=warmup._l2_cost(), min_size=5, jump=1).fit(x).predict(pen=pen)
        assert found == ruptures.Pelt(model="l2", min_size=5, jump=1).fit(x).predict(pen=pen) == [40, 120]
