"""The throughput table (Fig. 5): one configuration per core count and pair count."""

from serverbench.analysis.reading import registry
from serverbench.benchmarks.throughput.columns import Col

THROUGHPUT_TABLE = registry.TableSpec(
    "throughput",
    "throughput",
    ("variant", "payload", "cores", "message_bytes", "duration_s", "pairs"),
    ("paper_msgs_per_min", "steady_msgs_per_min", "exchanges_per_s"),
    "paper_msgs_per_min",
    explore_metric="exchanges_per_s",
    audit=registry.AuditSpec(
        "paper_msgs_per_min",
        "reported_msgs_per_min",
        ("cores", "payload", "message_bytes", "duration_s", "pairs"),
        "reported msgs/min / fair msgs/min",
    ),
)


PAPER_RUN_S = 60.0  # Fig. 5's run length


@registry.setup_rows
def paper_setup(P, runs) -> list:
    """The report's row on this sweep's throughput run length against the paper's."""
    tp = runs[runs[Col.table] == "throughput"] if not runs.empty else runs
    if tp.empty:
        return []
    here = ", ".join(f"{x:g} s" for x in sorted(tp[Col.duration_s].dropna().unique()))
    return [("throughput run length", f"{PAPER_RUN_S:g} s", here)]
