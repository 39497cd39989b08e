"""How a verdict's comparisons are written in one line (a claim's summary and why) and how a
ratio with its interval is written ("2.10 [1.82, 2.44] at 90 %"): the claims tables, the
first screen and the IM claims' own summaries all write them so. A comparison is an
engine.Comparison (its result, why, label, config and ci), taken by what it has so that
this module imports nothing of the engine."""

from __future__ import annotations

import pandas as pd

from serverbench.analysis.claims.results import NO, UNCLEAR, YES
from serverbench.analysis.statistics import stats


def why_unclear(comparisons: list) -> str:
    """The first three distinct reasons the undecided comparisons give."""
    seen: list[str] = []
    for c in comparisons:
        if c.result == UNCLEAR and c.why and c.why not in seen:
            seen.append(c.why)
    return "; ".join(seen[:3]) + (f"; ... ({len(seen) - 3} more)" if len(seen) > 3 else "")


def default_summary(comparisons: list, limit: int = 6) -> str:
    """The comparisons against the claim first, then the undecided, then the rest."""
    rank = {NO: 0, UNCLEAR: 1, YES: 2}
    comparisons = sorted(comparisons, key=lambda c: rank.get(c.result, 3))
    parts = [
        f"{c.label} at {c.config}: {fmt_ci(c.ci)}" if c.ci is not None else f"{c.label} at {c.config}"
        for c in comparisons[:limit]
    ]
    counts = ", ".join(
        f"{sum(c.result == k for c in comparisons)} {k}"
        for k in (YES, NO, UNCLEAR)
        if any(c.result == k for c in comparisons)
    )
    more = f" ... ({len(comparisons)} comparisons: {counts})" if len(comparisons) > limit else f" ({counts})"
    return "; ".join(parts) + more


def fmt_ci(ci: stats.RatioCI | None) -> str:
    """'2.10 [1.82, 2.44] at 90 %'."""
    if ci is None or not pd.notna(ci.ratio):
        return "n/a"
    if not pd.notna(ci.lo):
        return f"{ci.ratio:.3g} (no interval)"
    return f"{ci.ratio:.3g} [{ci.lo:.3g}, {ci.hi:.3g}] at {ci.level:.0%}"
