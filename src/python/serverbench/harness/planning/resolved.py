"""A resolved profile as a frozen value (planning.profiles makes it).

Its top-level settings are typed fields; its [defaults] and benchmark tables are kept deeply
read-only. It reads as the mapping it was resolved from (prof["defaults"]["trials"],
prof[<table>]), and every read returns a fresh plain copy (dicts and lists), so no caller
can change the profile another one holds: a changed value is a new Profile (`with_seed`).
`as_dict()` is what a sweep records (sessions, manifest), key for key and in the same order
as the TOML's resolution."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

TOP = ("name", "description", "source", "seed", "variant", "languages", "rerun_interfered", "defaults")


def freeze(v: Any) -> Any:
    """A deeply read-only copy: dicts -> MappingProxyType, lists -> tuples."""
    if isinstance(v, Mapping):
        return MappingProxyType({k: freeze(x) for k, x in v.items()})
    if isinstance(v, (list, tuple)):
        return tuple(freeze(x) for x in v)
    return v


def thaw(v: Any) -> Any:
    """A fresh plain copy of a frozen value: mappings -> dicts, tuples -> lists."""
    if isinstance(v, Mapping):
        return {k: thaw(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [thaw(x) for x in v]
    return v


@dataclass(frozen=True)
class Profile(Mapping):
    """A resolved profile (see the module docstring)."""

    name: str
    description: str
    source: str
    seed: int | None  # None: the sweep draws its own (profiles.sweep_seed)
    variant: str
    languages: tuple[str, ...]
    rerun_interfered: bool
    defaults: Mapping[str, Any]
    tables: Mapping[str, Mapping[str, Any]]  # every profile table, in profiles.table_names() order

    @classmethod
    def from_dict(cls, d: dict) -> Profile:
        tables = {k: v for k, v in d.items() if k not in TOP}
        return cls(**{k: freeze(d[k]) for k in TOP}, tables=freeze(tables))

    def __getitem__(self, key: str) -> Any:
        if key in TOP:
            return thaw(getattr(self, key))
        return thaw(self.tables[key])

    def __iter__(self) -> Iterator[str]:
        yield from TOP
        yield from self.tables

    def __len__(self) -> int:
        return len(TOP) + len(self.tables)

    def as_dict(self) -> dict:
        """The plain dict a sweep records."""
        return {k: self[k] for k in self}

    def with_seed(self, seed: int) -> Profile:
        return dataclasses.replace(self, seed=seed)
