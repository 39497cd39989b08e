"""Runs taken under contention: per run, whether other processes or the hypervisor took
CPU time from it (harness/running/interference.py measures it per run; older records fall
back to the load average before the run), and the report's table and sentence about them."""

from __future__ import annotations

import pandas as pd

from serverbench.analysis.reading.process import LANGUAGE_LABELS, Processed
from serverbench.harness.running import interference
from serverbench.rawdata.columns import Col

# Raw-record fields (flattened) the harness records around each run, by what they mean;
# the first one present is used. A run records its interference
# (harness/running/interference.py: other processes' CPU time on its CPUs, steal) and is flagged
# `interfered` over limits fixed in advance; records without it fall back to the load average
# before the run (>= its logical CPUs: the machine was busy) or the steal.
LOAD_FIELDS = ("load_avg_1m_before", "contention.load_avg_1m_before", "loadavg_1m_before", "load_avg_1m")
STEAL_FIELDS = ("steal_share", "contention.steal_share", "cpu_steal_share")
STEAL_LIMIT = interference.STEAL_LIMIT


def _first_col(runs: pd.DataFrame, names) -> str | None:
    return next((c for c in names if c in runs.columns and runs[c].notna().any()), None)


def contention_flags(P: Processed) -> pd.DataFrame:
    """Per non-warm-up attempt: figure table, language, load and steal, and whether it ran
    under contention. Empty when the raw records carry no such fields."""
    r = P.runs
    if r.empty:
        return pd.DataFrame()
    load_c, steal_c = _first_col(r, LOAD_FIELDS), _first_col(r, STEAL_FIELDS)
    if load_c is None and steal_c is None:
        return pd.DataFrame()
    cpus = P.info.get(Col.logical_cpus) or 1
    d = r[~r[Col.warmup]].copy()
    load = d[load_c] if load_c else pd.Series(float("nan"), index=d.index)
    steal = d[steal_c] if steal_c else pd.Series(float("nan"), index=d.index)
    d[Col.load_avg_1m_before], d[Col.steal_share] = load, steal
    d["contended"] = (load >= cpus) | (steal >= STEAL_LIMIT)
    if Col.interfered in d.columns and d[Col.interfered].notna().any():  # measured: replaces the guess
        measured = d[Col.interfered].notna()
        d.loc[measured, "contended"] = d.loc[measured, "interfered"].astype(str).str.lower() == "true"
    if Col.other_cpu_share not in d.columns:
        d[Col.other_cpu_share] = float("nan")
    return d[["table", "language", "load_avg_1m_before", "steal_share", "other_cpu_share", "contended"]]


def contention_table(P: Processed) -> pd.DataFrame:
    f = contention_flags(P)
    if f.empty:
        return f
    g = f.groupby(["table", "language"], as_index=False).agg(
        runs=("contended", "size"),
        under_contention=("contended", "sum"),
        max_load_avg_1m_before=("load_avg_1m_before", "max"),
        max_steal_share=("steal_share", "max"),
        max_other_cpu_share=("other_cpu_share", "max"),
    )
    g[Col.language] = g[Col.language].map(lambda x: LANGUAGE_LABELS.get(x, x))
    return g.round(3)


def contention_note(P: Processed) -> str:
    f = contention_flags(P)
    if f.empty:
        return (
            "The raw records of this sweep carry no load-average or CPU-steal fields, so runs taken while the "
            "machine was busy cannot be flagged."
        )
    n, k = len(f), int(f["contended"].sum())
    cpus = P.info.get(Col.logical_cpus)
    rule = (
        f"other processes took > {interference.OTHER_CPU_LIMIT:.0%} of the run's CPU time on its CPUs or the "
        f"hypervisor stole > {STEAL_LIMIT:.0%} of it, as measured per run; runs recorded before that was "
        f"measured: 1-minute load average before the run >= {cpus} (the logical CPUs) or steal >= {STEAL_LIMIT:.0%}"
    )
    if k == 0:
        return f"No run was taken under contention ({rule})."
    # the cause a reader can act on (other processes on this machine) apart from the one
    # they cannot (the hypervisor lending the CPUs to other guests)
    other = f["contended"] & (f[Col.other_cpu_share] > interference.OTHER_CPU_LIMIT)
    steal = f["contended"] & ~other & (f[Col.steal_share] > STEAL_LIMIT)
    parts = [
        f"{int(other.sum())} because other processes on this machine used the run's CPUs",
        f"{int(steal.sum())} only because the hypervisor stole CPU time (other guests on the host)",
    ]
    rest = k - int(other.sum()) - int(steal.sum())
    if rest:
        parts.append(f"{rest} by the load average (runs recorded before contention was measured per run)")
    r = P.runs
    again = 0
    if Col.interfered in r.columns:
        flagged = r[Col.interfered].astype(str).str.lower().eq("true") & r[Col.is_ok] & ~r[Col.warmup]
        again = int((flagged & ~r[Col.selected]).sum())
    rerun = (
        f" {again} flagged run(s) were run once more and the repeat stands for them in the statistics." if again else ""
    )
    return (
        f"**{k} of {n} runs were taken under contention** ({rule}): {'; '.join(parts)}. Their values are in "
        f"the statistics, which may be slower or more spread than on an idle machine.{rerun}"
    )
