"""Report section for recovery: the paper's future work, measured.

The paper made no quantitative claim about faults, so the section asks its questions as
exploratory ones and answers with estimates and intervals, not verdicts."""

from __future__ import annotations

import pandas as pd

from serverbench.analysis.reading import registry
from serverbench.analysis.statistics import stats
from serverbench.benchmarks.recovery import figures as R
from serverbench.benchmarks.recovery.columns import Col

TITLE = "Faults: the cost of tolerating them and of recovering"


def fastest_recovery(lat: pd.DataFrame) -> str:
    """Which runtime recovers fastest, from the medians and their intervals."""
    if lat.empty:
        return "No restart was timed in this sweep."
    s = lat.sort_values("median_us").reset_index(drop=True)
    best = s.iloc[0]
    text = (
        f"Lowest median restart latency: **{best[Col.language]}**, {best['median_us']:.1f} µs "
        f"[{best['lo_us']:.1f}, {best['hi_us']:.1f}] over {int(best[Col.restarts])} restarts"
    )
    if len(s) > 1:
        nxt = s.iloc[1]
        apart = best["hi_us"] < nxt["lo_us"]
        text += f"; next {nxt[Col.language]} at {nxt['median_us']:.1f} µs [{nxt['lo_us']:.1f}, {nxt['hi_us']:.1f}] " + (
            "(the intervals do not overlap)." if apart else "(the intervals overlap: not separated by this sweep)."
        )
    return text + " Restarts of one run are not independent, so the intervals are optimistic."


def least_loss(rel: pd.DataFrame) -> str:
    """Which runtime loses least throughput, at the highest crash rate every language ran."""
    if rel.empty:
        return "No crash rate above 0 was run beside lambda = 0."
    common = rel.groupby("crashes_per_s")[Col.language].nunique()
    rate = common[common == rel[Col.language].nunique()].index.max()
    at = rel[rel[Col.crashes_per_s] == rate].sort_values("ratio", ascending=False)
    parts = [f"{r[Col.language]} {r[Col.ratio]:.2f} [{r['lo']:.2f}, {r['hi']:.2f}]" for _, r in at.iterrows()]
    lam, who = R.first_loss(rel)
    first = (
        f" The first rate at which a language's estimate falls below {R.LOSS:.0%} of its fault-free "
        f"throughput: lambda = {lam:g}/s ({who}); there: "
        + "; ".join(
            f"{r[Col.language]} {r[Col.ratio]:.2f} [{r['lo']:.2f}, {r['hi']:.2f}]"
            for _, r in rel[rel[Col.crashes_per_s] == lam].iterrows()
        )
        + "."
        if lam is not None
        else f" No language's estimate fell below {R.LOSS:.0%} at the rates run."
    )
    return (
        f"At lambda = {rate:g} crashes/s (the highest rate every language ran) the least throughput lost: "
        f"**{at.iloc[0][Col.language]}**; throughput relative to lambda = 0: " + "; ".join(parts) + "." + first
    )


@registry.report_section(TITLE, order=70)
def section(P) -> list:
    if R.runs(P).empty and R.runs(P, "aggregator").empty:
        return []
    rel = R.relative_throughput(P)
    lat = R.latency_summary(P)
    blocks: list = [
        "The paper ends by asking for 'the performance overheads of providing fault tolerance and of "
        f"recovering from faults'. Exploratory questions, answered with estimates and {stats.CONFIDENCE:.0%} "
        "intervals (the level each reaches is shown), not verdicts: (1) how fast does each runtime restart a crashed "
        "worker? (2) how much throughput does each lose at a crash rate lambda? (3) what does supervision "
        "cost when nothing fails? Workers crash by their runtime's own error path at the seeded schedule "
        "of docs/spec.md 'recovery' (the same crash times in every language); every run that counted a "
        "restart short, lost a worker or did not balance its counts is invalid and left out.",
        "**Restart latency.** " + fastest_recovery(lat),
        lat.round({c: 1 for c in lat.columns if c.endswith("_us")}),
        registry.FigureRef("fig_recovery_latency"),
        "**Throughput against lambda** (each run's steady rate over its second half, so that JIT and VM "
        "warm-up do not decide): " + least_loss(rel),
        rel.round(3),
        registry.FigureRef("fig_recovery_throughput"),
    ]
    sup = R.supervision_overhead(P)
    blocks.append(
        "**Supervision when nothing fails** (recovery at lambda = 0 / throughput, steady rates, same cores, "
        "pairs and message size; recovery also counts every message and reports every 1,000 exchanges): "
        + (
            "; ".join(
                f"{r[Col.language]} {r[Col.ratio]:.2f} [{r['lo']:.2f}, {r['hi']:.2f}] "
                f"({int(r[Col.pairs])} pairs, {int(r[Col.cores])} cores)"
                for _, r in sup.iterrows()
            )
            if not sup.empty
            else "no throughput run at the same configuration in this sweep."
        )
    )
    agg = R.runs(P, "aggregator")
    if not agg.empty:
        a = R.latencies(agg)
        t = agg.groupby("language").agg(
            runs=("exchanges_lost", "size"), exchanges_lost_median=("exchanges_lost", "median")
        )
        t["aggregator_restart_us_median"] = a.groupby("language")["latency_s"].median() * 1e6
        blocks += [
            "**The dispatcher (aggregator) crashed once mid-run**: exchanges lost with its state, and its restart.",
            t.reset_index(),
        ]
    return blocks
