"""The recovery package's own field and column names (the rules: rawdata.columns)."""

from typing import Final

from serverbench.rawdata import columns


class Col(columns.Col):
    crashes_per_s: Final = "crashes_per_s"
    restart_latency_s: Final = "restart_latency_s"
    restarts: Final = "restarts"
