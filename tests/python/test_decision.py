"""Decision regions (claims.decision) by simulation, with the real interval methods:
two sweeps of a comparison whose true ratio sits on a decision boundary (or one
between-sweep sd either side of it) must almost never decide it "yes" in one sweep and
"no" in the other, and the intervals must cover the true ratio with unequal spreads and
with bimodal (20 % of runs slowed by half) noise."""

from __future__ import annotations

import math

import numpy as np
import pytest

from serverbench.analysis import stats
from serverbench.analysis.claims import decision
from serverbench.analysis.claims.compare import RatioBelow, RatioWithin, judged, order_below

N_ROUNDS = 5  # the quick profile's trials per configuration
WITHIN_SD = 0.15  # log sd of one trial (pingping on the 2-core VM: 0.1-0.3)
PAIRS_OF_SWEEPS = 1000


def _sweep(rng, true_log_ratio: float, spread: float, within=WITHIN_SD, n=N_ROUNDS, slow=0.0):
    """One sweep's trials of two languages, by round: a shared round effect, the sweep's own
    shift of the ratio (between-sweep sd `spread`), and optionally a fraction `slow` of runs
    taking 1.5 times as long."""
    shift = rng.normal(0.0, spread)
    rounds = rng.normal(0.0, 0.05, n)
    a = np.exp(true_log_ratio + shift + rounds + rng.normal(0, within, n))
    b = np.exp(rounds + rng.normal(0, within, n))
    if slow:
        a = a * np.where(rng.random(n) < slow, 1.5, 1.0)
        b = b * np.where(rng.random(n) < slow, 1.5, 1.0)
    return {"value": a}, {"value": b}


def _result(expect, a, b) -> str:
    # 5 rounds cannot reach 95 % paired (paired.max_paired_confidence): the quick profile's
    # comparisons are unpaired, as here; by_round would choose the same
    x, y = a["value"], b["value"]
    return judged("a/b", "-", stats.ratio_ci(x, y), expect, lambda lv, _: stats.ratio_ci(x, y, lv)).result


# (trials per sweep, within-sweep log sd): the quick profile's noisy few trials, and precise
# sweeps, where the between-sweep shift dominates (the case a gap is for)
REGIMES = {"quick-like": (N_ROUNDS, WITHIN_SD), "precise": (7, 0.05)}


def _flip_rate(expect, true_log_ratio: float, spread: float, seed: int, regime=(N_ROUNDS, WITHIN_SD)) -> float:
    rng = np.random.default_rng(seed)
    n, within = regime
    flips = 0
    for _ in range(PAIRS_OF_SWEEPS):
        r1 = _result(expect, *_sweep(rng, true_log_ratio, spread, within, n))
        r2 = _result(expect, *_sweep(rng, true_log_ratio, spread, within, n))
        flips += {r1, r2} == {"yes", "no"}
    return flips / PAIRS_OF_SWEEPS


@pytest.mark.parametrize("regime", REGIMES)
@pytest.mark.parametrize("spread", [decision.MIN_SPREAD_LOG, 0.12])
@pytest.mark.parametrize(
    "name, expect, edges",
    [
        # the log-ratio edges of the yes and no regions, as the expectation resolves them
        ("order", order_below, lambda r: (math.log(r.yes_hi), math.log(r.no_above))),
        ("tolerance", lambda: RatioBelow(1.05), lambda r: (math.log(r.yes_hi), math.log(r.no_above))),
        ("similar", lambda: RatioWithin(1 / 1.5, 1.5), lambda r: (math.log(r.yes_hi), math.log(r.no_above))),
    ],
)
@pytest.mark.slow
def test_a_verdict_does_not_flip_between_sweeps_at_the_boundaries(name, expect, edges, spread, regime):
    with decision.using(spread):
        e = expect()
        yes_edge, no_edge = edges(e.resolved())
        assert no_edge - yes_edge >= decision.GAP_SIGMAS * spread - 1e-12  # the gap the module promises
        worst = 0.0
        for k, edge in enumerate((yes_edge, no_edge)):
            for j, d in enumerate((-spread, 0.0, spread)):
                worst = max(worst, _flip_rate(e, edge + d, spread, 100 * k + j, REGIMES[regime]))
    print(f"{name}, {regime}, between-sweep sd {spread}: worst yes<->no flip rate {worst:.2%}")
    assert worst < 0.01


def test_without_the_gap_precise_sweeps_flip(monkeypatch):
    """The simulation can fail: with the no region starting where the yes region ends,
    precise sweeps of a ratio on that edge say "yes" in one sweep and "no" in another often."""
    monkeypatch.setattr(decision, "tolerance_gap_log", lambda *a: 0.0)
    with decision.using(0.12):
        e = RatioBelow(1.05)
        rate = _flip_rate(e, math.log(1.05), 0.12, 1, REGIMES["precise"])
    assert rate > 0.05


def test_a_wider_gap_on_a_noisier_machine():
    with decision.using(0.0):
        quiet = order_below().resolved()
    with decision.using(0.2):
        noisy = order_below().resolved()
    assert quiet.no_above == pytest.approx(1.15) and quiet.yes_hi == pytest.approx(1 / 1.15)
    assert noisy.no_above == pytest.approx(math.exp(0.3)) and noisy.yes_hi == pytest.approx(math.exp(-0.3))


@pytest.mark.parametrize(
    "label, num_sd, den_sd, slow",
    [("equal spreads", 0.2, 0.2, 0.0), ("unequal spreads", 0.08, 0.35, 0.0), ("bimodal", 0.1, 0.1, 0.2)],
)
def test_intervals_cover_the_true_ratio(label, num_sd, den_sd, slow):
    rng = np.random.default_rng(11)
    true, reps, hit, levels = 0.7, 1500, 0, []
    for _ in range(reps):
        a = true * np.exp(rng.normal(0, num_sd, 7))
        b = np.exp(rng.normal(0, den_sd, 7))
        if slow:
            a = a * np.where(rng.random(7) < slow, 1.5, 1.0)
            b = b * np.where(rng.random(7) < slow, 1.5, 1.0)
        ci = stats.ratio_ci(a, b)
        hit += ci.lo <= true <= ci.hi
        levels.append(ci.level)
    coverage, stated = hit / reps, float(np.mean(levels))
    print(f"{label}: coverage {coverage:.3f} at a stated {stated:.3f}")
    # 1,500 replicates: a binomial sd of ~0.5 %. A rank interval assumes both sides' noise has
    # one shape; with log sds 4x apart it covers ~94 % where it states 96 % (measured here,
    # docs/statistics.md "Decision regions"): the allowance is that documented shortfall
    allowance = 0.035 if num_sd != den_sd else 0.015
    assert coverage >= stated - allowance
