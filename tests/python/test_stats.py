"""serverbench.analysis.statistics.stats (the medians and unpaired ratios of the processed tables,
figures, explorer and audit; the verdicts use analysis/statistics/paired.py): known cases and
coverage on synthetic data."""

import math
from fractions import Fraction
from math import comb

import numpy as np
import pytest

from serverbench.analysis.statistics import stats


def test_order_statistic_indices_known_cases():
    # n = 7 (the paper's trial count): [min, max] covers with 1 - 2/128 = 0.984; k = 2 gives 0.875 < 0.95
    lo, hi, cov = stats.order_statistic_indices(7)
    assert (lo, hi) == (0, 6)
    assert cov == pytest.approx(1 - 2 / 2**7)
    # n = 10: k = 2 -> 1 - 2 * (1 + 10) / 1024 = 0.9785; k = 3 -> 1 - 2 * 56 / 1024 = 0.8906
    lo, hi, cov = stats.order_statistic_indices(10)
    assert (lo, hi) == (1, 8)
    assert cov == pytest.approx(1 - 2 * 11 / 1024)
    # n = 5: even [min, max] only reaches 1 - 2/32 = 0.9375 (benchstat warns below 6 samples)
    lo, hi, cov = stats.order_statistic_indices(5)
    assert (lo, hi, round(cov, 4)) == (0, 4, 0.9375)
    assert stats.order_statistic_indices(1) == (0, 0, 0.0)


@pytest.mark.parametrize("n", range(2, 60))
def test_order_statistic_coverage_is_exact_binomial(n):
    lo, hi, cov = stats.order_statistic_indices(n)
    # P(x_(lo+1) <= m <= x_(hi+1)) = sum_{i=lo+1}^{hi} C(n, i) / 2^n
    exact = sum(comb(n, i) for i in range(lo + 1, hi + 1)) / 2**n
    assert cov == pytest.approx(exact)
    if n >= 6:
        assert cov >= 0.95
        # narrowest: moving one step inwards would fall below 95%
        if lo + 1 <= hi - 1:
            inner = sum(comb(n, i) for i in range(lo + 2, hi)) / 2**n
            assert inner < 0.95


def test_median_ci_values():
    ci = stats.median_ci([5.0, 1.0, 3.0, 2.0, 4.0, 7.0, 6.0])
    assert (ci.n, ci.median, ci.lo, ci.hi) == (7, 4.0, 1.0, 7.0)
    ci = stats.median_ci([3.0, None, float("nan"), 1.0])
    assert ci.n == 2 and ci.median == 2.0
    empty = stats.median_ci([])
    assert empty.n == 0 and np.isnan(empty.median)


@pytest.mark.parametrize("n", [6, 7, 10, 20])
@pytest.mark.parametrize("dist", ["lognormal", "exponential", "uniform"])
def test_median_ci_coverage_on_synthetic_data(n, dist):
    samplers = {
        "lognormal": (lambda rng, size: rng.lognormal(0.0, 0.5, size), 1.0),
        "exponential": (lambda rng, size: rng.exponential(2.0, size), 2.0 * np.log(2)),
        "uniform": (lambda rng, size: rng.uniform(3.0, 5.0, size), 4.0),
    }
    sampler, true_median = samplers[dist]
    x = np.sort(sampler(np.random.default_rng(11), (4000, n)), axis=1)
    lo_i, hi_i, nominal = stats.order_statistic_indices(n)
    for row in x[:20]:  # the intervals median_ci gives, computed here for all 4,000 at once
        ci = stats.median_ci(row)
        assert (ci.lo, ci.hi, ci.level) == (row[lo_i], row[hi_i], nominal)
    cov = float(np.mean((x[:, lo_i] <= true_median) & (true_median <= x[:, hi_i])))
    # exact for continuous data: observed coverage within Monte-Carlo error of the nominal level
    assert cov >= 0.95 - 0.015
    assert abs(cov - nominal) < 0.02


@pytest.mark.parametrize(
    "n,m", [(0, 3), (1, 1), (1, 6), (6, 1), (2, 3), (3, 2), (3, 3), (4, 4), (3, 7), (6, 4), (5, 5), (7, 8)]
)
def test_mwu_null_pmf_matches_enumeration(n, m):
    """The exact null distribution of U equals counting every assignment of ranks."""
    from itertools import combinations

    counts = np.zeros(n * m + 1)
    for xs in combinations(range(n + m), n):
        # U = #(x > y) pairs: for the x of rank r (0-based, i-th x), r - i y's lie below it
        counts[sum(r - i for i, r in enumerate(xs))] += 1
    assert counts.sum() == comb(n + m, n)
    pmf = stats.mwu_null_pmf(n, m)
    assert pmf.shape == (n * m + 1,)
    assert pmf == pytest.approx(counts / comb(n + m, n), rel=1e-12, abs=0)


