"""The plug-in loader of the benchmark packages (docs/extending.md), at the bottom of the
import graph: it imports nothing of serverbench statically, so the harness and the analysis
can ask it for a benchmark's parts without importing the packages that plug into them.

A benchmark package is found one of two ways, as pytest finds its plug-ins: the built-in
ones are the sub-packages of `serverbench.benchmarks` (a folder is its declaration; its
name is the benchmark's id in spec/cli.json, or a harness table of it), and a package
outside the tree is an entry point of the group `serverbench.benchmarks` in its
distribution's metadata (`[project.entry-points."serverbench.benchmarks"] toy =
"toy_benchmark"` in its pyproject.toml). Either way the package declares itself once in its
`__init__.py`, typed (`Declared` below): its place among the benchmarks, the modules that
declare its parts to the analysis (in order), and the harness parts it has:

    DECLARED = plugins.Declared(order=1, analysis=("tables", "figures", "claims", "report"),
                                parts=("cost",))

`tables` declares its processed tables (analysis.reading.registry.TableSpec: keys, metrics,
the explorer's defaults), `figures` its figures, `claims` its claims, `report` its report
sections; a benchmark has the ones it needs. The harness asks for a declared part by
`part(id, name)`: "cost" (what a run costs, for the plan's estimates), for a socket
benchmark "sockets" (its byte accounting and CPU placement), and optionally "search" (a
search it declares: spawn's max processes) and "limits" (the process limit a run needs);
they import nothing of the analysis, so the harness may load them. A part not declared is
None, never probed for. A sockets or search module declares what the harness may ask of it
as `HOOKS` (`SocketHooks`, `SearchHooks`): the harness reads typed fields, never probes a
module for a name. analysis.reading.registry.load() collects what `load()`'s modules
declare into one frozen Registry, per set of plug-ins, so every entry point (the command
line, a notebook, a test) sees every benchmark without a call of its own to forget; the
generic stages name no benchmark.

A package outside the tree brings its spec entry with it, beside its `__init__.py`: a
benchmark's `spec.json` ({"cli": its spec/cli.json entry, "languages": the languages whose
programs run it, "record": its native record schema's $defs entry, "claims": its claims'
protocol entries}), a language's `language.json` (its spec/cli.json entry, the executable
relative to the package's folder; entry-point group `serverbench.languages`). `contract`,
`rawdata.records` and `protocol` merge them into what they read from spec/ (`spec_files()`
keys their caches), so a plug-in edits no file of the tree.

No module-level registry: what is found is a function of sys.path (the folder and the
installed distributions' metadata), memoised by it, and an imported module is Python's own
(sys.modules), so a distribution put on the path is found at the next call. Within
`builtin_only()` no plug-in is found at all: the docs generator describes the package
itself, not what a user installed beside it.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.metadata
import importlib.util
import json
import pkgutil
import sys
from collections.abc import Callable, Iterator, Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from types import MappingProxyType, ModuleType
from typing import Any

from serverbench.rawdata.columns import Col

PACKAGE = "serverbench.benchmarks"
GROUP = "serverbench.benchmarks"  # the entry-point group of benchmark packages outside the tree
LANGUAGE_GROUP = "serverbench.languages"  # the entry-point group of language packages
BENCHMARK_SPEC = "spec.json"  # a plug-in benchmark package's spec entry, beside its __init__.py
LANGUAGE_SPEC = "language.json"  # a language package's spec/cli.json entry
HARNESS_PARTS = ("cost", "sockets", "search", "limits")  # what a package's `parts` may name


@dataclass(frozen=True, slots=True)
class Declared:
    """What a benchmark package declares once, as `DECLARED` in its __init__.py: its tables'
    place among the benchmarks', the modules that declare its analysis parts (in order), its
    headline metric (and whether it is a time), the paper's figures it answers to (short name ->
    registered figure), the raw fields runs.csv always has a column for, the analysis options it
    adds ({name: {"default", "choices", "doc"}}), its own notebook and the report sections
    (titles, matched by their start) that its own profile's sub-report opens with (its profile
    is named by its id)."""

    order: int
    analysis: tuple[str, ...]
    parts: tuple[str, ...] = ()
    metric: tuple[str, bool] | None = None
    figures: Mapping[str, str] = field(default_factory=dict)
    columns: tuple[str, ...] = ()
    options: Mapping[str, Mapping] = field(default_factory=dict)
    notebook: str | None = None
    subject: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class SocketHooks:
    """What a socket benchmark's `sockets` module declares to the harness, as `HOOKS`: the
    parameter that takes the round (the trial number), whether its load generator gets every
    CPU the server does not use, whether its records carry the saturation probe's fields, the
    mode whose runs the probe samples, whether the probe keeps the server's peak RSS, which
    parameters run the original's bug on purpose (variant paper), and the client parameters
    it sets per server (params, server) -> {name: value}. Its module also gives
    mismatch(params, client, server): why the two records' byte counts disagree, or None."""

    round_param: str | None = None
    client_takes_spare_cpus: bool = False
    probe_fields: bool = False
    probe_mode: str | None = None
    probe_peak_rss: bool = False
    runs_the_original_bug: Callable[[Mapping], bool] | None = None
    client_params: Callable[[dict, str], dict] | None = None


