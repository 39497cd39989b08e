"""A profile expanded into a plan: every run as a `Task` (every trial of every
configuration of every language that implements the benchmark), the max-processes
searches, and the order they run in (round-robin across languages)."""

from __future__ import annotations

import itertools
import os
import random
from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from serverbench import catalog, contract
from serverbench.harness.planning import audit_steps, search, socket_plan
from serverbench.harness.planning.profiles import ProfileError, param_keys, table_names
from serverbench.harness.planning.resolved import Profile
from serverbench.harness.planning.search import Search
from serverbench.harness.planning.task import Task, config_id, group_id, heap_mb, process_limit
from serverbench.rawdata.columns import Col


@dataclass
class Plan:
    profile: Profile  # the resolved profile (a frozen value)
    tasks: list[Task]  # every trial (warm-ups included), in plan order
    searches: list[Search]
    not_runnable: list[dict] = field(default_factory=list)
    languages: list[str] = field(default_factory=list)
    benchmarks: list[str] = field(default_factory=list)

    def groups(self) -> list[str]:
        """Comparison groups, in plan order (tasks' group_id, then searches')."""
        return list(dict.fromkeys([t.group_id for t in self.tasks] + [s.group_id for s in self.searches]))

    def only(self, groups) -> Plan:
        """The plan restricted to some comparison groups (a shard)."""
        keep = set(groups)
        return replace(
            self,
            tasks=[t for t in self.tasks if t.group_id in keep],
            searches=[s for s in self.searches if s.group_id in keep],
        )

    def languages_needed(self) -> list[str]:
        """Every language whose program a run starts: clients, socket servers, searches."""
        langs = [t.language for t in self.tasks] + [s.language for s in self.searches]
        langs += [t.options.server_language for t in self.tasks if t.options]
        langs += [s.server for s in self.searches if s.server]  # a socket search's servers
        return list(dict.fromkeys(langs))

    def run_count(self) -> int:
        return len(self.tasks) + sum(s.estimated_steps() + s.stage_runs() for s in self.searches)

    def estimate_s(self) -> float:
        return sum(estimate_task_s(t) for t in self.tasks) + sum(estimate_search_s(s) for s in self.searches)

    def group_estimates(self) -> dict[str, float]:
        out: dict[str, float] = {}
        for t in self.tasks:
            out[t.group_id] = out.get(t.group_id, 0.0) + estimate_task_s(t)
        for s in self.searches:
            out[s.group_id] = out.get(s.group_id, 0.0) + estimate_search_s(s)
        return out


def machine_cpus() -> int:
    return len(os.sched_getaffinity(0))


def as_list(v, what):
    if v is None:
        return None
    if isinstance(v, str):
        v = [x.strip() for x in v.split(",") if x.strip()]
    v = list(v)
    if not v:
        raise ProfileError(f"no {what} given")
    return v


def resolve_cores(spec_cores: list, machine: int, oversubscribe: bool, skip: bool, where: str):
    """(runnable core counts, not runnable ones). 'max' is the harness's CPU count."""
    run, skipped = [], []
    for c in spec_cores:
        c = machine if c == "max" else c
        if c > machine and not oversubscribe:
            if skip:
                skipped.append(c)
                continue
            raise ProfileError(
                f"{where}: {c} cores asked but this machine lets the harness use {machine} CPU(s); "
                "use --oversubscribe to run anyway, or skip_unavailable_cores = true"
            )
        run.append(c)
    return sorted(dict.fromkeys(run)), sorted(dict.fromkeys(skipped))


def grid(bench: str, b: dict) -> list[dict]:
    keys = param_keys(bench)
    return [dict(zip(keys, c)) for c in itertools.product(*(b[k] for k in keys))]


def native_benchmark(table: str) -> str:
    """The benchmark a profile table runs (a search's table runs the benchmark declaring it)."""
    found = search.of_table(table)
    return found.benchmark if found else table


def runs_here(lang: str, table: str, variant: str) -> bool:
    """Whether spec/cli.json says `lang` implements this table's benchmark in this variant."""
    return contract.implements(lang, native_benchmark(table)) and variant in contract.variants(lang)


def check_request(languages, benchmarks, variant: str) -> None:
    """Names asked for on the command line: known, and every language able to run
    something asked of it (else: exit 2 naming the language and the benchmark)."""
    for lang in languages or []:
        if lang not in contract.languages():
            raise ProfileError(f"unknown language {lang!r}; known: {', '.join(contract.languages())}")
    known = table_names()
    for b in benchmarks or []:
        if b not in known:
            raise ProfileError(f"unknown benchmark {b!r}; known: {', '.join(known)}")
    for lang in languages or []:
        if variant not in contract.variants(lang):
            raise ProfileError(
                f"{lang} does not implement the variant {variant!r} "
                f"(spec/cli.json: {', '.join(contract.variants(lang))})"
            )
        if benchmarks and not any(runs_here(lang, b, variant) for b in benchmarks):
            raise ProfileError(
                f"{lang} does not implement the benchmark {', '.join(benchmarks)} "
                f"(spec/cli.json languages.{lang}.benchmarks: "
                f"{', '.join(catalog.language(lang).benchmarks)})"
            )


