"""A search as a plan item: the largest value of one parameter of a benchmark that runs
under a memory budget (the paper's Fig. 4a: spawn's processes; IM's offered rate). A
benchmark declares its search in its package (serverbench/benchmarks/<id>/search.py: TABLE,
NAME, PARAM, DEFAULTS, BYTES_PER_STEP_UNIT and HOOKS, a plugins.SearchHooks: a geometric grid
(step k runs round(start x factor^k)), fixed params (the table holds one value of each other
parameter of the benchmark), the round's parameter (1 in a step) and check(settings); a step
passes when its run is ok); a
profile's table of that name ([spawn_max], [im_rate]) holds its settings, checked here. One
`Search` is one language's search at one core count under one budget (for a socket
benchmark: against one server, in one placement); running.searching runs it (growth by a
factor, then bisection, then the stage)."""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from types import MappingProxyType, ModuleType

from serverbench import catalog, contract, plugins
from serverbench.harness.planning import socket_plan
from serverbench.harness.planning.resolved import freeze
from serverbench.harness.planning.task import Task, config_id, heap_mb, process_limit
from serverbench.harness.planning.values import ProfileError
from serverbench.harness.planning.values import bytes_value as _bytes
from serverbench.harness.planning.values import int_value as _int
from serverbench.harness.planning.values import param_values as _param_values
from serverbench.rawdata.columns import Col

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
HOST_FLOOR_BYTES = SETTINGS[Col.host_floor_bytes]  # the MemAvailable a run keeps, unless it says otherwise


@dataclass(frozen=True)
class Declared:
    """A benchmark's search as its package declares it."""

    benchmark: str
    table: str  # the profile table, and the first part of a step's config_id
    name: str  # the raw record's search.name
    param: str  # the parameter grown
    defaults: Mapping  # SETTINGS with the benchmark's DEFAULTS (read-only: shared by every caller)
    bytes_per_step_unit: int | None  # where the progress estimate expects the failure: budget / this
    part: ModuleType  # the declaring module (its HOOKS; a replicated search's functions)

    @property
    def hooks(self) -> plugins.SearchHooks:
        return plugins.hooks(self.part, plugins.SearchHooks)

    @property
    def geometric(self) -> bool:
        return self.hooks.geometric

    @property
    def round_param(self) -> str | None:
        return self.hooks.round_param

    @property
    def fixed_params(self) -> tuple[str, ...]:
        """The benchmark's parameters the search table holds one value of (fixed_params)."""
        if not self.hooks.fixed_params:
            return ()
        return tuple(k for k in contract.profile_params(self.benchmark) if k not in (self.param, self.round_param))

    @property
    def replicated(self) -> bool:
        """A benchmark whose DEFAULTS name search kinds (IM) declares replicated searches:
        its part gives searches(), grid(), judge_run(), judge_step(), rerun_reason(),
        loss_runs(), expected_value() and NAMES (harness.running.replicated)."""
        return Col.kinds in self.defaults

    def judge(self, rec: dict, settings: Mapping) -> tuple[bool, str | None, bool]:
        """(passed, why not, establishes a limit) of one step's record."""
        status = rec.get(Col.status)
        ok = status == "ok"
        # a timeout establishes no limit (running.searching bisects it further)
        return ok, None if ok else f"status {status}: {rec.get(Col.status_reason)}", status not in ("ok", "timeout")


def _declared() -> tuple[Declared, ...]:
    # built once per contract in force (catalog.spec_key): a plug-in's search is seen once it
    # is on the path; a report asks ~10,000 times (every profile a piece resolves)
    return _declared_of(catalog.spec_key())


@lru_cache(maxsize=8)
def _declared_of(key: Hashable) -> tuple[Declared, ...]:
    out = []
    for bench in contract.benchmarks():
        part = catalog.benchmark(bench).search
        if part is not None:
            defaults = MappingProxyType({**SETTINGS, **part.DEFAULTS})
            out.append(Declared(bench, part.TABLE, part.NAME, part.PARAM, defaults, part.BYTES_PER_STEP_UNIT, part))
    return tuple(out)


def declared() -> dict[str, Declared]:
    """Every declared search by its table, in the contract's benchmark order."""
    return {d.table: d for d in _declared()}


def of_table(table: str) -> Declared | None:
    """The search a profile table holds, or None for a benchmark's own table."""
    return declared().get(table)


def names() -> set[str]:
    """Every declared search's record name (a raw record's search.name)."""
    out = {d.name for d in _declared()}
    for d in _declared():
        if d.replicated:
            out |= set(d.part.NAMES)
    return out


