"""The spawn tables: fixed N (Fig. 4 (b)) and the max-processes search's steps (Fig. 4 (a),
runs of spawn under a memory budget, table spawn_max)."""

from serverbench.analysis.reading import registry
from serverbench.benchmarks.spawn.columns import Col

SPAWN_TABLE = registry.TableSpec(
    "spawn",
    "spawn",
    ("variant", "cores", "processes"),
    ("all_ready_s", "spawn_call_s", "bytes_per_process"),
    "all_ready_s",
    audit=registry.AuditSpec(
        "all_ready_s", "reported_elapsed_s", ("cores", "processes"), "reported time / fair all-ready time"
    ),
)
SPAWN_MAX_TABLE = registry.TableSpec(
    "spawn_max",
    "spawn",
    ("variant", "cores", "budget_bytes", "processes"),
    ("all_ready_s", "spawn_call_s", "bytes_per_process"),
    explore_metric="bytes_per_process",
    search_steps=True,
)


PAPER_FIXED_MAX = 100_000  # Fig. 4 (b)'s largest N
PAPER_MAX_BUDGET = "8 GB machine (up to ~11 M processes)"  # Fig. 4 (a)


@registry.setup_rows
def paper_setup(P, runs) -> list:
    """The report's rows on this sweep's spawn sizes and search budget against the paper's
    (each only when the sweep ran that part)."""
    from serverbench.analysis.reporting.report import fmt_bytes

    sp = runs[runs[Col.table] == "spawn"] if not runs.empty else runs
    lim = P.spawn_max_limits
    rows = []
    if not sp.empty:
        rows.append(("spawn, Fig. 4 (b) largest N", f"{PAPER_FIXED_MAX:,}", f"{int(sp[Col.processes].max()):,}"))
    if lim is not None and not lim.empty and lim[Col.budget_bytes].notna().any():
        budget = fmt_bytes(lim[Col.budget_bytes].dropna().iloc[0])
        rows.append(("spawn, Fig. 4 (a) memory", PAPER_MAX_BUDGET, f"budget {budget} per run"))
    return rows