def make_plan(prof: Profile, languages=None, benchmarks=None, oversubscribe=False, machine=None) -> Plan:
    machine = machine or machine_cpus()
    languages = as_list(languages, "languages")
    benchmarks = as_list(benchmarks, "benchmarks")
    variant = prof.variant
    check_request(languages, benchmarks, variant)
    plan = Plan(prof, [], [])
    for bench in table_names():
        b = prof[bench]
        if benchmarks is not None:
            if bench not in benchmarks:
                continue
            if Col.languages not in b:  # no table in the profile at all
                raise ProfileError(f"profile {prof[Col.name]!r} has no [{bench}] table")
        elif not b.get(Col.enabled):
            continue
        langs = [
            lang
            for lang in b[Col.languages]
            if (languages is None or lang in languages) and runs_here(lang, bench, variant)
        ]
        cores, skipped = resolve_cores(
            b[Col.cores], machine, oversubscribe, b[Col.skip_unavailable_cores], f"{bench}.cores"
        )
        # an also-grid may name its own core counts; they join the table's, in order
        main_cores, also_cores = cores, {}
        for i, extra in enumerate(b.get("also", [])):
            if Col.cores in extra:
                also_cores[i], more = resolve_cores(
                    extra[Col.cores],
                    machine,
                    oversubscribe,
                    extra.get(Col.skip_unavailable_cores, b[Col.skip_unavailable_cores]),
                    f"{bench}.also[{i}].cores",
                )
                cores = sorted(set(cores) | set(also_cores[i]))
                skipped = sorted(set(skipped) | set(more))
        plan.not_runnable += [
            {"benchmark": bench, "cores": c, "reason": f"this machine lets the harness use {machine} CPU(s)"}
            for c in skipped
            if c not in cores
        ]
        if langs and cores:
            plan.benchmarks.append(bench)
        for lang in langs:
            if lang not in plan.languages:
                plan.languages.append(lang)
            table = {**b, **b.get(Col.per_language, {}).get(lang, {})}
            tables = [
                (table, main_cores),
                *(
                    ({**table, **extra}, also_cores.get(i, main_cores))
                    for i, extra in enumerate(b.get("also", []))
                    if lang in extra.get(Col.languages, [lang])
                ),
            ]
            for c in cores:
                declared = search.of_table(bench)
                if declared:
                    plan.searches += _searches(lang, variant, c, table, declared)
                    continue
                for t, t_cores in tables:
                    if c not in t_cores:
                        continue
                    for params in grid(bench, t):
                        if t.get(Col.steps) == "knobs":  # the audit: fair, paper, single-knob steps
                            for s in audit_steps.steps(bench, lang):
                                plan.tasks += _trials(bench, lang, s.variant, c, {**params, **s.knobs}, t)
                        else:
                            for st in _settings_grid(lang, t):
                                plan.tasks += _trials(bench, lang, variant, c, params, t, st)
    socket_plan.check_split(plan, machine, oversubscribe)
    return plan


def _searches(lang: str, variant: str, cores: int, table: dict, declared) -> list[Search]:
    """One language's search at one core count; for a socket benchmark one per server and
    placement of the table's options (socket_plan.expand)."""
    if contract.family(declared.benchmark) != "socket":
        return [Search(lang, variant, cores, table, declared)]
    if "client" not in contract.language_roles(lang, declared.benchmark):
        return []  # a socket search's language is its client (e.g. IM's load generator)
    servers = socket_plan.ServerTable.of(table[Col.options], f"{declared.table}.options")
    if declared.replicated:  # IM: the searches its part makes of the table's server rows
        rows = [o for _, o in socket_plan.expand(declared.benchmark, lang, variant, {}, servers)]
        specs = declared.part.searches(table, rows)
        return [Search(lang, variant, cores, table, declared, sp.options, sp) for sp in specs]
    out = []
    for v, opts in socket_plan.expand(declared.benchmark, lang, variant, table.get(Col.params, {}), servers):
        out.append(Search(lang, v, cores, table, declared, opts))
    return out


def _settings_grid(lang: str, b: dict) -> list[dict]:
    """Every combination of the runtime settings the table lists for lang
    (settings = { go = { gc = ["greentea", "nogreentea"] } }); [{}] when none."""
    chosen = b.get(Col.settings, {}).get(lang, {})
    names = sorted(chosen)
    return [dict(zip(names, combo)) for combo in itertools.product(*(chosen[n] for n in names))]


