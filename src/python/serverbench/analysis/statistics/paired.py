"""The one interval method of every verdict: a ratio paired by round (docs/protocol.md).

The harness runs trial k of every configuration and language in round k, close together
in time (harness.planning.plan.schedule), so a slow spell of the machine slows both sides of a
round. Pairing the two sides' trials by round and taking per-round log ratios
d_k = log a_k - log b_k removes such shared slowdowns. The ratio is exp of the
Hodges-Lehmann estimate of the d_k (the median of their Walsh averages (d_i + d_j) / 2,
i <= j) with its exact Wilcoxon signed-rank interval [W_(k), W_(N+1-k)]: coverage
1 - 2 P(T+ <= k-1), T+ the signed-rank statistic, whose null distribution (each of the
2^n sign assignments equally likely) is computed here by convolution. It assumes each d_k
is symmetric about the common log ratio (true when the two sides' noise has the same
distribution, whatever its shape).

The same method at every n: with n pairs no interval is better than 1 - 2 / 2^n (5 pairs:
93.75 %), and the interval states the level it achieves. Only rounds that have both sides
count; a side with a round twice, or without round ids, cannot be paired (the comparison
then says so instead of switching method). A comparison of one sample against a constant
(a fraction about 1/4) is the same interval with the constant as the other side.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import pandas as pd

from serverbench.analysis.statistics.stats import RatioCI

METHOD = "paired by round: Hodges-Lehmann of per-round log ratios, exact Wilcoxon signed-rank interval"
POINT = "point values (the source's one value per point): no interval"
ROUND = "trial"  # a processed table's round id: trial k of a configuration ran in round k


@lru_cache(maxsize=128)
def signed_rank_pmf(n: int) -> np.ndarray:
    """P(T+ = t), t = 0 .. n(n+1)/2, under the null: rank i carries a + sign with
    probability 1/2 independently, so the pmf is the convolution of n two-point laws
    (exact in binary floating point: every value is a multiple of 2^-n)."""
    pmf = np.array([1.0])
    for rank in range(1, n + 1):
        nxt = np.zeros(len(pmf) + rank)
        nxt[: len(pmf)] += 0.5 * pmf
        nxt[rank:] += 0.5 * pmf
        pmf = nxt
    return pmf


def max_paired_confidence(n: int) -> float:
    """The best two-sided confidence of any signed-rank interval with n pairs: 1 - 2 / 2^n."""
    return 0.0 if n < 1 else 1.0 - 2.0 ** (1 - n)


def walsh_averages(d: np.ndarray) -> np.ndarray:
    i, j = np.triu_indices(len(d))
    return (d[i] + d[j]) / 2.0


def _interval(values: np.ndarray, pmf: np.ndarray, confidence: float) -> tuple[float, float, float]:
    """[v_(k), v_(N+1-k)] of the sorted values, k the largest whose coverage
    1 - 2 P(T <= k-1) is >= confidence; k = 1 and its coverage when none reaches it."""
    v = np.sort(values)
    cover = 1.0 - 2.0 * np.cumsum(pmf)[: (len(v) + 1) // 2]  # k = 1 .. ceil(N/2)
    ok = np.nonzero(cover >= confidence - 1e-12)[0]
    k = int(ok[-1]) + 1 if len(ok) else 1
    return float(v[k - 1]), float(v[len(v) - k]), float(max(cover[k - 1], 0.0))


def paired_ratio_ci(num, den, confidence: float) -> RatioCI:
    """num[k] / den[k] over pairs k (aligned arrays of positive values): exp of the
    Hodges-Lehmann estimate of the per-pair log ratios with the exact signed-rank interval
    at the narrowest coverage >= confidence (else the widest, at the coverage it reaches)."""
    a, b = np.asarray(num, dtype=float), np.asarray(den, dtype=float)
    if a.shape != b.shape:
        raise ValueError(f"paired samples differ in length: {a.shape} vs {b.shape}")
    keep = np.isfinite(a) & np.isfinite(b) & (a > 0) & (b > 0)
    d = np.log(a[keep]) - np.log(b[keep])
    n = len(d)
    if n == 0:
        nan = float("nan")
        return RatioCI(0, 0, nan, nan, nan, 0.0, METHOD)
    w = walsh_averages(d)
    lo, hi, achieved = _interval(w, signed_rank_pmf(n), confidence)
    return RatioCI(n, n, float(np.exp(np.median(w))), float(np.exp(lo)), float(np.exp(hi)), achieved, METHOD)


def point_ratio(num, den) -> RatioCI:
    """The ratio of two single values, as an 'interval' of one point (the source's numbers)."""
    r = float(np.asarray(num, float)[0] / np.asarray(den, float)[0])
    return RatioCI(1, 1, r, r, r, 1.0, POINT)


def pairs_by_round(num: pd.DataFrame, den: pd.DataFrame) -> tuple[np.ndarray, np.ndarray] | str:
    """The two sides' values (columns ROUND and value) aligned on the rounds both have, or
    why they cannot be paired."""
    for side in (num, den):
        if ROUND not in side.columns or side[ROUND].isna().any():
            return "no round ids"
        if side[ROUND].duplicated().any():
            return "a side has a round twice"
    a, b = num.set_index(ROUND)["value"], den.set_index(ROUND)["value"]
    common = sorted(set(a.index) & set(b.index))
    if not common:
        return "no round has both sides"
    return a.loc[common].to_numpy(float), b.loc[common].to_numpy(float)
