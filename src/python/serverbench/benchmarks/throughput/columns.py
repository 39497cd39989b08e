"""The throughput package's own field and column names (the rules: rawdata.columns)."""

from typing import Final

from serverbench.rawdata import columns


class Col(columns.Col):
    sweep_dir: Final = "sweep_dir"
