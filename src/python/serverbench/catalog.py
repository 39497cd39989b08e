"""The languages and benchmarks as typed objects, built once from spec/cli.json and each
benchmark's package (serverbench/benchmarks/<id>/, found by plugins.py).

Generic code asks this module what a language or a benchmark is instead of naming one:
`paper_languages()` for the paper's three, `language(id).label`, `benchmarks()` in their
tables' order, `option("spawn_metric")` for an option a benchmark declares. A new language
is a spec entry (and its source folder); a new benchmark is a spec entry and its package.

    Language   label, plot style, order (tables', figures' and the explorer's), paper
               membership, per-benchmark cost factor, port_of, build and toolchain (jdk),
               command and environment templates, runtime settings' defaults, production
    Benchmark  summary, order, family (in-process or socket server), roles, parameters,
               options, the runs.csv columns it always has, the paper's figure names it
               answers to, and its cost model (a module of its package)

The objects are rebuilt only when spec/cli.json's parsed contract is another object (a test
that overrides contract.cli_contract gets objects of its spec, nothing else to reset). A
benchmark package declares it all once, as DECLARED = plugins.Declared(...):

    options={"spawn_metric": {"default": "all_ready_s", "choices": [...], "doc": "..."}},
    columns=("params.processes", "metrics.all_ready_s", ...),  # runs.csv always has them
    figures={"fig4": "fig4_spawn"},  # the paper's short figure names, to registered figures

It sits at the bottom of the import graph (contract, plugins); the analysis registry keeps
the tables and figures a benchmark's analysis modules register, by benchmark id.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import cached_property, lru_cache
from types import ModuleType
from typing import Any

from serverbench import contract, plugins
from serverbench.rawdata.columns import Col


@dataclass(frozen=True)
class Style:
    """How a language is drawn: spec/cli.json languages.<lang>.plot."""

    label: str
    color: str | None = None
    marker: str | None = None
    dodge: float | None = None  # x offset factor on a log axis, so overlapping points separate


@dataclass(frozen=True)
class Language:
    """One language of spec/cli.json (a runtime, or a build of one)."""

    id: str
    style: Style
    order: int  # place in tables, figures and the explorer (spec `order`; paper's first)
    paper: bool  # one of the paper's three (spec `paper`)
    port_of: str  # the language whose program this one runs on another runtime release (else itself)
    build: str  # the command that builds it
    executable: str  # its entry point, relative to the repository
    jdk: int | None  # the JDK release it needs, for a JVM language (spec `jdk`)
    benchmarks: tuple[str, ...]  # the benchmarks it implements
    costs: tuple[tuple[str, float], ...]  # (benchmark, run-time factor): the plan's estimates only
    command: tuple[str, ...] = ()  # its command template ({exe}, {heap_mb}, {javaN} ...: spec `command`)
    env: tuple[tuple[str, str], ...] = ()  # (variable, template) the harness sets (spec `env`)
    setting_defaults: tuple[tuple[str, Any], ...] = ()  # (runtime setting, its default) (spec `settings`)
    production: bool = False  # a production server run beside ours (spec `production`)

    @property
    def label(self) -> str:
        return self.style.label

    def cost_factor(self, benchmark: str, default: float = 1.0) -> float:
        """How much longer than the benchmark's cost model's baseline a run of this
        language takes (spec `cost_factor`; a port costs what its original does)."""
        own = dict(self.costs)
        if benchmark in own:
            return own[benchmark]
        if self.port_of != self.id:
            return language(self.port_of).cost_factor(benchmark, default)
        return default


@dataclass(frozen=True)
class Option:
    """An analysis option a benchmark declares (e.g. spawn's metric): its default and choices."""

    name: str
    default: str
    choices: tuple[str, ...]
    doc: str
    benchmark: str


@dataclass(frozen=True)
class Benchmark:
    """One benchmark of spec/cli.json with what its package declares."""

    id: str
    summary: str
    order: int  # its tables' place among the benchmarks' (its DECLARED order)
    family: str  # "process" (one program) or "socket" (a server and a client)
    roles: tuple[str, ...]
    parameters: tuple[str, ...]  # what a profile may list for it
    options: tuple[Option, ...]
    columns: tuple[str, ...]  # raw fields runs.csv has a column for even when none of its runs is in the sweep
    figures: tuple[tuple[str, str], ...]  # (the paper's short name, the registered figure)
    metric: tuple[str, bool] | None = None  # its headline metric and whether it is a time (else a rate)
    notebook: str | None = None  # its own notebook (notebooks/<name>.ipynb), run for every sweep that ran it

    # Its harness parts (plugins.HARNESS_PARTS), each None when its package declares none:
    # the harness reads them here, never by a part's name. Kept once found: the object is
    # rebuilt when the plug-ins on the path change (spec_key).
    @cached_property
    def cost(self) -> ModuleType | None:
        """Its cost model (the package's cost.py: run_s, or socket_run_s)."""
        return plugins.part(self.id, "cost")

    @cached_property
    def limits(self) -> ModuleType | None:
        """What a run needs of the host (limits.py: process_limit(params, default))."""
        return plugins.part(self.id, "limits")

    @cached_property
    def sockets(self) -> ModuleType | None:
        """Its socket rules (sockets.py: the byte rule `mismatch` and HOOKS)."""
        return plugins.part(self.id, "sockets")

    @cached_property
    def search(self) -> ModuleType | None:
        """Its search (search.py: TABLE, NAME, PARAM, DEFAULTS, HOOKS)."""
        return plugins.part(self.id, "search")

    @cached_property
    def socket_hooks(self) -> plugins.SocketHooks:
        """Its sockets module's HOOKS, or the defaults without one."""
        return plugins.socket_hooks(self.id)

    @cached_property
    def search_hooks(self) -> plugins.SearchHooks | None:
        """Its search module's HOOKS, None without a search."""
        mod = self.search
        return plugins.hooks(mod, plugins.SearchHooks) if mod is not None else None


def _style(spec: dict, lang: str) -> Style:
    plot = spec.get("plot", {})
    return Style(plot.get("label", lang), plot.get("color"), plot.get("marker"), plot.get("dodge"))


def _language(lang: str, spec: dict, position: int) -> Language:
    return Language(
        id=lang,
        style=_style(spec, lang),
        order=int(spec.get(Col.order, 1000 + position)),
        paper=bool(spec.get(Col.paper, False)),
        port_of=spec.get("port_of", lang),
        build=spec.get("build", "scripts/build.sh"),
        executable=spec.get("executable", ""),
        jdk=spec.get("jdk"),
        benchmarks=tuple(spec.get(Col.benchmarks, ())),
        costs=tuple((b, float(f)) for b, f in spec.get("cost_factor", {}).items()),
        command=tuple(spec.get(Col.command, ())),
        env=tuple(spec.get(Col.env, {}).items()),
        setting_defaults=tuple((k, v.get("default")) for k, v in spec.get(Col.settings, {}).items()),
        production=bool(spec.get("production", False)),
    )


NO_PACKAGE = plugins.Declared(order=100, analysis=())  # a spec benchmark without a package yet


def _benchmark(bench: str, spec: dict) -> Benchmark:
    pkg = plugins.package(bench)
    d = plugins.declaration(pkg) if pkg is not None else NO_PACKAGE
    options = tuple(
        Option(name, o["default"], tuple(o.get("choices", (o["default"],))), o.get("doc", ""), bench)
        for name, o in d.options.items()
    )
    return Benchmark(
        id=bench,
        summary=spec.get("summary", ""),
        order=d.order,
        family=contract.family(bench),
        roles=tuple(contract.roles(bench)),
        parameters=contract.profile_params(bench),
        options=options,
        columns=d.columns,
        figures=tuple(d.figures.items()),
        metric=d.metric,
        notebook=d.notebook,
    )


def spec_key() -> contract.SpecKey:
    """The contract in force as a cache key: equal while the plug-ins on the path are the same
    (a cache of what is built from the benchmarks' parts is keyed by it)."""
    return contract.spec_key()


def _built() -> tuple[dict[str, Language], dict[str, Benchmark]]:
    return _objects(spec_key())


@lru_cache(maxsize=8)
def _objects(key: contract.SpecKey) -> tuple[dict[str, Language], dict[str, Benchmark]]:
    spec = key.value
    langs = {k: _language(k, v, i) for i, (k, v) in enumerate(spec[Col.languages].items())}
    benches = {k: _benchmark(k, v) for k, v in spec[Col.benchmarks].items() if not k.startswith("$")}
    return langs, benches


def languages(benchmark: str | None = None) -> tuple[Language, ...]:
    """Every language (that implements `benchmark`, when given), in the spec's order."""
    return tuple(x for x in _built()[0].values() if benchmark is None or benchmark in x.benchmarks)


def language(lang: str) -> Language:
    """A language by id (a runtime setting's key 'go[gc=...]' is its language's)."""
    langs = _built()[0]
    base = lang.split("[", 1)[0]
    if base not in langs:
        raise ValueError(f"unknown language {lang!r}; known: {', '.join(sorted(langs))}")
    return langs[base]


def ordered(langs) -> list[str]:
    """Language ids in the catalog's order; a runtime setting's key ('go[gc=nogreentea]')
    right after its language, and a language the spec does not know after all, sorted."""
    known = _built()[0]

    def key(x: str) -> tuple:
        base = x.split("[", 1)[0]
        return (known[base].order, x != base, x) if base in known else (float("inf"), False, x)

    return sorted({str(x) for x in langs}, key=key)


def presentation_order() -> tuple[str, ...]:
    """Every language id in the catalog's order (tables, figures, the explorer)."""
    return tuple(ordered(_built()[0]))


def paper_languages() -> tuple[str, ...]:
    """The paper's three languages (spec `paper`), in the catalog's order."""
    return tuple(ordered(x.id for x in _built()[0].values() if x.paper))


class StyleMap(Mapping[str, Any]):
    """{language key: one field of its plot style} ("label", "color", "marker", "dodge"), read from
    the spec at each look-up, so a table or figure module that holds one sees the spec in
    force (a language added by a spec entry alone, in a test or a fork) without re-importing.
    Keys: every language, and every runtime setting value that has its own style."""

    def __init__(self, field: str):
        self.field = field

    def _styles(self) -> dict[str, Any]:
        return {k: v[self.field] for k, v in contract.plot_styles().items() if self.field in v}

    def __getitem__(self, key: str) -> Any:
        return self._styles()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._styles())

    def __len__(self) -> int:
        return len(self._styles())