def _exact_counts(n, m):
    """U's null counts in Python integers (exact at any size), by the same recursion's
    other form: the largest value is the x's or the y's (slow; a reference only)."""
    f = {(i, 0): [1] for i in range(n + 1)} | {(0, j): [1] for j in range(m + 1)}
    for i in range(1, n + 1):
        for j in range(1, m + 1):
            out = [0] * (i * j + 1)
            for u, c in enumerate(f[(i - 1, j)]):
                out[u + j] += c
            for u, c in enumerate(f[(i, j - 1)]):
                out[u] += c
            f[(i, j)] = out
    return f[(n, m)]


def test_mwu_null_pmf_is_a_symmetric_distribution_with_precise_tails():
    for n, m in [(1, 1), (2, 9), (7, 7), (12, 5), (50, 50)]:
        pmf = stats.mwu_null_pmf(n, m)
        assert math.fsum(pmf) == pytest.approx(1.0, rel=1e-12)
        assert pmf == pytest.approx(pmf[::-1], rel=1e-15, abs=0)
        assert (pmf > 0).all()
        assert pmf[0] == pytest.approx(1 / comb(n + m, n), rel=1e-12)  # one rank order: all x below all y
        assert np.array_equal(pmf, stats.mwu_null_pmf(m, n))
        with pytest.raises(ValueError):  # cached: callers must not change it
            pmf[0] = 1.0
    # beyond 2**53 the counts are floats: every probability, tails of ~1e-13 included, still
    # within 1e-12 relative of the exact integer count
    exact = _exact_counts(20, 25)
    total = comb(45, 20)
    assert stats.mwu_null_pmf(20, 25) == pytest.approx([Fraction(c, total) for c in exact], rel=1e-12, abs=0)
    with pytest.raises(ValueError):
        stats.mwu_null_pmf(-1, 3)


def _p_values(x, y):
    """Exact two-sided, 'greater' and 'less' p-values of U = #(x > y) from mwu_null_pmf."""
    u = int(sum((xi > yj) for xi in x for yj in y))
    pmf = stats.mwu_null_pmf(len(x), len(y))
    le, ge = math.fsum(pmf[: u + 1]), math.fsum(pmf[u:])
    return min(1.0, 2 * min(le, ge)), ge, le


def _samples_with_u(n, m, u, rng):
    """x (n values) and y (m values), no ties, with exactly u pairs x_i > y_j."""
    y = np.arange(m, dtype=float)
    below = [min(m, max(0, u - m * i)) for i in range(n)]  # y's under each x; sums to u
    x = np.array([k - 0.5 + 0.01 * i for i, k in enumerate(below)])
    return rng.permutation(x), rng.permutation(y)


@pytest.mark.slow
@pytest.mark.parametrize("n,m", [(1, 4), (3, 3), (5, 5), (6, 9), (11, 4), (12, 12), (20, 17)])
def test_mwu_null_pmf_gives_scipys_exact_p_values(n, m):
    """p-values from the pmf equal scipy.stats.mannwhitneyu(method="exact") (public API):
    for samples realising every value of U, the extreme tails included, and random ones."""
    from scipy.stats import mannwhitneyu

    rng = np.random.default_rng(100 * n + m)
    cases = [_samples_with_u(n, m, u, rng) for u in range(n * m + 1)]
    cases += [(rng.normal(shift, 1.0, n), rng.normal(0.0, 1.0, m)) for shift in (0.0, 0.7, -1.5, 4.0)]
    for x, y in cases:
        assert len(set(x) | set(y)) == n + m  # no ties
        two, greater, less = _p_values(x, y)
        for alternative, mine in (("two-sided", two), ("greater", greater), ("less", less)):
            theirs = mannwhitneyu(x, y, alternative=alternative, method="exact").pvalue
            assert mine == pytest.approx(theirs, rel=1e-9, abs=0), (alternative, x, y)


def test_max_confidence():
    assert stats.max_confidence(3, 3) == pytest.approx(0.90)
    assert stats.max_confidence(5, 5) == pytest.approx(1 - 2 / 252)
    assert stats.max_confidence(4, 4) > 0.95 > stats.max_confidence(3, 4)
    assert stats.max_confidence(0, 5) == 0.0