@dataclass(frozen=True, slots=True)
class SearchHooks:
    """How a benchmark's `search` module's search walks, as `HOOKS`: a geometric grid, the
    parameter that takes the round, whether its table holds one value of every other
    parameter, and its own check of the profile table's settings (-> why they are wrong, or
    None). A growth search's step passes when its run is ok; a replicated one (IM's) judges
    its steps in its own module's judge_run and judge_step. `grid_rerun` is the re-run rule
    the benchmark's plain grid runs follow too (IM: its searches' rule, protocol 5's
    im.search.reruns): record -> why it is re-run, or None, at most `grid_reruns` times
    (harness.running.replicated.run_attempts); without one the harness's own rule re-runs a
    grid run (an ok run flagged interfered, once, when the profile's rerun_interfered)."""

    geometric: bool = False
    round_param: str | None = None
    fixed_params: bool = False
    check: Callable[[dict], str | None] | None = None
    grid_rerun: Callable[[dict], str | None] | None = None
    grid_reruns: int = 0


# where a socket server runs beside its client: on CPUs of its own, or on the client's
PLACEMENTS = ("split", "shared")


@dataclass(frozen=True)
class SocketOptions:
    """The server side of one socket task or search (a server row of its profile table,
    harness.planning.socket_plan): the server's language, its placement beside the client
    ("split": CPUs of its own; "shared": the client's), the runtime settings a profile chose
    for it ({} = as shipped, e.g. {"nodelay": "on"}), and whether the server alone is held
    in the run's memory cap (IM2's memory-cap search). Read-only, as the Task holding it."""

    server_language: str
    placement: str = "split"
    server_settings: Mapping[str, Any] = field(default_factory=dict)
    server_cap: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "server_settings", MappingProxyType(dict(self.server_settings)))

    def id_items(self) -> list[tuple[str, Any]]:
        """What a comparison group's id names of it, sorted by name (settings and a cap only
        when set, so a row as shipped keeps the id it always had)."""
        items: dict[str, Any] = {"server_language": self.server_language, "placement": self.placement}
        if self.server_settings:
            items[Col.server_settings] = dict(self.server_settings)
        if self.server_cap:
            items["server_cap"] = True
        return sorted(items.items())


@dataclass(frozen=True)
class SearchSpec:
    """One search a replicated search's part makes of its profile table (IM's `searches()`):
    its kind, its raw search.name, the parameter it grows, its place in a sweep, the server
    row it runs against and the params over the table's fixed ones; a tag for its key,
    and what it sets instead of the table (a memory-cap search: its cap, heap fraction and
    time limit; None keeps the table's)."""

    kind: str
    name: str
    param: str
    order: int
    options: SocketOptions
    params: Mapping
    tag: str = ""
    budget_bytes: int | None = None
    heap_fraction: float | None = None
    timeout_s: float | None = None

    def __post_init__(self) -> None:  # read-only, as the plan items that hold it
        object.__setattr__(self, "params", MappingProxyType(dict(self.params)))


