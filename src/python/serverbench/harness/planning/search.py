"""The max-processes search (Fig. 4a): the largest N of spawn that runs under a memory
budget. N grows by a factor until a run fails; then bisection between the last success
and the failure. A failure that is a timeout does not establish a limit, so a timed-out
step is bisected further (timeout_bisect_steps) until a classified failure (e.g.
over_memory_budget, crashed) or a success below it. Before every step the host must keep
its floor: MemAvailable - budget >= host_floor_bytes, else the step is refused (no run)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from serverbench.harness.planning.task import Task, config_id, heap_mb, process_limit

SEARCH_NAME = "max_processes"


@dataclass(frozen=True)
class Search:
    """One language's search at one core count under one budget (settings of [spawn_max])."""

    language: str
    variant: str
    cores: int
    settings: dict  # the resolved [spawn_max] table (start, factor, budget_bytes, ...)

    @property
    def budget(self) -> int:
        return self.settings["budget_bytes"]

    @property
    def key(self) -> str:
        return f"{SEARCH_NAME}/{self.language}/{self.variant}/c{self.cores}/budget_bytes={self.budget}"

    @property
    def group_id(self) -> str:
        """Every language's search at this core count and budget is one comparison group."""
        return f"{SEARCH_NAME}/{self.variant}/c{self.cores}/budget_bytes={self.budget}"

    def task(self, n: int, step: int) -> Task:
        s, params = self.settings, {"processes": n}
        return Task(
            benchmark="spawn",
            language=self.language,
            variant=self.variant,
            params=params,
            cores=self.cores,
            config_id=config_id("spawn_max", self.language, self.variant, self.cores, params, self.budget),
            group_id=self.group_id,
            trial=1,
            timeout_s=s["timeout_s"],
            memory_budget_bytes=self.budget,
            heap_mb=heap_mb(self.budget, s["heap_fraction"]),
            process_limit=process_limit("spawn", params, s["process_limit"]),
            memory_enforcement=s["memory_enforcement"],
            search={"name": SEARCH_NAME, "step": step, "budget_bytes": self.budget},
            host_floor_bytes=s["host_floor_bytes"],
        )

    def estimated_steps(self) -> int:
        # expect failure near budget / ~1 KiB per process, for a progress estimate only
        s = self.settings
        guess = max(1, math.ceil(math.log(max(2.0, self.budget / 1024 / s["start"])) / math.log(s["factor"])) + 1)
        return min(s["max_steps"], guess) + s["refine_steps"]
