"""Paired comparison of two languages by round (docs/statistics.md, "Pairing by round").

The harness runs trial k of every language of a configuration in round k, close together
in time (harness.plan.schedule), so a slow spell of the machine slows both sides of a
round. Pairing the trials by round and taking per-round log ratios d_k = log a_k - log b_k
removes such shared slowdowns. The ratio is exp of the Hodges-Lehmann estimate of the
d_k (the median of their Walsh averages (d_i + d_j) / 2, i <= j) with its exact Wilcoxon
signed-rank interval [W_(k), W_(N+1-k)]: coverage 1 - 2 P(T+ <= k-1), T+ the signed-rank
statistic, whose null distribution (each of the 2^n sign assignments equally likely) is
computed here by convolution. It assumes each d_k is symmetric about the common log ratio
(true when the two sides' noise has the same distribution, whatever its shape).

With n pairs no rank interval is better than 1 - 2 / 2^n (5 pairs: 93.75 %, 6: 96.9 %), so
`ratio_by_round` pairs only when the pairs can reach the confidence asked of a decision and
otherwise (or when pairing is broken: a round lacks one side, a side has a round twice, no
round ids) falls back to the unpaired Mann-Whitney interval (stats.ratio_ci), saying why.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import pandas as pd

from serverbench.analysis import stats

PAIRED_METHOD = "paired by round: Hodges-Lehmann of per-round log ratios, exact Wilcoxon signed-rank interval"
PAIRED, UNPAIRED = "paired", "unpaired"
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


def paired_ratio_ci(num, den, confidence: float = stats.CONFIDENCE, strata: int = 1) -> stats.RatioCI:
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
        return stats.RatioCI(0, 0, nan, nan, nan, 0.0, PAIRED_METHOD, strata)
    w = walsh_averages(d)
    lo, hi, level = _interval(w, signed_rank_pmf(n), confidence)
    return stats.RatioCI(
        n, n, float(np.exp(np.median(w))), float(np.exp(lo)), float(np.exp(hi)), level, PAIRED_METHOD, strata
    )


def kind(ci: stats.RatioCI | None) -> str:
    """'paired' / 'unpaired' for an evidence row ('' without an interval)."""
    if ci is None:
        return ""
    return PAIRED if ci.method == PAIRED_METHOD else UNPAIRED


def pairs_by_round(num: pd.DataFrame, den: pd.DataFrame) -> tuple[np.ndarray, np.ndarray] | str:
    """The two sides' values aligned by round (columns ROUND and value), or why they
    cannot be paired."""
    for side in (num, den):
        if ROUND not in side.columns or side[ROUND].isna().any():
            return "no round ids"
        if side[ROUND].duplicated().any():
            return "a side has a round twice"
    a, b = num.set_index(ROUND)["value"], den.set_index(ROUND)["value"]
    if set(a.index) != set(b.index):
        lone = sorted(set(a.index) ^ set(b.index))
        return f"round(s) {', '.join(str(int(r)) for r in lone[:5])} lack one side"
    order = sorted(a.index)
    return a.loc[order].to_numpy(float), b.loc[order].to_numpy(float)


def ratio_by_round(
    num: pd.DataFrame,
    den: pd.DataFrame,
    confidence: float = stats.CONFIDENCE,
    min_confidence: float = stats.CONFIDENCE,
) -> tuple[stats.RatioCI, str]:
    """num/den of two sides' trials (frames with ROUND and value): paired by round when
    every round has both sides and the pairs can reach min_confidence (the level a
    decision needs), else the unpaired Mann-Whitney interval; and why it is unpaired ('')."""
    pairs = pairs_by_round(num, den)
    if not isinstance(pairs, str):
        n = len(pairs[0])
        if max_paired_confidence(n) >= min_confidence - 1e-12:
            return paired_ratio_ci(*pairs, confidence), ""
        pairs = f"{n} pair(s) reach at most {max_paired_confidence(n):.2%}"
    ci = stats.ratio_ci(num["value"].to_numpy(float), den["value"].to_numpy(float), confidence)
    return ci, pairs


def pooled_ratio_by_round(
    groups: list[tuple[pd.DataFrame, pd.DataFrame]],
    confidence: float = stats.CONFIDENCE,
    min_confidence: float = stats.CONFIDENCE,
) -> tuple[stats.RatioCI, str]:
    """One common ratio over several configurations: every configuration's per-round log
    ratios together (under a common ratio each is symmetric about it, so one signed-rank
    interval covers them all); unpaired (stats.pooled_ratio_ci) when any configuration's
    pairing is broken or the pairs cannot reach min_confidence."""
    paired = [pairs_by_round(a, b) for a, b in groups]
    broken = next((p for p in paired if isinstance(p, str)), None)
    if broken is None:
        num = np.concatenate([p[0] for p in paired if not isinstance(p, str)])
        den = np.concatenate([p[1] for p in paired if not isinstance(p, str)])
        if max_paired_confidence(len(num)) >= min_confidence - 1e-12:
            return paired_ratio_ci(num, den, confidence, strata=len(groups)), ""
        broken = f"{len(num)} pair(s) reach at most {max_paired_confidence(len(num)):.2%}"
    ci = stats.pooled_ratio_ci(
        [(a["value"].to_numpy(float), b["value"].to_numpy(float)) for a, b in groups], confidence
    )
    return ci, broken
