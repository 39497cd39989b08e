"""serverbench.analysis.stats: known cases and coverage on synthetic data."""

from math import comb

import numpy as np
import pytest

from serverbench.analysis import stats


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
    cov = stats.median_ci_coverage(sampler, true_median, n, reps=4000, seed=11)
    _, _, nominal = stats.order_statistic_indices(n)
    # exact for continuous data: observed coverage within Monte-Carlo error of the nominal level
    assert cov >= 0.95 - 0.015
    assert abs(cov - nominal) < 0.02


@pytest.mark.parametrize("n,m", [(1, 1), (2, 3), (3, 3), (4, 4), (3, 5), (5, 5)])
def test_mann_whitney_pmf_matches_enumeration(n, m):
    """scipy's exact null distribution of U equals counting every rank assignment."""
    from itertools import combinations

    counts = np.zeros(n * m + 1)
    for xs in combinations(range(n + m), n):
        # U = #(x > y) pairs: for each x rank r, the y's below it
        counts[sum(r - i for i, r in enumerate(sorted(xs)))] += 1
    assert stats.mann_whitney_pmf(n, m) == pytest.approx(counts / comb(n + m, n))


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
        cov, level = stats.ratio_ci_coverage(
            NOISE[noise], 2.5, n, m, reps=COVERAGE_REPS, seed=list(NOISE).index(noise) * 10_000 + n * 100 + m
        )
        se = np.sqrt(level * (1 - level) / COVERAGE_REPS)
        print(f"  {n:>2} vs {m:<2} stated {level:.4f}  achieved {cov:.4f}")
        assert cov >= level - 3 * se
        if level >= 0.95:
            decisive.append(cov)
    assert np.mean(decisive) >= 0.95


def test_pooled_ratio_ci_coverage():
    """Several configurations with different scales and one common ratio: the pooled
    (stratified) interval reaches 95 % from 3 vs 3 trials per configuration and covers."""
    rng = np.random.default_rng(5)
    reps, hit, levels = 1000, 0, []
    for _ in range(reps):
        groups = []
        for scale in (1.0, 3.0, 10.0, 0.5):
            groups.append((2.0 * scale * (1 + rng.exponential(1.0, 3)), scale * (1 + rng.exponential(1.0, 3))))
        ci = stats.pooled_ratio_ci(groups)
        levels.append(ci.level)
        hit += ci.lo <= 2.0 <= ci.hi
    print(
        f"\npooled_ratio_ci coverage, 4 configurations x (3 vs 3), {reps} sets: stated {min(levels):.4f}, "
        f"achieved {hit / reps:.4f}"
    )
    assert min(levels) >= 0.95 and hit / reps >= 0.95 - 3 * np.sqrt(0.05 * 0.95 / reps)
    assert stats.pooled_ratio_ci([([1.0], [])]).strata == 0
