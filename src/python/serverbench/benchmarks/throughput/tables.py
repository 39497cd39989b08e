"""The throughput table (Fig. 5): one configuration per core count and pair count."""

from serverbench.analysis import registry

registry.table(
    registry.TableSpec(
        "throughput",
        "throughput",
        ("variant", "payload", "cores", "message_bytes", "duration_s", "pairs"),
        ("paper_msgs_per_min", "steady_msgs_per_min", "exchanges_per_s"),
        "paper_msgs_per_min",
        explore_metric="exchanges_per_s",
    )
)
