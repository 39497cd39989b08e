"""Second stage of `quick` (issue 26, "Trials where they decide something"): which
comparisons get extra rounds.

A plain ranking function, no harness import (issue 27 layering). A comparison is a
candidate when its interval (log-ratio scale) touches a decision boundary (the edges of
the yes and no regions, analysis/claims/decision.py); candidates are ranked by the
distance of their estimate to the nearest boundary in standard errors (smallest first:
the most likely to change a verdict with more trials). The orchestration (stages.py),
the profile keys and the simulation test of the two-stage error rate are NOT built yet.
"""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class Comparison:
    config_id: str
    est: float  # log ratio
    lo: float  # interval on the log scale
    hi: float
    boundaries: tuple[float, ...]  # log-scale edges of the yes / no regions


def touches(c: Comparison) -> bool:
    """True when some boundary lies inside [lo, hi] (the verdict is not settled)."""
    return any(c.lo <= b <= c.hi for b in c.boundaries)


def distance_se(c: Comparison) -> float:
    """Distance of the estimate to its nearest boundary in standard errors (the interval's
    half-width taken as 1.96 se); inf without boundaries or with a degenerate interval."""
    se = (c.hi - c.lo) / (2 * 1.96)
    if not c.boundaries or not math.isfinite(se) or se <= 0:
        return math.inf
    return min(abs(c.est - b) for b in c.boundaries) / se


def rank(comparisons: list[Comparison], max_configs: int) -> list[str]:
    """Config ids to give extra rounds: touching candidates, nearest boundary first, each
    config once (its best comparison), at most max_configs."""
    best: dict[str, float] = {}
    for c in comparisons:
        if touches(c):
            d = distance_se(c)
            best[c.config_id] = min(d, best.get(c.config_id, math.inf))
    ordered = sorted(best, key=lambda k: (best[k], k))
    return ordered[: max(0, max_configs)]
