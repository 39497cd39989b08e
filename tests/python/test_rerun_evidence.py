"""The re-run evidence behind protocol 2's steal rule: pairs of a flagged first attempt and
its re-run read from a raw log, the flag's cause recomputed with the harness's rule."""

import json

import pytest

from serverbench.analysis.statistics import rerun_evidence as re_


def _rec(trial, value, **kw):
    rec = {
        "config_id": "spawn/erlang/fair/c1/processes=10",
        "trial": trial,
        "warmup": False,
        "benchmark": "spawn",
        "status": "ok",
        "metrics": {"all_ready_s": value},
    }
    rec.update(kw)
    return rec


def test_pairs_and_causes(tmp_path):
    d = tmp_path / "quick-x"
    d.mkdir()
    steal = {"interfered": True, "cpu_steal_s": 0.2, "steal_share": 0.2, "other_cpu_s": 0.0, "other_cpu_share": 0.0}
    other = {"interfered": True, "cpu_steal_s": 0.0, "steal_share": 0.0, "other_cpu_s": 0.5, "other_cpu_share": 0.5}
    tiny = {"interfered": True, "cpu_steal_s": 0.01, "steal_share": 0.5, "other_cpu_s": 0.0, "other_cpu_share": 0.0}
    recs = [
        _rec(1, 2.0, **steal),
        _rec(1, 1.0, rerun_of_interfered=True),
        _rec(2, 1.0, **other),
        _rec(2, 2.0, rerun_of_interfered=True),
        _rec(3, 1.0, **tiny),  # one tick of steal: under the harness's MIN_TICKS, an earlier rule's flag
        _rec(3, 1.0, rerun_of_interfered=True),
        _rec(4, 1.0),  # not flagged: no pair
    ]
    (d / "runs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in recs))
    (d / "manifest.json").write_text("{}")
    p = re_.pairs(re_.committed_raw_dirs(tmp_path))
    assert sorted(p["cause"]) == ["neither", "other", "steal"]
    s = re_.summary(p).set_index("cause")
    assert s.loc["steal", "first_over_rerun"] == pytest.approx(2.0)
    assert s.loc["other", "first_over_rerun"] == pytest.approx(0.5)
    assert s.loc["steal", "share_first_slower"] == 1.0


def test_a_rate_is_inverted():
    assert re_._time({"benchmark": "throughput", "metrics": {"exchanges_per_s": 4.0}}) == pytest.approx(0.25)
    assert re_._time({"benchmark": "throughput", "metrics": {"exchanges_per_s": 0}}) is None
