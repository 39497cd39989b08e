"""The im benchmark's own field and column names, beside the ones the harness and the
analysis share (rawdata.columns, whose rules hold here: each value is its attribute's name, a
field of the raw record, a column of a processed table or a field of
sweep.json; tests/python/test_columns.py)."""

from __future__ import annotations

from typing import Final

from serverbench.rawdata import columns


class Col(columns.Col):
    """rawdata.columns.Col and the names only this benchmark's package reads."""

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