@dataclass(frozen=True)
class FollowUp:
    """A run a replicated search makes after its steps (IM: a chaos loss run), resolved from
    its result: its params, its round and what its record keeps as `resolved_from` (whose
    `rule` names the run's table and search.name)."""

    params: Mapping
    run: int
    resolved_from: Mapping

    def __post_init__(self) -> None:
        object.__setattr__(self, "params", MappingProxyType(dict(self.params)))
        object.__setattr__(self, "resolved_from", MappingProxyType(dict(self.resolved_from)))


NO_SOCKET_HOOKS = SocketHooks()


def _entry_points(path: tuple[str, ...], group: str) -> dict[str, str]:
    """{name: dotted package} of the entry points of `group` on this path."""
    out: dict[str, str] = {}
    seen = set()
    for dist in importlib.metadata.distributions(path=list(path)):
        if dist.name in seen:  # the first of a distribution found twice on the path, as Python imports it
            continue
        seen.add(dist.name)
        for ep in dist.entry_points.select(group=group):
            if ep.attr:
                raise ImportError(
                    f"{dist.name}: the entry point {ep.name} = {ep.value} names a package, not {ep.attr!r}"
                )
            if ep.name in out and out[ep.name] != ep.module:
                raise ImportError(f"two {group} packages are called {ep.name!r}: {out[ep.name]} and {ep.module}")
            out[ep.name] = ep.module
    return out


