"""A profile's pieces: parts of one long profile (the paper's) that each fit one session on
one machine, run as sweeps of their own.

A profile file may hold a `[pieces]` table, one sub-table per piece:

    [pieces.throughput-1core]
    benchmarks = [...]                   # what the piece runs (the search by its table's name)
    set = { "throughput.cores" = [1] }   # overrides, as `run --set` would give them

`run --profile paper --piece throughput-1core` (and `./run_all.sh --piece ...`) runs one piece
into its own sweep, `paper-throughput-1core-<time>`. Every comparison of a claim and every
curve of a figure lies within one benchmark at one core count, so a piece never needs
another's runs: no comparison mixes machines (and a sweep is not resumed on another
machine: harness/fingerprint.other_machine).
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field

from serverbench.harness.planning.profiles import ProfileError, load_profile, profile_path, table_names
from serverbench.rawdata.columns import Col


@dataclass(frozen=True)
class Piece:
    name: str
    benchmarks: tuple[str, ...]
    sets: dict = field(default_factory=dict)


def pieces(name_or_path) -> dict[str, Piece]:
    """Every piece of a profile ({} when it has none), each checked: known benchmarks, and
    overrides the profile accepts."""
    path = profile_path(name_or_path)
    with open(path, "rb") as f:
        table = tomllib.load(f).get("pieces", {})
    if not isinstance(table, dict):
        raise ProfileError(f"{path}: pieces must be a table of tables")
    known = table_names()
    out = {}
    for name, spec in table.items():
        if not isinstance(spec, dict) or set(spec) - {"benchmarks", "set"}:
            raise ProfileError(f"{path}: pieces.{name} takes benchmarks = [...] and set = {{...}} only")
        benchmarks = spec.get(Col.benchmarks)
        if not isinstance(benchmarks, list) or not benchmarks or not set(benchmarks) <= set(known):
            raise ProfileError(f"{path}: pieces.{name}.benchmarks must list some of {', '.join(known)}")
        sets = spec.get("set", {})
        if not isinstance(sets, dict):
            raise ProfileError(f"{path}: pieces.{name}.set must be a table of overrides")
        load_profile(name_or_path, sets)  # an override the profile refuses is refused here
        out[name] = Piece(name, tuple(benchmarks), dict(sets))
    return out


def piece(name_or_path, name: str) -> Piece:
    """One piece by name; a clear error naming the pieces there are."""
    found = pieces(name_or_path)
    if name not in found:
        have = ", ".join(found) or "none"
        raise ProfileError(f"profile {name_or_path!r} has no piece {name!r} (its pieces: {have})")
    return found[name]
