"""The one interval of every verdict (analysis/statistics/paired.py): a ratio paired by round, the
Hodges-Lehmann estimate of the per-round log ratios with the exact signed-rank interval;
its null distribution, the level it reports, which rounds pair, and coverage."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from scipy.stats import wilcoxon

from serverbench import protocol
from serverbench.analysis.claims import compare
from serverbench.analysis.statistics import paired, stats

LEVEL = protocol.level()  # 0.90
R = protocol.rounds_deciding()  # 8


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


def _walsh(a, b) -> list[float]:
    d = np.log(a) - np.log(b)
    return sorted((d[i] + d[j]) / 2 for i in range(len(d)) for j in range(i, len(d)))


def test_the_design_interval_and_the_level_it_reports():
    """8 pairs at the protocol's 90 %: the 6th smallest and 6th largest of the 36 Walsh
    averages, coverage 1 - 2 * 10/256 = 92.19 % (the 7th would give 89.1 %)."""
    assert paired.max_paired_confidence(4) == pytest.approx(0.875)
    assert paired.max_paired_confidence(5) == pytest.approx(0.9375)
    assert paired.max_paired_confidence(R) == pytest.approx(1 - 2 / 256)
    assert paired.max_paired_confidence(0) == 0.0
    rng = np.random.default_rng(3)
    a, b = rng.lognormal(0, 0.2, R), rng.lognormal(0, 0.2, R)
    ci = paired.paired_ratio_ci(a, b, LEVEL)
    w = _walsh(a, b)
    assert ci.level == pytest.approx(1 - 2 * 10 / 256)
    assert (ci.lo, ci.ratio, ci.hi) == pytest.approx((np.exp(w[5]), np.exp(np.median(w)), np.exp(w[-6])))
    assert ci.n_num == ci.n_den == R and ci.method == paired.METHOD
    # Holm's strictest level 8 pairs reach: 1 - 2 * 0.05 / 12 = 99.17 % -> [min, max] at 99.22 %
    strict = paired.paired_ratio_ci(a, b, 1 - 2 * 0.05 / 12)
    assert strict.level == pytest.approx(1 - 2 / 256) and (strict.lo, strict.hi) == pytest.approx(
        (np.exp(w[0]), np.exp(w[-1]))
    )
    # a level the pairs cannot reach: the widest interval, at the level it does reach
    four = paired.paired_ratio_ci(a[:4], b[:4], LEVEL)
    assert four.level == pytest.approx(0.875) and (four.lo, four.hi) == pytest.approx(
        (np.exp(min(_walsh(a[:4], b[:4]))), np.exp(max(_walsh(a[:4], b[:4]))))
    )


def test_interval_is_the_set_of_shifts_the_signed_rank_test_keeps():
    rng = np.random.default_rng(5)
    a, b = rng.lognormal(0.5, 0.3, 10), rng.lognormal(0, 0.3, 10)
    for level in (LEVEL, 0.95):
        ci = paired.paired_ratio_ci(a, b, level)
        d = np.log(a) - np.log(b)
        alpha = 1 - ci.level
        for theta, inside in ((np.log(ci.lo) - 1e-6, False), (np.log(ci.hi) + 1e-6, False), (np.log(ci.ratio), True)):
            p = wilcoxon(d - theta, method="exact").pvalue
            assert (p > alpha + 1e-12) == inside


def test_non_positive_or_missing_pairs_are_dropped_and_nothing_left_is_no_interval():
    a = np.array([2.0, 2.2, 0.0, 2.1, np.nan, 1.9])
    b = np.array([1.0, 1.1, 1.0, -1.0, 1.0, 0.95])
    ci = paired.paired_ratio_ci(a, b, 0.5)
    assert ci.n_num == 3 and ci.ratio == pytest.approx(2.0)  # pairs 1, 2, 6 only
    empty = paired.paired_ratio_ci([0.0], [1.0], LEVEL)
    assert empty.n_num == 0 and np.isnan(empty.ratio) and empty.level == 0.0
    with pytest.raises(ValueError, match="differ in length"):
        paired.paired_ratio_ci([1.0, 2.0], [1.0], LEVEL)


def test_a_point_ratio_is_the_sources_numbers():
    p = paired.point_ratio([3.0], [1.5])
    assert (p.ratio, p.lo, p.hi, p.level, p.method) == (2.0, 2.0, 2.0, 1.0, paired.POINT)


def _rows(values, rounds):
    return pd.DataFrame({"trial": list(rounds), "value": list(values)})


def test_pairs_are_the_rounds_both_sides_have():
    """Aligned by round id, not by row order; a round one side lacks is left out; no
    unpaired fallback: sides that cannot be paired say why."""
    v = np.arange(1.0, 9.0)
    a = _rows(2 * v, range(R)).sample(frac=1.0, random_state=1)  # rows shuffled
    x, y = paired.pairs_by_round(a, _rows(v, range(R)))
    assert list(x / y) == [2.0] * R
    x, y = paired.pairs_by_round(_rows(2 * v[:7], range(7)), _rows(v, range(R)))  # round 7 lacks a
    assert len(x) == len(y) == 7 and list(x / y) == [2.0] * 7
    x, y = paired.pairs_by_round(_rows(v, range(2, 10)), _rows(v, range(R)))  # rounds 2-7 in common
    assert list(x) == list(v[:6]) and list(y) == list(v[2:])
    assert paired.pairs_by_round(pd.DataFrame({"value": v}), _rows(v, range(R))) == "no round ids"
    assert paired.pairs_by_round(_rows(v, [1, 1, 2, 3, 4, 5, 6, 7]), _rows(v, range(R))) == "a side has a round twice"
    assert paired.pairs_by_round(_rows(v, range(R)), _rows(v, range(R, 2 * R))) == "no round has both sides"


def test_compare_interval_pairs_by_round_against_a_side_or_a_constant():
    """compare.interval: num/den paired by round (den None: against 1), divided by a known
    factor (C5's N2/N1); compare.per_round: a ratio that is itself one side (E1's growth)."""
    rng = np.random.default_rng(4)
    b = rng.lognormal(0, 0.1, R)
    ci = compare.interval(_rows(3 * b, range(R)), _rows(b, range(R)), LEVEL, divide_by=2.0)
    assert (ci.ratio, ci.lo, ci.hi) == pytest.approx((1.5, 1.5, 1.5))
    alone = compare.interval(_rows(0.25 * b / np.median(b), range(R)), None, LEVEL)
    assert alone.ratio == pytest.approx(0.25, rel=0.05) and alone.level == pytest.approx(1 - 2 * 10 / 256)
    assert compare.interval(_rows(b, range(R)), _rows(b, range(R, 2 * R)), LEVEL) == "no round has both sides"
    g = compare.per_round(_rows(2 * b, range(R)), _rows(b[:5], range(5)))
    assert list(g["trial"]) == list(range(5)) and list(g["value"]) == pytest.approx([2.0] * 5)


def _round_slowdown_sets(rng, n, true_ratio, reps):
    """Per round a shared slowdown (half the rounds 1.5x slower for both languages)."""
    for _ in range(reps):
        slow = np.where(rng.random(n) < 0.5, 1.5, 1.0)
        yield true_ratio * slow * rng.lognormal(0, 0.05, n), slow * rng.lognormal(0, 0.05, n)


def test_shared_round_slowdown_paired_interval_is_narrower_and_covers():
    """Against the unpaired (Mann-Whitney) interval on the same values and level, which
    sees the slow rounds as noise."""
    rng = np.random.default_rng(26)
    widths_p, widths_u, covers = [], [], 0
    sets = list(_round_slowdown_sets(rng, R, 2.0, 200))
    for a, b in sets:
        p, u = paired.paired_ratio_ci(a, b, LEVEL), stats.ratio_ci(a, b, LEVEL)
        widths_p.append(np.log(p.hi / p.lo))
        widths_u.append(np.log(u.hi / u.lo))
        covers += p.lo <= 2.0 <= p.hi
    assert np.median(widths_p) < 0.5 * np.median(widths_u)
    assert covers / len(sets) >= LEVEL


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
@pytest.mark.parametrize("n", [R, 12])
def test_paired_coverage_on(noise, n):
    """2,000 simulated sets, true ratio 2.5, at the protocol's level: the interval covers it
    at least as often as its stated level, within Monte-Carlo error (3 standard errors)."""
    rng = np.random.default_rng(list(NOISE).index(noise) * 100 + n)
    reps, hits, level = 2000, 0, 1.0
    for _ in range(reps):
        a, b = NOISE[noise](rng, n)
        ci = paired.paired_ratio_ci(2.5 * a, b, LEVEL)
        hits += ci.lo <= 2.5 <= ci.hi
        level = min(level, ci.level)
    cov = hits / reps
    print(f"paired coverage, {noise}, {n} pairs: stated {level:.4f} achieved {cov:.4f}")
    assert level >= LEVEL
    assert cov >= level - 3 * np.sqrt(level * (1 - level) / reps)
