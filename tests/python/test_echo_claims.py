"""Claims E1-E4 (echo flood) on synthetic sweeps built from a real committed record, and
the rule for a saturated load generator: a time measured while the load generator was at
its CPU limit is an upper bound, so a decision stands only if it survives that side being
faster."""

from __future__ import annotations

import copy
import json

import numpy as np
import pytest

from serverbench import paths
from serverbench.analysis import stats
from serverbench.analysis.claims import engine
from serverbench.analysis.claims.compare import RatioBelow, RatioWithin
from serverbench.analysis.claims.engine import NO, UNCLEAR, YES, Comparison
from serverbench.analysis.synthetic import processed_from
from serverbench.benchmarks.echo_flood import claims as echo_claims
from serverbench.benchmarks.echo_flood.figures import LOADGEN_LIMIT, per_server, runs

pytestmark = pytest.mark.usefixtures("quiet_machine")

BOUND, FREE = 0.97, 0.5


def _ci(lo, ratio, hi) -> stats.RatioCI:
    return stats.RatioCI(n_num=6, n_den=6, ratio=ratio, lo=lo, hi=hi, level=0.96)


def _cmp(ci, expect) -> Comparison:
    r, why = expect.judge(ci)
    return Comparison("a / b", "N=1, D=32 KiB", expect.text, r, ci, why)


@pytest.mark.parametrize(
    ("ci", "expect", "num", "den", "result"),
    [
        # a / b above the tolerance; b (den) bounded: the true ratio is only larger -> stands
        (_ci(2.7, 3.9, 5.7), RatioWithin(0.5, 2.0), FREE, BOUND, NO),
        # the same with a (num) bounded: a may be faster, the ratio smaller -> unclear
        (_ci(2.7, 3.9, 5.7), RatioWithin(0.5, 2.0), BOUND, FREE, UNCLEAR),
        # "within" can never survive a bounded side
        (_ci(0.9, 1.1, 1.3), RatioWithin(0.5, 2.0), FREE, BOUND, UNCLEAR),
        # go / c below 1.3 with go bounded: go only faster -> stands; with c bounded -> unclear
        (_ci(0.8, 0.95, 1.1), RatioBelow(1.3), BOUND, FREE, YES),
        (_ci(0.8, 0.95, 1.1), RatioBelow(1.3), FREE, BOUND, UNCLEAR),
        # nothing bounded, or no share recorded: unchanged
        (_ci(0.8, 0.95, 1.1), RatioBelow(1.3), FREE, FREE, YES),
        (_ci(2.7, 3.9, 5.7), RatioWithin(0.5, 2.0), None, None, NO),
    ],
)
def test_a_saturated_load_generator_leaves_only_robust_decisions(ci, expect, num, den, result):
    c = echo_claims._loadgen_checked(_cmp(ci, expect), expect, num, den)
    assert c.result == result
    assert c.extra["loadgen_cpu_share_num"] == num and c.extra["loadgen_cpu_share_den"] == den
    if result == UNCLEAR:
        assert "load generator ran at 97%" in c.why and f"{LOADGEN_LIMIT:.0%}" in c.why


def _template() -> dict:
    for line in (paths.repo_root() / "data" / "raw" / "stab-r1" / "runs.jsonl").open(encoding="utf-8"):
        r = json.loads(line)
        if r["benchmark"] == "echo_flood" and r["status"] == "ok" and r["params"].get("mode") == "flood":
            return r
    raise AssertionError("the committed stab-r1 sweep has no ok echo_flood flood run")


def _sweep(times: dict, shares: dict, n=64, d=524288) -> list[dict]:
    """Flood runs: per server a list of trial seconds, and the load generator's CPU share."""
    t = _template()
    out = []
    for s, secs in times.items():
        for i, e in enumerate(secs):
            r = copy.deepcopy(t)
            r.update(sweep_id="synthetic-echo", trial=i + 1, server_language=s)
            r["params"].update(connections=n, bytes_per_connection=d)
            r["config_id"] = f"echo_flood/c/fair/c1/bytes_per_connection={d},connections={n}/server_language={s}"
            r["metrics"].update(elapsed_s=e, client_cpu_share=shares[s])
            r["server"]["language"] = s
            out.append(r)
    return out


def _rng_times(rng, center, k=6):
    return list(center * (1 + 0.01 * rng.standard_normal(k)))


def test_e4_go_nearly_as_fast_as_c_unless_the_c_time_is_only_a_bound(tmp_path):
    rng = np.random.default_rng(7)
    times = {"go": _rng_times(rng, 1.1), "c": _rng_times(rng, 1.0)}
    free = processed_from(_sweep(times, {"go": 0.6, "c": 0.6}), tmp_path / "free")
    v = engine.check(free, "E4")
    assert v.verdict == engine.SUPPORTED, v.why
    bound = processed_from(_sweep(times, {"go": 0.6, "c": 0.95}), tmp_path / "bound")
    v = engine.check(bound, "E4")
    assert v.verdict == engine.INCONCLUSIVE
    assert "load generator ran at 95%" in v.why or "load generator" in " ".join(v.evidence["why"])


def test_e2_slow_servers_against_a_bounded_c_still_decide(tmp_path):
    rng = np.random.default_rng(8)
    times = {"c": _rng_times(rng, 1.0), "go": _rng_times(rng, 2.0), "nodejs": _rng_times(rng, 4.0)}
    P = processed_from(_sweep(times, {"c": 0.99, "go": 0.5, "nodejs": 0.3}), tmp_path / "e2")
    v = engine.check(P, "E2")
    assert v.verdict == engine.SUPPORTED, v.why
    ev = v.evidence
    assert list(ev["comparison"]).count("nodejs / c") == 1  # no duplicated row
    assert set(ev["comparison"]) == {"go / c", "nodejs / c", "nodejs / go"}


def test_e2_contradicted_when_nodejs_is_not_the_slowest(tmp_path):
    rng = np.random.default_rng(9)
    times = {"c": _rng_times(rng, 1.0), "go": _rng_times(rng, 5.0), "nodejs": _rng_times(rng, 2.0)}
    P = processed_from(_sweep(times, {"c": 0.5, "go": 0.5, "nodejs": 0.5}), tmp_path / "e2n")
    assert engine.check(P, "E2").verdict == engine.CONTRADICTED


def test_e3_inconclusive_with_too_few_trials(tmp_path):
    times = {"eventlet": [0.9, 0.91], "twisted": [1.0, 1.01]}
    P = processed_from(_sweep(times, {"eventlet": 0.5, "twisted": 0.5}), tmp_path / "e3")
    v = engine.check(P, "E3")
    assert v.verdict == engine.INCONCLUSIVE and "too few trials" in v.why


def test_per_server_marks_load_generator_bound_points(tmp_path):
    rng = np.random.default_rng(10)
    times = {"c": _rng_times(rng, 1.0), "go": _rng_times(rng, 1.2)}
    P = processed_from(_sweep(times, {"c": 0.96, "go": 0.4}), tmp_path / "ps")
    t = per_server(runs(P)).set_index("server_language")
    assert bool(t.loc["c", "loadgen_bound"]) and not bool(t.loc["go", "loadgen_bound"])
    assert t.loc["c", "loadgen_cpu_share"] == pytest.approx(0.96)