def allowed_keys(table: str) -> set[str]:
    """The keys a search's table may hold beyond a benchmark table's common ones."""
    d = declared()[table]
    return set(SETTINGS) | set(d.defaults) | set(d.fixed_params)


def check_settings(table: str, given: dict, b: dict) -> dict:
    """b (a table's checked run settings) with the search's settings from `given`, checked."""
    d = declared()[table]
    b = dict(b)
    for k, dv in d.defaults.items():
        b[k] = given.get(k, dv)
    flags = {f.param: f for f in contract.flags(d.benchmark).values() if f.param}
    defaults = contract.param_defaults(d.benchmark)
    fixed = {}
    for k in d.fixed_params:
        if k not in given and k not in defaults:
            raise ProfileError(f"{table}.{k} is required (one value)")
        values = _param_values(given.get(k, defaults.get(k)), f"{table}.{k}", flags[k])
        if len(values) != 1:
            raise ProfileError(f"{table}.{k}: a search runs at one value of it, got {values!r}")
        fixed[k] = values[0]
    b[Col.params] = fixed
    b[Col.start] = _int(b[Col.start], f"{table}.start", minimum=1)
    b[Col.max_steps] = _int(b[Col.max_steps], f"{table}.max_steps", minimum=1)
    b[Col.refine_steps] = _int(b[Col.refine_steps], f"{table}.refine_steps", minimum=0)
    b[Col.timeout_bisect_steps] = _int(b[Col.timeout_bisect_steps], f"{table}.timeout_bisect_steps", minimum=0)
    b[Col.budget_bytes] = _bytes(b[Col.budget_bytes], f"{table}.budget_bytes")
    b[Col.host_floor_bytes] = _bytes(b[Col.host_floor_bytes], f"{table}.host_floor_bytes")
    factor = b[Col.factor]
    if not isinstance(factor, (int, float)) or isinstance(factor, bool) or factor <= 1:
        raise ProfileError(f"{table}.factor must be a number above 1, got {factor!r}")
    b[Col.factor] = float(factor)
    b[Col.memory_budget_bytes] = b[Col.budget_bytes]
    why = d.hooks.check(b) if d.hooks.check is not None else None
    if why:
        raise ProfileError(why)
    return b


