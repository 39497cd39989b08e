"""The spawn package's own field and column names (the rules: rawdata.columns)."""

from typing import Final

from serverbench.rawdata import columns


class Col(columns.Col):
    failure: Final = "failure"
    first_failed_processes: Final = "first_failed_processes"
    limit_found: Final = "limit_found"
    max_ok_processes: Final = "max_ok_processes"
