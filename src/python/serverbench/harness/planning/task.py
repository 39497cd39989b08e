"""One run the harness will make: the `Task` (what to run, which trial, under which
limits) and the names that identify it (config_id, group_id)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from serverbench import catalog, contract
from serverbench.harness.planning.resolved import freeze, thaw
from serverbench.plugins import SocketOptions

MiB = 1024**2
FROZEN = ("params", "settings", "search", "resolved_from")  # the Task's mappings


@dataclass(frozen=True)
class Task:
    """One fresh process (one trial of one configuration of one language).

    `family` says who runs it: "process" (harness.running.launch: one native process) or
    "socket" (harness.sockets: a server and a client); a socket task's `options` is its
    server row (plugins.SocketOptions: server, placement, settings), None for a process task.

    Its mappings are deeply read-only (resolved.freeze: a mapping proxy, lists as tuples),
    so no stage can change a task another stage, or the resumed sweep's match, holds: a
    changed task is a new one (`dataclasses.replace`). What a record keeps is a plain copy
    (`record_params`, resolved.thaw)."""

    benchmark: str
    language: str
    variant: str
    params: Mapping[str, Any]
    cores: int
    config_id: str
    group_id: str  # the comparison group: the same configuration in every language
    trial: int = 1
    warmup: bool = False
    timeout_s: float = 60.0
    memory_budget_bytes: int | None = None
    heap_mb: int = 1024
    process_limit: int = 1_048_576
    memory_enforcement: str = "auto"  # auto | cgroup | watchdog | none (the profile's wish)
    family: str = "process"
    # a search's step: {"name": <its search's NAME>, "step": k, "budget_bytes": B, ...}
    search: Mapping[str, Any] | None = None
    # a search's second-stage run: the rule that resolved its parameters from the search's
    # steps and what it found (recorded as the raw record's resolved_from)
    resolved_from: Mapping[str, Any] | None = None
    host_floor_bytes: int | None = None  # MemAvailable the host keeps; None = no check
    options: SocketOptions | None = None
    # runtime settings of the language asked for (spec/cli.json languages.<lang>.settings,
    # e.g. {"gc": "nogreentea"}); empty = the defaults, the build spec/cli.json names
    settings: Mapping[str, Any] = field(default_factory=dict)
    # recorded as the raw record's `stage`: always 1 now; 2 marked the extra rounds of the
    # adaptive second stage in sweeps before protocol 1 (CHANGELOG)
    stage: int = 1

    def __post_init__(self) -> None:
        for name in FROZEN:
            object.__setattr__(self, name, freeze(getattr(self, name)))

    @property
    def key(self) -> tuple:
        """What a resumed sweep matches against the raw log: (config_id, trial, warmup)."""
        return (self.config_id, self.trial, self.warmup)

    @property
    def server_language(self) -> str:
        """The language of a socket task's server; a process task's own language."""
        return self.options.server_language if self.options else self.language

    @property
    def record_params(self) -> dict:
        """The params the native record reports: the task's params (a paper-variant knob
        appears there only when the task sets it explicitly, as the audit's steps do)."""
        return thaw(self.params)

    def with_trial(self, trial: int, warmup: bool = False) -> Task:
        return replace(self, trial=trial, warmup=warmup)


def fmt_value(v) -> str:
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)


def _params_id(params: Mapping) -> str:
    return ",".join(f"{k}={fmt_value(params[k])}" for k in sorted(params))


def config_id(
    bench: str,
    language: str,
    variant: str,
    cores: int,
    params: dict,
    budget: int | None = None,
    settings: dict | None = None,
) -> str:
    """A stable, readable identity of a configuration (what is measured, not the limits).
    Runtime settings a profile chose (e.g. Go's gc) follow the language: go[gc=nogreentea].
    A search's step (bench: its table) names its budget, which is what the search measures
    under."""
    lang = contract.language_key(language, settings)
    if budget is not None:
        return f"{bench}/{lang}/{variant}/c{cores}/budget_bytes={budget}/{_params_id(params)}"
    return f"{bench}/{lang}/{variant}/c{cores}/{_params_id(params)}"


def group_id(bench: str, variant: str, cores: int, params: Mapping, options: SocketOptions | None = None) -> str:
    """The comparison group of a configuration: everything but the language (the client's;
    a socket task's server is part of it). Every language and trial of one group runs in
    one shard (one host)."""
    opts = "".join(f"/{k}={fmt_value(v)}" for k, v in (options.id_items() if options else ()))
    return f"{bench}/{variant}/c{cores}/{_params_id(params)}{opts}"


def heap_mb(budget: int | None, fraction: float) -> int:
    if not budget:
        return 1024
    return max(64, int(budget * fraction / MiB))


def process_limit(bench: str, params: dict, default: int) -> int:
    """The profile's process_limit, or what the benchmark's package says a run of these
    params needs (its limits.process_limit(params, default))."""
    limits = catalog.benchmark(bench).limits
    return limits.process_limit(params, default) if limits is not None else default
