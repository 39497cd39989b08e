"""Claims E1-E4 (echo flood) on synthetic sweeps built from a real committed record, and
the rule for a saturated load generator: a time measured while the load generator was at
its CPU limit is an upper bound, so a decision stands only if it survives that side being
faster."""

from __future__ import annotations

import copy
import json

import numpy as np
import pytest

from serverbench import paths, protocol
from serverbench.analysis.claims import engine
from serverbench.analysis.claims.compare import judge
from serverbench.analysis.claims.engine import NO, UNCLEAR, YES, Comparison
from serverbench.analysis.reading.synthetic import processed_from
from serverbench.analysis.statistics.stats import RatioCI
from serverbench.benchmarks.echo_flood import claims as echo_claims
from serverbench.benchmarks.echo_flood.figures import LOADGEN_LIMIT, per_server, runs

BOUND, FREE = 0.97, 0.5
R = protocol.rounds_deciding()
SIMILAR, NOT_HIGHER = protocol.region("E1"), protocol.region("E4")  # [0.8, 1.25]; <= 1.25


def _ci(lo, ratio, hi) -> RatioCI:
    return RatioCI(n_num=R, n_den=R, ratio=ratio, lo=lo, hi=hi, level=0.92)


def _cmp(ci, region) -> Comparison:
    r, why = judge(region, ci, protocol.level())
    return Comparison("a / b", "N=1, D=32 KiB", region.text(), r, ci, why, rejudge=lambda at: (r, ci))


@pytest.mark.parametrize(
    ("ci", "region", "num", "den", "result"),
    [
        # a / b above 'similar' (no from 1.5625); b (den) bounded: the true ratio is only larger -> stands
        (_ci(2.7, 3.9, 5.7), SIMILAR, FREE, BOUND, NO),
        # the same with a (num) bounded: a may be faster, the ratio smaller -> unclear
        (_ci(2.7, 3.9, 5.7), SIMILAR, BOUND, FREE, UNCLEAR),
        # 'similar' can never survive a bounded side
        (_ci(0.9, 1.05, 1.2), SIMILAR, FREE, BOUND, UNCLEAR),
        (_ci(0.9, 1.05, 1.2), SIMILAR, BOUND, FREE, UNCLEAR),
        # go / c not higher with go bounded: go only faster -> stands; with c bounded -> unclear
        (_ci(0.8, 0.95, 1.1), NOT_HIGHER, BOUND, FREE, YES),
        (_ci(0.8, 0.95, 1.1), NOT_HIGHER, FREE, BOUND, UNCLEAR),
        # nothing bounded, or no share recorded: unchanged
        (_ci(0.8, 0.95, 1.1), NOT_HIGHER, FREE, FREE, YES),
        (_ci(2.7, 3.9, 5.7), SIMILAR, None, None, NO),
    ],
)
def test_a_saturated_load_generator_leaves_only_robust_decisions(ci, region, num, den, result):
    c = echo_claims._loadgen_checked(_cmp(ci, region), region, num, den)
    assert c.result == result
    assert c.extra["loadgen_cpu_share_num"] == num and c.extra["loadgen_cpu_share_den"] == den
    if result == UNCLEAR:
        assert "load generator ran at 97%" in c.why and f"{LOADGEN_LIMIT:.0%}" in c.why
        assert c.rejudge is None  # no longer in Holm's family
    else:
        assert c.rejudge is not None


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


def _rng_times(rng, center, k=R):
    return list(center * (1 + 0.01 * rng.standard_normal(k)))


def test_e4_go_nearly_as_fast_as_c_unless_the_c_time_is_only_a_bound(tmp_path):
    rng = np.random.default_rng(7)
    times = {"go": _rng_times(rng, 1.1), "c": _rng_times(rng, 1.0)}
    free = processed_from(_sweep(times, {"go": 0.6, "c": 0.6}), tmp_path / "free")
    v = engine.check(free, "E4")
    assert v.verdict == engine.SUPPORTED, v.why
    assert "not the claim's 32,768" in v.evidence["note"].iloc[0]  # the sweep's N is 64
    bound = processed_from(_sweep(times, {"go": 0.6, "c": 0.95}), tmp_path / "bound")
    v = engine.check(bound, "E4")
    assert v.verdict == engine.INCONCLUSIVE and "the load generator ran at 95%" in v.why, v.why
    slow = {"go": _rng_times(rng, 2.0), "c": _rng_times(rng, 1.0)}
    v = engine.check(processed_from(_sweep(slow, {"go": 0.6, "c": 0.6}), tmp_path / "slow"), "E4")
    assert v.verdict == engine.CONTRADICTED  # Go 2x slower: not nearly as fast (no from 1.5625)