def test_ratio_ci_known_case_and_levels():
    a, b = [2.0, 2.1, 2.2], [1.0, 1.1, 0.9]
    ci = stats.ratio_ci(a, b)
    # 9 pairwise log ratios; 3 vs 3 cannot reach 95 %: the widest interval, [min, max], at 90 %
    r = sorted(np.log(x) - np.log(y) for x in a for y in b)
    assert ci.ratio == pytest.approx(np.exp(np.median(r)))
    assert (ci.lo, ci.hi) == pytest.approx((np.exp(r[0]), np.exp(r[-1])))
    assert ci.level == pytest.approx(0.90)
    ci5 = stats.ratio_ci([2, 2.1, 2.2, 2.3, 2.0], [1, 1.1, 0.9, 1.0, 1.05])
    assert ci5.level >= 0.95 and ci5.lo < ci5.ratio < ci5.hi
    assert stats.ratio_ci([], [1.0]).level == 0.0 and np.isnan(stats.ratio_ci([], [1.0]).ratio)
    assert stats.ratio_ci([1.0, 0.0, None, float("nan")], [1.0]).n_num == 1  # only positive finite values
    assert stats.ratio_ci(a, b).scaled(2.0).ratio == pytest.approx(ci.ratio / 2)


def test_ratio_interval_agrees_with_scipys_exact_test():
    """A log shift just outside the interval is rejected by scipy's exact Mann-Whitney test
    at 1 - level; one just inside is not (the interval is the test inverted)."""
    from scipy.stats import mannwhitneyu

    rng = np.random.default_rng(3)
    for n, m in ((5, 5), (6, 7), (8, 5)):
        x, y = rng.lognormal(0.3, 0.4, n), rng.lognormal(0.0, 0.4, m)
        ci = stats.ratio_ci(x, y)
        lx, ly = np.log(x), np.log(y)
        alpha = 1 - ci.level
        for edge, outside in ((np.log(ci.lo), -1e-9), (np.log(ci.hi), 1e-9)):
            p_out = mannwhitneyu(lx - (edge + outside), ly, method="exact").pvalue
            p_in = mannwhitneyu(lx - (edge - outside), ly, method="exact").pvalue
            assert p_out <= alpha + 1e-9 < p_in + 1e-9


# Skewed and heavy-tailed noise; a sample is (true value) * noise, so the ratio of two
# languages' samples is a known constant times a ratio of identically distributed noise.
NOISE = {
    "lognormal(0, 0.5)": lambda rng, size: rng.lognormal(0.0, 0.5, size),
    "1 + exponential": lambda rng, size: 1.0 + rng.exponential(1.0, size),
    "1 + Pareto(1.5), heavy tail": lambda rng, size: 1.0 + rng.pareto(1.5, size),
    "exp(Student t, 2 dof)": lambda rng, size: np.exp(0.2 * rng.standard_t(2, size)),
}
SIZES = [(3, 3), (5, 5), (7, 7), (5, 9), (10, 10)]
COVERAGE_REPS = 5000


def _ratio_ci_coverage(sampler, true_ratio, n, m, seed, reps=COVERAGE_REPS) -> tuple[float, float]:
    """(share of ratio_ci intervals covering true_ratio, the least level they state) over
    reps simulated pairs den ~ sampler, num = true_ratio * sampler."""
    rng = np.random.default_rng(seed)
    hit, level = 0, 1.0
    for _ in range(reps):
        den = sampler(rng, m)
        ci = stats.ratio_ci(true_ratio * sampler(rng, n), den)
        hit += ci.lo <= true_ratio <= ci.hi
        level = min(level, ci.level)
    return hit / reps, level


@pytest.mark.slow
@pytest.mark.parametrize("noise", list(NOISE))
def test_ratio_ci_coverage_on_synthetic_data(noise):
    """Thousands of simulated pairs with a known ratio (2.5): the share of intervals that
    cover it is at least the level they state, within Monte-Carlo error (3 standard errors:
    an exact method's coverage equals its level, so a simulation scatters around it); over
    all sample sizes whose stated level is >= 95 %, the achieved coverage is >= 95 %
    (docs/statistics.md quotes the printed table)."""
    print(f"\nratio_ci coverage, noise {noise}, true ratio 2.5, {COVERAGE_REPS} simulated pairs each")
    decisive = []
    for n, m in SIZES:
        cov, level = _ratio_ci_coverage(NOISE[noise], 2.5, n, m, seed=list(NOISE).index(noise) * 10_000 + n * 100 + m)
        se = np.sqrt(level * (1 - level) / COVERAGE_REPS)
        print(f"  {n:>2} vs {m:<2} stated {level:.4f}  achieved {cov:.4f}")
        assert cov >= level - 3 * se
        if level >= 0.95:
            decisive.append(cov)
    assert np.mean(decisive) >= 0.95
