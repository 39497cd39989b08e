"""The im package's own field and column names (the rules: rawdata.columns)."""

from typing import Final

from serverbench.rawdata import columns


class Col(columns.Col):
    capacity: Final = "capacity"
    channel_size: Final = "channel_size"
    chaos_languages: Final = "chaos_languages"
    clients: Final = "clients"
    clients_registered: Final = "clients_registered"
    control_dropped: Final = "control_dropped"
    control_lost: Final = "control_lost"
    deliveries_expected: Final = "deliveries_expected"
    drain_s: Final = "drain_s"
    headroom: Final = "headroom"
    kept: Final = "kept"
    latency_p99_s: Final = "latency_p99_s"
    max_per_s: Final = "max_per_s"
    messages_delivered: Final = "messages_delivered"
    messages_lost: Final = "messages_lost"
    nodelay: Final = "nodelay"
    read_lateness_max_s: Final = "read_lateness_max_s"
    rounds_with_loss: Final = "rounds_with_loss"
    schedule_slip_max_s: Final = "schedule_slip_max_s"
    warmup_deliveries_expected: Final = "warmup_deliveries_expected"
    warmup_messages_delivered: Final = "warmup_messages_delivered"
    warmup_s: Final = "warmup_s"