def benchmarks() -> tuple[Benchmark, ...]:
    """Every benchmark, in its package's declared order (then id)."""
    return tuple(sorted(_built()[1].values(), key=lambda b: (b.order, b.id)))


def benchmark(bench: str) -> Benchmark:
    benches = _built()[1]
    if bench not in benches:
        raise ValueError(f"unknown benchmark {bench!r}; known: {', '.join(sorted(benches))}")
    return benches[bench]


def options() -> tuple[Option, ...]:
    """Every option a benchmark declares, in benchmark order."""
    return tuple(o for b in benchmarks() for o in b.options)


def option(name: str) -> Option:
    """The option `name`, whichever benchmark declares it."""
    for o in options():
        if o.name == name:
            return o
    raise KeyError(f"no benchmark declares an option {name!r}; declared: {', '.join(o.name for o in options())}")


def option_defaults() -> dict[str, str]:
    """{option: its default} of every benchmark's options."""
    return {o.name: o.default for o in options()}


def column_renames() -> dict[str, str]:
    """{raw field: runs.csv column} of every benchmark's COLUMNS ('params.processes' ->
    'processes'): the columns runs.csv has even when none of the benchmark's runs is in it."""
    return {c: c.split(".", 1)[1] for b in benchmarks() for c in b.columns}


def figure_names() -> dict[str, str]:
    """{the paper's short figure name: registered figure}, e.g. fig4 -> fig4_spawn."""
    return {short: name for b in benchmarks() for short, name in b.figures}
