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


def test_bootstrap_ratio_is_deterministic_and_sensible():
    a = [2.0, 2.1, 1.9, 2.05, 1.95]
    b = [1.0, 1.02, 0.98, 1.01, 0.99]
    r1, r2 = stats.bootstrap_ratio(a, b), stats.bootstrap_ratio(a, b)
    assert r1 == r2
    assert r1.ratio == pytest.approx(2.0)
    assert r1.lo <= 2.0 <= r1.hi
    assert r1.lo > 1.8 and r1.hi < 2.2
    r3 = stats.bootstrap_ratio(a, b, seed=1)
    assert (r3.lo, r3.hi) != (r1.lo, r1.hi) or r3.ratio == r1.ratio
    nan = stats.bootstrap_ratio([], b)
    assert np.isnan(nan.ratio) and nan.n_num == 0


def test_bootstrap_ratio_coverage_on_synthetic_data():
    """Percentile bootstrap of a ratio of medians: near-nominal coverage at n = 15."""
    rng = np.random.default_rng(5)
    hits, reps = 0, 300
    for i in range(reps):
        a = rng.lognormal(np.log(3.0), 0.3, 15)
        b = rng.lognormal(np.log(1.0), 0.3, 15)
        ci = stats.bootstrap_ratio(a, b, resamples=1000, seed=i)
        hits += ci.lo <= 3.0 <= ci.hi
    assert hits / reps >= 0.88


def test_geomean_ratio():
    groups = [([2.0, 2.0, 2.0], [1.0, 1.0, 1.0]), ([8.0, 8.0, 8.0], [1.0, 1.0, 1.0])]
    g = stats.bootstrap_geomean_ratio(groups)
    assert g.ratio == pytest.approx(4.0)
    assert g.lo == pytest.approx(4.0) and g.hi == pytest.approx(4.0)
    assert np.isnan(stats.bootstrap_geomean_ratio([([], [1.0])]).ratio)
