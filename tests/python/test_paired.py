"""Paired-by-round ratios (analysis/paired.py): the exact signed-rank null distribution,
the Hodges-Lehmann estimate and interval, when pairing applies, and coverage."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from scipy.stats import wilcoxon

from serverbench.analysis import paired, stats


def _enumerated_pmf(n: int) -> np.ndarray:
    counts = np.zeros(n * (n + 1) // 2 + 1)
    for signs in itertools.product((0, 1), repeat=n):
        counts[sum(r for r, s in zip(range(1, n + 1), signs) if s)] += 1
    return counts / 2**n


@pytest.mark.parametrize("n", range(1, 12))
def test_signed_rank_pmf_equals_enumeration(n):
    assert paired.signed_rank_pmf(n) == pytest.approx(_enumerated_pmf(n), abs=1e-15)


@pytest.mark.parametrize("seed", range(12))
def test_signed_rank_p_values_match_scipy_exact(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(4, 16))
    d = rng.normal(0.3, 1.0, n)
    t = float(np.sum(np.argsort(np.argsort(np.abs(d)))[d > 0] + 1))  # ranks of the positive d
    cdf = np.cumsum(paired.signed_rank_pmf(n))
    p_low, p_high = cdf[int(t)], 1.0 - (cdf[int(t) - 1] if t >= 1 else 0.0)
    ours = min(1.0, 2 * min(p_low, p_high))
    assert ours == pytest.approx(wilcoxon(d, method="exact").pvalue, rel=1e-9)


def test_best_confidence_and_the_level_reported():
    assert paired.max_paired_confidence(5) == pytest.approx(0.9375)
    assert paired.max_paired_confidence(6) == pytest.approx(0.96875)
    rng = np.random.default_rng(3)
    a, b = rng.lognormal(0, 0.2, 6), rng.lognormal(0, 0.2, 6)
    ci = paired.paired_ratio_ci(a, b)
    d = np.log(a) - np.log(b)
    w = [(d[i] + d[j]) / 2 for i in range(6) for j in range(i, 6)]
    assert ci.level == pytest.approx(0.96875)  # 6 pairs: only [min, max] of the Walsh averages reaches 95 %
    assert (ci.lo, ci.ratio, ci.hi) == pytest.approx((np.exp(min(w)), np.exp(np.median(w)), np.exp(max(w))))
    assert paired.paired_ratio_ci(a[:5], b[:5]).level == pytest.approx(0.9375)  # below 95 %, said so
    big = paired.paired_ratio_ci(rng.lognormal(0, 0.2, 20), rng.lognormal(0, 0.2, 20))
    assert 0.95 <= big.level < 0.96 and big.n_num == 20


def test_interval_is_the_set_of_shifts_the_signed_rank_test_keeps():
    rng = np.random.default_rng(5)
    a, b = rng.lognormal(0.5, 0.3, 10), rng.lognormal(0, 0.3, 10)
    ci = paired.paired_ratio_ci(a, b)
    d = np.log(a) - np.log(b)
    alpha = 1 - ci.level
    for theta, inside in ((np.log(ci.lo) - 1e-6, False), (np.log(ci.hi) + 1e-6, False), (np.log(ci.ratio), True)):
        p = wilcoxon(d - theta, method="exact").pvalue
        assert (p > alpha + 1e-12) == inside


def _rows(values, rounds):
    return pd.DataFrame({"trial": rounds, "value": values})


def test_pairing_applies_only_when_every_round_has_both_sides_and_enough_pairs():
    rng = np.random.default_rng(1)
    v = rng.lognormal(0, 0.1, 8)
    ci, why = paired.ratio_by_round(_rows(2 * v, range(1, 9)), _rows(v, range(1, 9)))
    assert paired.kind(ci) == "paired" and why == "" and ci.ratio == pytest.approx(2.0)
    ci, why = paired.ratio_by_round(_rows(2 * v[:7], range(1, 8)), _rows(v, range(1, 9)))
    assert paired.kind(ci) == "unpaired" and "round(s) 8 lack one side" in why and ci.n_num == 7
    ci, why = paired.ratio_by_round(_rows(v[:5], range(1, 6)), _rows(v[3:8], range(1, 6)))
    assert paired.kind(ci) == "unpaired" and why == "5 pair(s) reach at most 93.75%"
    ci, why = paired.ratio_by_round(_rows(v, [1, 1, 2, 3, 4, 5, 6, 7]), _rows(v, range(1, 9)))
    assert paired.kind(ci) == "unpaired" and "twice" in why
    ci, why = paired.ratio_by_round(pd.DataFrame({"value": v}), _rows(v, range(1, 9)))
    assert why == "no round ids"
    # several configurations of 4 rounds each: 12 pairs together
    groups = [(_rows(3 * v[:4] * s, range(1, 5)), _rows(v[4:8] * s, range(1, 5))) for s in (1, 10, 100)]
    ci, why = paired.pooled_ratio_by_round(groups)
    assert paired.kind(ci) == "paired" and ci.strata == 3 and ci.n_num == 12 and why == ""


def _round_slowdown_sets(rng, n, true_ratio, reps):
    """Per round a shared slowdown (half the rounds 1.5x slower for both languages)."""
    for _ in range(reps):
        slow = np.where(rng.random(n) < 0.5, 1.5, 1.0)
        yield true_ratio * slow * rng.lognormal(0, 0.05, n), slow * rng.lognormal(0, 0.05, n)


def test_shared_round_slowdown_paired_interval_is_narrower_and_covers():
    rng = np.random.default_rng(26)
    widths_p, widths_u, covers = [], [], 0
    sets = list(_round_slowdown_sets(rng, 8, 2.0, 200))
    for a, b in sets:
        p, u = paired.paired_ratio_ci(a, b), stats.ratio_ci(a, b)
        widths_p.append(np.log(p.hi / p.lo))
        widths_u.append(np.log(u.hi / u.lo))
        covers += p.lo <= 2.0 <= p.hi
    assert np.median(widths_p) < 0.5 * np.median(widths_u)
    assert covers / len(sets) >= 0.95


NOISE = {
    "lognormal, equal spreads": lambda rng, n: (rng.lognormal(0, 0.3, n), rng.lognormal(0, 0.3, n)),
    "lognormal, unequal spreads (0.1 vs 0.5)": lambda rng, n: (rng.lognormal(0, 0.1, n), rng.lognormal(0, 0.5, n)),
    "bimodal: 20 % of runs slowed by half": lambda rng, n: tuple(
        np.where(rng.random(n) < 0.2, 1.5, 1.0) * rng.lognormal(0, 0.05, n) for _ in range(2)
    ),
    "shared round slowdown 1.5x + lognormal": lambda rng, n: (
        lambda slow: (slow * rng.lognormal(0, 0.2, n), slow * rng.lognormal(0, 0.2, n))
    )(np.where(rng.random(n) < 0.5, 1.5, 1.0)),
}


@pytest.mark.parametrize("noise", list(NOISE))
@pytest.mark.parametrize("n", [6, 10])
def test_paired_coverage_on(noise, n):
    """2,000 simulated sets, true ratio 2.5: the interval covers it at least as often as
    its stated level, within Monte-Carlo error (3 standard errors)."""
    rng = np.random.default_rng(list(NOISE).index(noise) * 100 + n)
    reps, hits, level = 2000, 0, 1.0
    for _ in range(reps):
        a, b = NOISE[noise](rng, n)
        ci = paired.paired_ratio_ci(2.5 * a, b)
        hits += ci.lo <= 2.5 <= ci.hi
        level = min(level, ci.level)
    cov = hits / reps
    print(f"paired coverage, {noise}, {n} pairs: stated {level:.4f} achieved {cov:.4f}")
    assert cov >= level - 3 * np.sqrt(level * (1 - level) / reps)