@lru_cache(maxsize=8)
def _found(path: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    """(id, dotted package) of every benchmark package on this sys.path, sorted by id."""
    builtin = importlib.import_module(PACKAGE)
    out = {m.name: f"{PACKAGE}.{m.name}" for m in pkgutil.iter_modules(builtin.__path__) if m.ispkg}
    for name, module in _entry_points(path, GROUP).items():
        if name in out and out[name] != module:
            raise ImportError(f"two benchmark packages are called {name!r}: {out[name]} and {module}")
        out[name] = module
    return tuple(sorted(out.items()))


def _folder(module: str) -> Path:
    """A package's folder, found without importing it."""
    found = importlib.util.find_spec(module)
    if found is None or not found.submodule_search_locations:
        raise ImportError(f"{module}: an entry point names a package, and no package {module!r} is on the path")
    return Path(list(found.submodule_search_locations)[0])


@lru_cache(maxsize=8)
def _spec_files(path: tuple[str, ...]) -> tuple[tuple[str, str, str], ...]:
    """(kind, id, file) of the plug-ins' spec entries on this path: kind "language" (every
    language package's language.json, which it must have) or "benchmark" (a plug-in benchmark
    package's spec.json, where it ships one), languages first, each sorted by id."""
    out = []
    for name, module in sorted(_entry_points(path, LANGUAGE_GROUP).items()):
        f = _folder(module) / LANGUAGE_SPEC
        if not f.is_file():
            raise ImportError(f"{module}: a language package ships its spec/cli.json entry as {LANGUAGE_SPEC}")
        out.append(("language", name, str(f)))
    for name, module in _found(path):
        if not module.startswith(PACKAGE + "."):
            f = _folder(module) / BENCHMARK_SPEC
            if f.is_file():
                out.append(("benchmark", name, str(f)))
    return tuple(out)


@lru_cache(maxsize=16)
def spec_entry(file: str) -> dict:
    """A plug-in's spec entry (one of spec_files()), parsed once: what the contract, the
    record schema and the protocol read of it. Not JSON, or not a JSON object: a ValueError
    naming the file, so that a broken plug-in says which one it is."""
    try:
        entry = json.loads(Path(file).read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        raise ValueError(f"{file}: a plug-in's spec entry is not valid JSON: {e}") from None
    if not isinstance(entry, dict):
        raise ValueError(f"{file}: a plug-in's spec entry is a JSON object, not {type(entry).__name__}")
    return entry


_BUILTIN_ONLY: ContextVar[bool] = ContextVar("builtin_only", default=False)


@contextlib.contextmanager
def builtin_only() -> Iterator[None]:
    """Within the block every reader sees the tree's own benchmarks and languages only, as
    if no plug-in were installed (`python -m serverbench docs`: a user's plug-in must not
    be written into the committed docs and schemas)."""
    token = _BUILTIN_ONLY.set(True)
    try:
        yield
    finally:
        _BUILTIN_ONLY.reset(token)


def _path() -> tuple[str, ...]:
    """Where plug-ins are looked for: sys.path, or nowhere within builtin_only()."""
    return () if _BUILTIN_ONLY.get() else tuple(sys.path)


def spec_files() -> tuple[tuple[str, str, str], ...]:
    """(kind, id, file) of every plug-in's spec entry on the current sys.path (empty without
    plug-ins): what the caches of the spec's readers are keyed by."""
    return _spec_files(_path())


def found() -> tuple[tuple[str, str], ...]:
    """(id, dotted package) of every benchmark package on the current sys.path, sorted by id:
    what a cache of anything built from the plug-ins is keyed by."""
    return _found(_path())


def packages() -> dict[str, str]:
    """Every benchmark package: {id: its dotted name}, the built-in ones and the plugged-in ones."""
    return dict(found())


def ids() -> list[str]:
    """The benchmark packages' ids."""
    return list(packages())


def package(benchmark: str):
    """A benchmark's package (imported), or None when it has none (a spec entry without one yet)."""
    name = packages().get(benchmark)
    return importlib.import_module(name) if name else None


def load() -> list[ModuleType]:
    """Every benchmark package's analysis modules (Declared.analysis), imported (Python
    imports each once), packages in their declared order, each package's in its order."""
    pkgs = {i: importlib.import_module(n) for i, n in packages().items()}
    declared = {i: declaration(p) for i, p in pkgs.items()}
    order = sorted(pkgs, key=lambda i: (declared[i].order, i))
    return [importlib.import_module(f"{pkgs[i].__name__}.{part}") for i in order for part in declared[i].analysis]


def declaration(pkg) -> Declared:
    """A benchmark package's DECLARED; a clear error for a package without one."""
    d = vars(pkg).get("DECLARED")
    if not isinstance(d, Declared):
        raise ImportError(
            f"{pkg.__name__}: a benchmark package declares DECLARED = plugins.Declared(...) (docs/extending.md)"
        )
    unknown = sorted(set(d.parts) - set(HARNESS_PARTS))
    if unknown:
        raise ImportError(
            f"{pkg.__name__}: DECLARED.parts names {', '.join(unknown)}; parts: {', '.join(HARNESS_PARTS)}"
        )
    return d


def hooks(mod, kind: type):
    """A sockets or search module's HOOKS, checked to be `kind`; a clear error naming the
    module otherwise (a new benchmark's author learns what to declare, not an AttributeError
    in the middle of a sweep)."""
    try:
        h = mod.HOOKS
    except AttributeError:
        h = None
    if not isinstance(h, kind):
        raise ImportError(f"{mod.__name__}: declares HOOKS = plugins.{kind.__name__}(...) (docs/extending.md)")
    return h


def socket_hooks(benchmark: str | None) -> SocketHooks:
    """A socket benchmark's HOOKS (its sockets module's), or the defaults without one."""
    mod = part(benchmark, "sockets") if benchmark else None
    return hooks(mod, SocketHooks) if mod is not None else NO_SOCKET_HOOKS


def part(benchmark: str, name: str):
    """A benchmark package's harness module `name` (e.g. "cost": run_s / socket_run_s), or
    None when the benchmark has no package or its package declares no such part."""
    if name not in HARNESS_PARTS:
        raise ValueError(f"no harness part {name!r}; parts: {', '.join(HARNESS_PARTS)}")
    pkg = package(benchmark)
    if pkg is None or name not in declaration(pkg).parts:
        return None
    return importlib.import_module(f"{pkg.__name__}.{name}")
