"""Distribution-free statistics for benchmark trials (docs/statistics.md).

* median_ci: the median with a confidence interval from binomial order statistics, as
  benchstat (golang.org/x/perf/benchmath) does. No assumption about the distribution
  beyond continuity; exact and conservative.
* bootstrap_ratio: the ratio of two medians with a seeded percentile-bootstrap interval
  (each group resampled independently).
* bootstrap_geomean_ratio: the geometric mean, over several configurations, of per-
  configuration ratios of medians, with the same kind of interval.

Everything is deterministic for a given seed.
"""

from __future__ import annotations

from dataclasses import dataclass, asdict
from math import comb

import numpy as np

CONFIDENCE = 0.95
BOOTSTRAP_RESAMPLES = 2000
SEED = 20180409  # SAC 2018; any fixed value would do
MIN_TRIALS_FOR_COMPARISON = 3


@dataclass(frozen=True)
class MedianCI:
    n: int
    median: float
    lo: float
    hi: float
    level: float  # the coverage actually achieved (< confidence when n is too small)

    def as_dict(self) -> dict:
        return asdict(self)


def order_statistic_indices(n: int, confidence: float = CONFIDENCE) -> tuple[int, int, float]:
    """0-based indices (lo, hi) into the sorted sample and the coverage of
    [x_(lo), x_(hi)] as an interval for the median.

    The interval [x_(k), x_(n+1-k)] (1-based) covers the true median with probability
    1 - 2 * P(Binomial(n, 1/2) <= k - 1). We take the largest k (narrowest symmetric
    interval) whose coverage is still >= confidence. If even [min, max] falls short
    (n < 6 at 95%), we return [min, max] and its smaller coverage, as benchstat does."""
    if n < 1:
        raise ValueError("need at least one value")
    if n == 1:
        return 0, 0, 0.0
    total = 2.0**n
    best_k, best_cov = 1, 1.0 - 2.0 / total
    cdf = 0.0
    for k in range(1, n // 2 + 1):
        # coverage for k: 1 - 2 * P(X <= k-1)
        cdf += comb(n, k - 1) / total
        cov = 1.0 - 2.0 * cdf
        if cov >= confidence:
            best_k, best_cov = k, cov
        else:
            break
    return best_k - 1, n - best_k, best_cov


def median_ci(values, confidence: float = CONFIDENCE) -> MedianCI:
    x = np.sort(np.asarray([v for v in values if v is not None and np.isfinite(v)], dtype=float))
    n = len(x)
    if n == 0:
        nan = float("nan")
        return MedianCI(0, nan, nan, nan, 0.0)
    lo, hi, cov = order_statistic_indices(n, confidence)
    return MedianCI(n, float(np.median(x)), float(x[lo]), float(x[hi]), float(cov))


@dataclass(frozen=True)
class RatioCI:
    n_num: int
    n_den: int
    ratio: float
    lo: float
    hi: float
    level: float
    method: str = "percentile bootstrap of the ratio of medians"

    def as_dict(self) -> dict:
        return asdict(self)

    def overlaps(self, a: float, b: float) -> bool:
        return self.hi >= a and self.lo <= b


def _clean(values) -> np.ndarray:
    return np.asarray([v for v in values if v is not None and np.isfinite(v)], dtype=float)


def _boot_medians(x: np.ndarray, rng: np.random.Generator, resamples: int) -> np.ndarray:
    idx = rng.integers(0, len(x), size=(resamples, len(x)))
    return np.median(x[idx], axis=1)


def bootstrap_ratio(num, den, confidence: float = CONFIDENCE, resamples: int = BOOTSTRAP_RESAMPLES,
                    seed: int = SEED) -> RatioCI:
    """median(num) / median(den) with a percentile-bootstrap interval."""
    a, b = _clean(num), _clean(den)
    nan = float("nan")
    if len(a) == 0 or len(b) == 0:
        return RatioCI(len(a), len(b), nan, nan, nan, 0.0)
    rng = np.random.default_rng(seed)
    ma, mb = _boot_medians(a, rng, resamples), _boot_medians(b, rng, resamples)
    with np.errstate(divide="ignore", invalid="ignore"):
        r = ma / mb
        point = float(np.median(a) / np.median(b)) if np.median(b) != 0 else float("inf")
    if min(len(a), len(b)) < 2:  # one value per side: a ratio, but no interval
        return RatioCI(len(a), len(b), point, nan, nan, 0.0)
    alpha = (1 - confidence) / 2
    lo, hi = np.quantile(r, [alpha, 1 - alpha])
    return RatioCI(len(a), len(b), point, float(lo), float(hi), confidence)


def bootstrap_geomean_ratio(groups, confidence: float = CONFIDENCE, resamples: int = BOOTSTRAP_RESAMPLES,
                            seed: int = SEED) -> RatioCI:
    """groups: list of (num_values, den_values), one per configuration. The geometric
    mean of the per-configuration ratios of medians; each bootstrap replicate resamples
    every configuration's two groups independently."""
    pairs = [(_clean(a), _clean(b)) for a, b in groups]
    pairs = [(a, b) for a, b in pairs if len(a) and len(b) and np.median(a) > 0 and np.median(b) > 0]
    nan = float("nan")
    if not pairs:
        return RatioCI(0, 0, nan, nan, nan, 0.0, "geometric mean of ratios of medians")
    rng = np.random.default_rng(seed)
    logs = np.zeros(resamples)
    point = 0.0
    for a, b in pairs:
        ma, mb = _boot_medians(a, rng, resamples), _boot_medians(b, rng, resamples)
        with np.errstate(divide="ignore", invalid="ignore"):
            logs += np.log(ma) - np.log(mb)
        point += np.log(np.median(a)) - np.log(np.median(b))
    logs /= len(pairs)
    point /= len(pairs)
    if min(min(len(a), len(b)) for a, b in pairs) < 2:
        return RatioCI(min(len(a) for a, _ in pairs), min(len(b) for _, b in pairs), float(np.exp(point)), nan, nan,
                       0.0, "geometric mean of ratios of medians")
    alpha = (1 - confidence) / 2
    lo, hi = np.quantile(logs, [alpha, 1 - alpha])
    return RatioCI(min(len(a) for a, _ in pairs), min(len(b) for _, b in pairs), float(np.exp(point)),
                   float(np.exp(lo)), float(np.exp(hi)), confidence, "geometric mean of ratios of medians")


def median_ci_coverage(sampler, true_median: float, n: int, reps: int = 2000, seed: int = 1,
                       confidence: float = CONFIDENCE) -> float:
    """Fraction of reps in which median_ci's interval covers true_median (for tests and docs)."""
    rng = np.random.default_rng(seed)
    lo_i, hi_i, _ = order_statistic_indices(n, confidence)
    x = np.sort(sampler(rng, (reps, n)), axis=1)
    return float(np.mean((x[:, lo_i] <= true_median) & (true_median <= x[:, hi_i])))