@dataclass(frozen=True)
class Search:
    """One language's search at one core count under one budget (its table's settings)."""

    language: str
    variant: str
    cores: int
    settings: Mapping  # the resolved search table (start, factor, budget_bytes, ...), read-only
    declared: Declared
    # a socket benchmark's search runs against one server row; None for a process benchmark
    options: plugins.SocketOptions | None = None
    # a replicated search (Declared.replicated): what its part's searches() made of the table
    spec: plugins.SearchSpec | None = None

    def __post_init__(self) -> None:
        # deeply read-only, as a Task's mappings: no stage changes what another one holds
        object.__setattr__(self, "settings", freeze(self.settings))

    @property
    def kind(self) -> str:
        """A replicated search's kind; "" for a growth search."""
        return self.spec.kind if self.spec else ""

    @property
    def budget(self) -> int:
        own = self.spec.budget_bytes if self.spec else None
        return self.settings[Col.budget_bytes] if own is None else own

    @property
    def name(self) -> str:
        """The raw records' search.name."""
        return self.spec.name if self.spec else self.declared.name

    @property
    def order(self) -> int:
        return self.spec.order if self.spec else 0

    @property
    def _tag(self) -> str:
        return self.spec.tag if self.spec else ""

    @property
    def server(self) -> str | None:
        return self.options.server_language if self.options else None

    @property
    def _opts(self) -> str:
        return socket_plan.options_id(self.options) if self.options else ""

    @property
    def key(self) -> str:
        where = f"{self.variant}/c{self.cores}/budget_bytes={self.budget}"
        return f"{self.name}/{self.language}/{where}{self._opts}{self._tag}"

    @property
    def group_id(self) -> str:
        """Every language's (every server's) search at this core count and budget is one comparison group."""
        return f"{self.name}/{self.variant}/c{self.cores}/budget_bytes={self.budget}{self._tag}"

    def _task(self, table: str, params: dict, trial: int, **extra) -> Task:
        d, s, sp = self.declared, self.settings, self.spec
        # a memory-cap search sets its own time limit and heap fraction; else the table's
        timeout_s = s[Col.timeout_s] if sp is None or sp.timeout_s is None else sp.timeout_s
        fraction = s[Col.heap_fraction] if sp is None or sp.heap_fraction is None else sp.heap_fraction
        # what the step measures: without the round and the limits the harness sets (as a socket task's ids)
        ident = socket_plan.measured_params({k: v for k, v in params.items() if k != d.round_param})
        return Task(
            benchmark=d.benchmark,
            language=self.language,
            variant=self.variant,
            params=params,
            cores=self.cores,
            config_id=config_id(table, self.language, self.variant, self.cores, ident, self.budget) + self._opts,
            group_id=self.group_id,
            trial=trial,
            timeout_s=timeout_s,
            memory_budget_bytes=self.budget,
            heap_mb=heap_mb(self.budget, fraction),  # a memory-cap search: -Xmx = fraction x cap
            process_limit=process_limit(d.benchmark, params, s[Col.process_limit]),
            memory_enforcement=s[Col.memory_enforcement],
            family=contract.family(d.benchmark),
            options=self.options,
            host_floor_bytes=s[Col.host_floor_bytes],
            **extra,
        )

    def task(self, n, step: int) -> Task:
        d = self.declared
        params = {**self.settings.get(Col.params, {}), d.param: n}
        if d.round_param:
            params[d.round_param] = 1
        return self._task(d.table, params, 1, search={"name": d.name, "step": step, "budget_bytes": self.budget})

    def run_task(self, value, step: int, phase: str, run: int, attempt: int) -> Task:
        """One attempt of run `run` (1-based; its round) of a replicated search's step."""
        assert self.spec is not None, "only a replicated search runs replicated steps"
        params = {**self.settings.get(Col.params, {}), **self.spec.params, self.spec.param: value}
        if self.declared.round_param:
            params[self.declared.round_param] = run
        search = {"name": self.name, "step": step, "phase": phase, "run": run, "attempt": attempt}
        return self._rtask(params, run, search)

    def loss_task(self, follow: plugins.FollowUp, index: int, attempt: int) -> Task:
        """A follow-up run of a replicated search (IM: a chaos loss run), resolved from its result."""
        params = {**self.settings.get(Col.params, {}), **(self.spec.params if self.spec else {}), **follow.params}
        if self.declared.round_param:
            params[self.declared.round_param] = follow.run
        name = follow.resolved_from["rule"]
        search = {"name": name, "step": index, "phase": "loss", "run": follow.run, "attempt": attempt}
        return self._rtask(params, follow.run, search, name, resolved_from=follow.resolved_from)

    def _rtask(self, params: dict, run: int, search: dict, table: str | None = None, **extra) -> Task:
        search = {**search, "budget_bytes": self.budget}
        if self.options and self.options.server_settings:
            search[Col.server_settings] = dict(self.options.server_settings)
        if self.options and self.options.server_cap:
            search["cap_bytes"] = self.budget
        return self._task(table or self.name, params, run, search=search, **extra)

    def estimated_walk(self) -> tuple[list[tuple], list[plugins.FollowUp]]:
        """([(value, runs)] of the steps, [follow-up runs]) a replicated search makes when
        the server's value is what its part expects (planning.walks on that value)."""
        from serverbench.harness.planning import walks

        part = self.declared.part
        params = self.spec.params if self.spec else {}
        expect = part.expected_value(self.kind, params, self.settings, self.server, self.budget)
        steps: list[tuple] = []

        def step(v, phase, runs):
            steps.append((v, runs or self.settings[Col.step_runs]))
            return walks.PASS if v <= expect else walks.FAIL

        result = walks.walk(self, step)
        return steps, part.loss_runs(self.settings, self.kind, self.server, result)

    def estimated_runs(self) -> tuple[int, int]:
        """(runs, follow-up runs) of estimated_walk."""
        steps, follow = self.estimated_walk()
        return sum(n for _, n in steps), len(follow)

    def stage_runs(self) -> int:
        if self.kind:
            return self.estimated_runs()[1]
        return 0

    def value(self, n, step: int):
        """The value of the step after a passing step n (the `step`-th, 0-based)."""
        s, cap = self.settings, self.cap
        if self.declared.geometric:
            return min(cap, round(s[Col.start] * s[Col.factor] ** (step + 1)))
        return min(cap, max(n + 1, math.ceil(n * s[Col.factor])))

    @property
    def cap(self):
        d = self.declared
        flag = contract.flag_of(d.benchmark, d.param)
        return 200_000_000 if flag is None or flag.max is None else flag.max

    def estimated_steps(self) -> int:
        s, unit = self.settings, self.declared.bytes_per_step_unit
        if self.kind:
            return self.estimated_runs()[0]
        # expect failure near budget / the declared bytes per unit, for a progress estimate only
        guess = max(1, math.ceil(math.log(max(2.0, self.budget / unit / s[Col.start])) / math.log(s[Col.factor])) + 1)
        return min(s[Col.max_steps], guess) + s[Col.refine_steps]
