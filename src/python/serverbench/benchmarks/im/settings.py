"""IM's search settings as one typed value: what its searches, step rule and loss runs read
of a resolved [im_rate] table (benchmarks/im/search.py's DEFAULTS with the profile's values)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any


@dataclass(frozen=True, slots=True)
class Settings:
    """What IM's searches, step rule and loss runs read of a resolved [im_rate] table (DEFAULTS
    with the profile's values; `check` has vetted them), typed once at the call: a misspelt
    setting is a type error, not a KeyError in the middle of a sweep."""

    kinds: tuple[str, ...]
    start: int
    factor: float
    max_per_s: float
    slo_s: float
    chaos_languages: tuple[str, ...]
    chaos_target: str
    chaos_pick: str
    chaos_search_kills_per_s: float
    chaos_kills_per_s: tuple[float, ...]
    chaos_queued_kills_per_s: float
    chaos_loss_target: str
    chaos_rounds: int
    fanout_channel_sizes: tuple[int, ...]
    memory_caps_bytes: tuple[int, ...]
    memory_heap_fraction: float
    memory_clients_max: int
    memory_hold_s: float
    memory_timeout_s: float
    memory_settings: bool

    @classmethod
    def of(cls, table: Mapping | Settings) -> Settings:
        if isinstance(table, Settings):
            return table
        got: dict[str, Any] = {f.name: table[f.name] for f in fields(cls)}
        for k, v in got.items():
            if isinstance(v, list):  # a TOML array; the frozen value holds a tuple
                got[k] = tuple(v)
        return cls(**got)