E2_N = protocol.claim("E2")["min_connections"]  # 16,384


def test_e2_slow_servers_against_a_bounded_c_still_decide(tmp_path):
    """C as the numerator is bounded: its true time, and so each c / s ratio, is only
    smaller, so 'lower' stands."""
    rng = np.random.default_rng(8)
    centre = {"c": 1.0, "twisted": 2.0, "eventlet": 1.8, "nodejs": 4.0}
    times = {s: _rng_times(rng, t) for s, t in centre.items()}
    shares = {"c": 0.99, "twisted": 0.5, "eventlet": 0.5, "nodejs": 0.3}
    v = engine.check(processed_from(_sweep(times, shares, n=E2_N), tmp_path / "e2"), "E2")
    assert v.verdict == engine.SUPPORTED, v.why
    assert sorted(v.evidence["comparison"]) == sorted(
        ["c / nodejs", "c / twisted", "c / eventlet", "twisted / nodejs", "eventlet / nodejs"]
    )  # each pair once


def test_e2_contradicted_when_nodejs_is_not_the_slowest(tmp_path):
    rng = np.random.default_rng(9)
    centre = {"c": 1.0, "twisted": 5.0, "eventlet": 1.8, "nodejs": 2.0}
    times = {s: _rng_times(rng, t) for s, t in centre.items()}
    v = engine.check(processed_from(_sweep(times, dict.fromkeys(centre, 0.5), n=E2_N), tmp_path / "e2n"), "E2")
    assert v.verdict == engine.CONTRADICTED
    assert v.evidence.set_index("comparison").loc["twisted / nodejs", "result"] == NO


def test_e2_is_not_testable_below_the_n_where_the_source_saw_it(tmp_path):
    rng = np.random.default_rng(10)
    times = {s: _rng_times(rng, t) for s, t in {"c": 1.0, "twisted": 2.0, "eventlet": 1.8, "nodejs": 4.0}.items()}
    v = engine.check(processed_from(_sweep(times, dict.fromkeys(times, 0.5), n=1024), tmp_path / "small"), "E2")
    assert v.verdict == engine.NOT_TESTABLE and "slowest only from 16,384 connections" in v.why, v.why


@pytest.mark.parametrize(
    ("eventlet", "rounds", "verdict", "why"),
    [
        (0.9, R, engine.SUPPORTED, ""),  # 10 % faster: slightly
        (1.1, R, engine.INCONCLUSIVE, "in neither region (slightly lower"),  # 10 % slower: neither
        (1.5, R, engine.CONTRADICTED, ""),  # slower (no from 1.25)
        (0.9, 4, engine.INCONCLUSIVE, "too few rounds (4 pairs reach at most 87.5%)"),
    ],
)
def test_e3_eventlet_slightly_faster_than_twisted(tmp_path, eventlet, rounds, verdict, why):
    rng = np.random.default_rng(11)
    times = {"eventlet": _rng_times(rng, eventlet, rounds), "twisted": _rng_times(rng, 1.0, rounds), "c": [1.0] * R}
    v = engine.check(processed_from(_sweep(times, dict.fromkeys(times, 0.5)), tmp_path), "E3")
    assert v.verdict == verdict and why in v.why, (v.summary, v.why)


def test_per_server_marks_load_generator_bound_points(tmp_path):
    rng = np.random.default_rng(10)
    times = {"c": _rng_times(rng, 1.0), "go": _rng_times(rng, 1.2)}
    P = processed_from(_sweep(times, {"c": 0.96, "go": 0.4}), tmp_path / "ps")
    t = per_server(runs(P)).set_index("server_language")
    assert bool(t.loc["c", "loadgen_bound"]) and not bool(t.loc["go", "loadgen_bound"])
    assert t.loc["c", "loadgen_cpu_share"] == pytest.approx(0.96)
