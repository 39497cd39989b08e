"""The side tables of a processed sweep: the max-processes search (Fig. 4a) with each
language's limit, every failed attempt by reason, and where the time went (CPU time)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from serverbench.rawdata.columns import Col

FAILED_STATUSES = ("timeout", "over_memory_budget", "crashed", "failed_to_start")
# a max-processes search step failing with one of these establishes the limit (docs/statistics.md)
LIMIT_STATUSES = ("over_memory_budget", "crashed", "invalid")


def spawn_max_tables(runs: pd.DataFrame, metric: str = "all_ready_s") -> tuple[pd.DataFrame, pd.DataFrame]:
    d = runs[(runs[Col.table] == "spawn_max") & runs[Col.selected] & ~runs[Col.warmup].astype(bool)]
    cols = [
        "language",
        "budget_bytes",
        "search_step",
        "processes",
        "trial",
        "status",
        "status_reason",
        "all_ready_s",
        "spawn_call_s",
        "bytes_per_process",
        "peak_rss_bytes",
        "wall_s",
        "user_cpu_s",
        "system_cpu_s",
    ]
    steps = d[[c for c in cols if c in d]].sort_values(["language", "processes", "trial"]).reset_index(drop=True)
    lim = []
    for lang, g in steps.groupby("language"):
        per_n = g.groupby("processes")[Col.status].apply(lambda s: bool((s == "ok").all())).sort_index()
        ok_ns = [n for n, ok in per_n.items() if ok]
        bad = [n for n, ok in per_n.items() if not ok]
        first_bad = min(bad) if bad else None
        max_ok = max([n for n in ok_ns if first_bad is None or n < first_bad], default=None)
        reason, fstatus = "", None
        if first_bad is not None:
            gb = g[(g[Col.processes] == first_bad) & (g[Col.status] != "ok")].iloc[0]
            fstatus = gb[Col.status]
            reason = f"{gb[Col.status]}: {gb[Col.status_reason] or ''}".strip(": ")
        t = g[(g[Col.processes] == max_ok) & (g[Col.status] == "ok")][metric].median() if max_ok else np.nan
        lim.append(
            {
                "language": lang,
                "budget_bytes": g[Col.budget_bytes].dropna().iloc[0] if g[Col.budget_bytes].notna().any() else np.nan,
                "max_ok_processes": max_ok,
                "first_failed_processes": first_bad,
                "failure_status": fstatus,
                # only a run that hit memory or a runtime limit establishes the limit; a timeout or a
                # failure to start says nothing about how many processes fit
                "limit_found": fstatus in LIMIT_STATUSES,
                "failure": reason,
                f"{metric}_at_max": t,
                "steps": int(len(per_n)),
            }
        )
    return steps, pd.DataFrame(lim)


def failures(runs: pd.DataFrame) -> pd.DataFrame:
    d = runs[runs[Col.status] != "ok"]
    if d.empty:
        return pd.DataFrame(columns=["table", "language", "status", "count", "retried_ok", "example_reason"])
    # a search's attempts are one run only within one step of one search: a scout step and a
    # grid step at one rate share a config_id and a trial (its run number)
    cols = ["config_id", "trial"] + [c for c in ("search_name", "search_step") if c in runs]
    key = runs[cols].astype(object).where(runs[cols].notna(), "").astype(str).apply(tuple, axis=1)
    ok_keys = set(key[runs[Col.is_ok]])
    d = d.assign(retried_ok=[k in ok_keys for k in key[d.index]])
    out = d.groupby(["table", "language", "status"], as_index=False).agg(
        count=("status", "size"),
        retried_ok=("retried_ok", "sum"),
        example_reason=("status_reason", lambda s: next((str(x) for x in s if isinstance(x, str) and x), "")),
        example_stderr=("stderr_last_line", lambda s: next((x for x in s if x), "")),
    )
    return out


def cpu_time(runs: pd.DataFrame) -> pd.DataFrame:
    d = runs[~runs[Col.warmup].astype(bool)].copy()
    ready = d[Col.all_ready_s] if Col.all_ready_s in d else np.nan
    d[Col.timed_s] = np.where(d[Col.table].isin(["spawn", "spawn_max"]), ready, d[Col.elapsed_s])
    g = d.groupby(["table", "language"], as_index=False).agg(
        runs=("status", "size"),
        wall_s=("wall_s", "sum"),
        user_cpu_s=("user_cpu_s", "sum"),
        system_cpu_s=("system_cpu_s", "sum"),
        timed_s=("timed_s", "sum"),
    )
    system, wall = g[Col.system_cpu_s], g[Col.wall_s]
    cpu = g[Col.user_cpu_s] + system
    g[Col.system_share_of_cpu] = (system / cpu).where(cpu > 0)
    g[Col.cpu_per_wall] = (cpu / wall).where(wall > 0)
    g[Col.timed_share_of_wall] = (g[Col.timed_s] / wall).where(wall > 0)
    return g
