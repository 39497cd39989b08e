"""The echo_flood package's own field and column names (the rules: rawdata.columns)."""

from typing import Final

from serverbench.rawdata import columns


class Col(columns.Col):
    bytes_per_connection: Final = "bytes_per_connection"
    bytes_verified: Final = "bytes_verified"
    client_delay_s: Final = "client_delay_s"
