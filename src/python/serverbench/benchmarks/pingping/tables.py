"""The PingPing table (Fig. 3): one configuration per message size and repetition count."""

from serverbench.analysis import registry

registry.table(
    registry.TableSpec(
        "pingping",
        "pingping",
        ("variant", "payload", "cores", "message_bytes", "repetitions"),
        ("elapsed_s", "ns_per_message"),
        "elapsed_s",
        explore_metric="ns_per_message",
        explore_x="message_bytes",
    )
)
