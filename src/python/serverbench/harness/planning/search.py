"""A search as a plan item: the largest value of one parameter of a benchmark that runs
under a memory budget (the paper's Fig. 4a: spawn's processes). A benchmark declares its
search in its package (serverbench/benchmarks/<id>/search.py: TABLE, NAME, PARAM, DEFAULTS,
BYTES_PER_STEP_UNIT); a profile's table of that name ([spawn_max]) holds its settings,
checked here. One `Search` is one language's search at one core count under one budget;
running.searching runs it (growth by a factor, then bisection)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

from serverbench import contract, plugins
from serverbench.harness.planning.task import Task, config_id, heap_mb, process_limit
from serverbench.harness.planning.values import ProfileError
from serverbench.harness.planning.values import bytes_value as _bytes
from serverbench.harness.planning.values import int_value as _int

GiB = 1024**3
# The settings of a search table beyond a benchmark table's, with the harness's defaults (a
# benchmark's DEFAULTS add or replace some; start and budget_bytes are always its own).
SETTINGS = {
    "start": None,
    "factor": 2.0,
    "max_steps": 12,
    "refine_steps": 0,
    "budget_bytes": None,
    "host_floor_bytes": GiB,
    "timeout_bisect_steps": 3,
}
HOST_FLOOR_BYTES = SETTINGS["host_floor_bytes"]  # the MemAvailable a run keeps, unless it says otherwise


@dataclass(frozen=True)
class Declared:
    """A benchmark's search as its package declares it."""

    benchmark: str
    table: str  # the profile table, and the first part of a step's config_id
    name: str  # the raw record's search.name
    param: str  # the parameter grown
    defaults: dict  # SETTINGS with the benchmark's DEFAULTS
    bytes_per_step_unit: int  # where the progress estimate expects the failure: budget / this


@lru_cache(maxsize=1)
def _declared() -> tuple[Declared, ...]:
    out = []
    for bench in contract.benchmarks():
        part = plugins.part(bench, "search")
        if part is not None:
            defaults = {**SETTINGS, **part.DEFAULTS}
            out.append(Declared(bench, part.TABLE, part.NAME, part.PARAM, defaults, part.BYTES_PER_STEP_UNIT))
    return tuple(out)


def declared() -> dict[str, Declared]:
    """Every declared search by its table, in the contract's benchmark order."""
    return {d.table: d for d in _declared()}


def of_table(table: str) -> Declared | None:
    """The search a profile table holds, or None for a benchmark's own table."""
    return declared().get(table)


def names() -> set[str]:
    """Every declared search's record name (a raw record's search.name)."""
    return {d.name for d in _declared()}


def check_settings(table: str, given: dict, b: dict) -> dict:
    """b (a table's checked run settings) with the search's settings from `given`, checked."""
    d = declared()[table]
    b = dict(b)
    for k, dv in d.defaults.items():
        b[k] = given.get(k, dv)
    b["start"] = _int(b["start"], f"{table}.start", minimum=1)
    b["max_steps"] = _int(b["max_steps"], f"{table}.max_steps", minimum=1)
    b["refine_steps"] = _int(b["refine_steps"], f"{table}.refine_steps", minimum=0)
    b["timeout_bisect_steps"] = _int(b["timeout_bisect_steps"], f"{table}.timeout_bisect_steps", minimum=0)
    b["budget_bytes"] = _bytes(b["budget_bytes"], f"{table}.budget_bytes")
    b["host_floor_bytes"] = _bytes(b["host_floor_bytes"], f"{table}.host_floor_bytes")
    if not isinstance(b["factor"], (int, float)) or isinstance(b["factor"], bool) or b["factor"] <= 1:
        raise ProfileError(f"{table}.factor must be a number above 1, got {b['factor']!r}")
    b["factor"] = float(b["factor"])
    b["memory_budget_bytes"] = b["budget_bytes"]
    return b


@dataclass(frozen=True)
class Search:
    """One language's search at one core count under one budget (its table's settings)."""

    language: str
    variant: str
    cores: int
    settings: dict  # the resolved search table (start, factor, budget_bytes, ...)
    declared: Declared

    @property
    def budget(self) -> int:
        return self.settings["budget_bytes"]

    @property
    def key(self) -> str:
        return f"{self.declared.name}/{self.language}/{self.variant}/c{self.cores}/budget_bytes={self.budget}"

    @property
    def group_id(self) -> str:
        """Every language's search at this core count and budget is one comparison group."""
        return f"{self.declared.name}/{self.variant}/c{self.cores}/budget_bytes={self.budget}"

    def task(self, n: int, step: int) -> Task:
        d, s, params = self.declared, self.settings, {self.declared.param: n}
        return Task(
            benchmark=d.benchmark,
            language=self.language,
            variant=self.variant,
            params=params,
            cores=self.cores,
            config_id=config_id(d.table, self.language, self.variant, self.cores, params, self.budget),
            group_id=self.group_id,
            trial=1,
            timeout_s=s["timeout_s"],
            memory_budget_bytes=self.budget,
            heap_mb=heap_mb(self.budget, s["heap_fraction"]),
            process_limit=process_limit(d.benchmark, params, s["process_limit"]),
            memory_enforcement=s["memory_enforcement"],
            search={"name": d.name, "step": step, "budget_bytes": self.budget},
            host_floor_bytes=s["host_floor_bytes"],
        )

    def estimated_steps(self) -> int:
        # expect failure near budget / the declared bytes per unit, for a progress estimate only
        s, unit = self.settings, self.declared.bytes_per_step_unit
        guess = max(1, math.ceil(math.log(max(2.0, self.budget / unit / s["start"])) / math.log(s["factor"])) + 1)
        return min(s["max_steps"], guess) + s["refine_steps"]