def _trials(bench: str, lang: str, variant: str, cores: int, params: dict, b: dict, settings=None) -> list[Task]:
    params = {**contract.param_defaults(bench), **params}
    settings = dict(settings or {})
    first = Task(
        benchmark=bench,
        language=lang,
        variant=variant,
        params=params,
        cores=cores,
        config_id=config_id(bench, lang, variant, cores, params, settings=settings),
        group_id=group_id(bench, variant, cores, params),
        timeout_s=b[Col.timeout_s],
        memory_budget_bytes=b[Col.memory_budget_bytes],
        heap_mb=heap_mb(b[Col.memory_budget_bytes], b[Col.heap_fraction]),
        process_limit=process_limit(bench, params, b[Col.process_limit]),
        memory_enforcement=b[Col.memory_enforcement],
        family=contract.family(bench),
        settings=settings,
    )
    warm = [first.with_trial(0, warmup=True)] if b[Col.warmup] else []
    tasks = warm + [first.with_trial(k) for k in range(1, b[Col.trials] + 1)]
    if first.family == "socket":  # one task per client x server x placement x settings row
        return socket_plan.expand_tasks(tasks, b[Col.options], f"{bench}.options")
    return tasks


def schedule(plan: Plan, done: set, seed: int) -> list:
    """The pending work in the order it runs: Tasks, then the Searches.

    Round-robin: round k holds trial k of every configuration; within a round the
    comparison groups come in a seeded random order and, inside a group, every language
    runs its trial k before any language runs trial k+1, the language that goes first
    rotating with k (and with the group). A configuration's warm-up goes just before its
    first pending trial. Deterministic given the plan, what is done, and the seed."""
    rng = random.Random(seed)
    by_group: dict[str, dict[str, list[Task]]] = {}
    for t in plan.tasks:
        if t.warmup or t.key in done:
            continue
        by_group.setdefault(t.group_id, {}).setdefault(t.language, []).append(t)
    warm = {t.config_id: t for t in plan.tasks if t.warmup and t.key not in done}
    groups = sorted(by_group)
    rounds = max((len(ts) for g in by_group.values() for ts in g.values()), default=0)
    out: list = []
    for k in range(rounds):
        order = list(enumerate(groups))
        rng.shuffle(order)
        for gi, g in order:
            langs = [lang for lang in plan.languages if lang in by_group[g]]
            shift = (k + gi) % len(langs)
            for lang in langs[shift:] + langs[:shift]:
                pending = by_group[g][lang]
                if k < len(pending):
                    t = pending[k]
                    if t.config_id in warm:
                        out.append(warm.pop(t.config_id))
                    out.append(t)
    return out + sorted(plan.searches, key=lambda s: (s.order, s.key))


# --- rough per-run costs on a 2-core machine, for estimates and shard balance only --------
# (calibrated on a quick sweep of the shared 2-core VM: Akka start-up ~1 s, spawn ~25 us/actor)
def estimate_run_s(bench: str, language: str, params: Mapping) -> float:
    """A run's start-up plus its benchmark's own cost (serverbench/benchmarks/<id>/cost.py,
    run_s(language, params)); 1 s where the benchmark gives none. The start-up is the spec's
    (languages.<lang>.startup_s), read at each estimate."""
    cost = catalog.benchmark(native_benchmark(bench)).cost
    start = contract.startup_costs("startup_s").get(language, 1.0)
    return start + (cost.run_s(language, params) if cost else 1.0)


# Socket runs (measured on a 2-core VM; docs/sockets.md): a server's start-up;
# the benchmark's own cost is its package's (cost.socket_run_s(task, server)).
def estimate_socket_s(t: Task) -> float:
    server = t.server_language
    start = contract.startup_costs("server_startup_s").get(server, 0.5) + 0.3  # languages.<lang>.server_startup_s
    cost = catalog.benchmark(t.benchmark).cost
    return start + (cost.socket_run_s(t, server) if cost else 1.0)


def estimate_task_s(t: Task) -> float:
    if t.family == "socket":
        return min(t.timeout_s, estimate_socket_s(t))
    return min(t.timeout_s, estimate_run_s(t.benchmark, t.language, t.params))


def estimate_search_s(s: Search) -> float:
    if s.kind:  # a replicated search: the walk to the value its part expects, each step's runs costed
        steps, follow = s.estimated_walk()
        total = sum(n * estimate_task_s(s.run_task(v, 0, "grid", 1, 1)) for v, n in steps)
        return total + sum(estimate_task_s(s.loss_task(f, 0, 1)) for f in follow)
    total, n, cfg = 0.0, s.settings[Col.start], s.settings
    for k in range(s.estimated_steps()):
        task = s.task(n, k)
        est = (
            estimate_task_s(task)
            if task.family == "socket"
            else estimate_run_s(s.declared.benchmark, s.language, task.params)
        )
        total += min(cfg[Col.timeout_s], est)
        if est >= cfg[Col.timeout_s]:  # a timeout ends the growth (bisection after it)
            total += cfg[Col.timeout_s] * 0.7 if cfg[Col.refine_steps] else 0
            break
        n = s.value(n, k)
    # the second stage: its runs cost as the last step (its parameters are resolved at run time)
    return total + s.stage_runs() * (estimate_task_s(s.task(cfg[Col.start], 0)) if s.stage_runs() else 0.0)
