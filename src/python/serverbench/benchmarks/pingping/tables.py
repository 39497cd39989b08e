"""The PingPing table (Fig. 3): one configuration per message size and repetition count."""

from serverbench.analysis.reading import registry
from serverbench.rawdata.columns import Col

PINGPING_TABLE = registry.TableSpec(
    "pingping",
    "pingping",
    ("variant", "payload", "cores", "message_bytes", "repetitions"),
    ("elapsed_s", "ns_per_message"),
    "elapsed_s",
    explore_metric="ns_per_message",
    explore_x="message_bytes",
    audit=registry.AuditSpec(
        "elapsed_s",
        "reported_elapsed_s",
        ("cores", "payload", "message_bytes", "repetitions"),
        "reported time / fair time",
    ),
)


PAPER_MAX_REPETITIONS = 1_000_000  # Fig. 3's largest R


@registry.setup_rows
def paper_setup(P, runs) -> list:
    """The report's row on how far this sweep's PingPing went against the paper's (none
    when the sweep ran no PingPing: an IM or socket sweep's report is not about it)."""
    pp = runs[runs[Col.table] == "pingping"] if not runs.empty else runs
    if pp.empty:
        return []
    return [("PingPing largest repetitions", f"{PAPER_MAX_REPETITIONS:,}", f"{int(pp[Col.repetitions].max()):,}")]
