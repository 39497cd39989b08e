"""The throughput benchmark's own field and column names, beside the ones the harness and the
analysis share (rawdata.columns, whose rules hold here: each value is its attribute's name, a
field of the raw record, a column of a processed table or a field of
sweep.json; tests/python/test_columns.py)."""

from __future__ import annotations

from typing import Final

from serverbench.rawdata import columns


class Col(columns.Col):
    """rawdata.columns.Col and the names only this benchmark's package reads."""

    sweep_dir: Final = "sweep_dir"
