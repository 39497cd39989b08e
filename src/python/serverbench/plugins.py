"""The plug-in loader of the benchmark packages (serverbench/benchmarks/<id>/,
docs/extending.md), at the bottom of the import graph: it imports nothing of serverbench
statically, so the harness and the analysis can ask it for a benchmark's parts without
importing the packages that plug into them.

Each sub-package `serverbench.benchmarks.<id>` (its folder name is the benchmark's id in
spec/cli.json, or a harness table of it) declares itself once in its `__init__.py`, typed
(`Declared` below): its place among the benchmarks and the modules that register its parts
with the analysis, in import order:

    DECLARED = plugins.Declared(order=1, analysis=("tables", "figures", "claims", "report"))

`tables` registers its processed tables (analysis.reading.registry.table: keys, metrics, the
explorer's defaults), `figures` its figures, `claims` its claims, `report` its report
sections; a benchmark has the ones it needs. The harness asks a package for more modules
by name, `part(id, name)`: "cost" (what a run costs, for the plan's estimates), for a
socket benchmark "sockets" (its byte accounting and CPU placement), and optionally "search"
(a search it declares: spawn's max processes) and "limits" (the process limit a run needs);
they import nothing of the analysis, so the harness may load them. A sockets or search
module declares what the harness may ask of it as `HOOKS` (`SocketHooks`, `SearchHooks`):
the harness reads typed fields, never probes a module for a name. `load()` finds the
packages by iterating the benchmarks package (pkgutil), never by file-name endings, and
imports each one's analysis modules once. analysis.reading.registry.load() calls it the first time anything asks for
the registered tables, figures, claims or sections, so every entry point (the command
line, a notebook, a test) sees every benchmark without a call of its own to forget; the
generic stages name no benchmark.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

PACKAGE = "serverbench.benchmarks"


@dataclass(frozen=True, slots=True)
class Declared:
    """What a benchmark package declares once, as `DECLARED` in its __init__.py: its tables'
    place among the benchmarks', the modules that register its analysis parts (in import
    order), its headline metric (and whether it is a time), the paper's figures it answers to
    (short name -> registered figure), the raw fields runs.csv always has a column for, the
    analysis options it adds ({name: {"default", "choices", "doc"}}) and its own notebook."""

    order: int
    analysis: tuple[str, ...]
    metric: tuple[str, bool] | None = None
    figures: Mapping[str, str] = field(default_factory=dict)
    columns: tuple[str, ...] = ()
    options: Mapping[str, Mapping] = field(default_factory=dict)
    notebook: str | None = None


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
    runs_the_original_bug: Callable[[dict], bool] | None = None
    client_params: Callable[[dict, str], dict] | None = None


@dataclass(frozen=True, slots=True)
class SearchHooks:
    """How a benchmark's `search` module's search walks, as `HOOKS`: a geometric grid, the
    parameter that takes the round, whether its table holds one value of every other
    parameter, and its own check of the profile table's settings (-> why they are wrong, or
    None). A growth search's step passes when its run is ok; a replicated one (IM's) judges
    its steps in its own module's judge_run and judge_step."""

    geometric: bool = False
    round_param: str | None = None
    fixed_params: bool = False
    check: Callable[[dict], str | None] | None = None


NO_SOCKET_HOOKS = SocketHooks()
_LOADED: list[str] = []
_PARTS: dict[tuple[str, str], object] = {}


def _package():
    return importlib.import_module(PACKAGE)


def folder() -> Path:
    """The benchmark packages' folder (serverbench/benchmarks/)."""
    return Path(_package().__path__[0])


def ids() -> list[str]:
    """The benchmark packages, by folder name."""
    return sorted(m.name for m in pkgutil.iter_modules(_package().__path__) if m.ispkg)


def load(extra_packages: tuple[str, ...] = ()) -> list[str]:
    """Import every benchmark package's ANALYSIS modules (once); extra_packages: dotted
    names of more benchmark packages outside this folder (a test's toy benchmark)."""
    pkgs = [importlib.import_module(n) for n in [f"{PACKAGE}.{i}" for i in ids()] + list(extra_packages)]
    declared = {p.__name__: declaration(p) for p in pkgs}
    for pkg in sorted(pkgs, key=lambda p: (declared[p.__name__].order, p.__name__)):
        name = pkg.__name__
        if name in _LOADED:
            continue
        for part_name in declared[name].analysis:
            importlib.import_module(f"{name}.{part_name}")
        _LOADED.append(name)
    return list(_LOADED)


def declaration(pkg) -> Declared:
    """A benchmark package's DECLARED; a clear error for a package without one."""
    d = vars(pkg).get("DECLARED")
    if not isinstance(d, Declared):
        raise ImportError(
            f"{pkg.__name__}: a benchmark package declares DECLARED = plugins.Declared(...) (docs/extending.md)"
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
    """A benchmark package's module `name` (e.g. the harness's "cost": run_s / socket_run_s),
    or None when the benchmark has no package or the package no such module."""
    key = (benchmark, name)
    if key not in _PARTS:
        try:
            _PARTS[key] = importlib.import_module(f"{PACKAGE}.{benchmark}.{name}")
        except ModuleNotFoundError as e:
            if e.name not in (f"{PACKAGE}.{benchmark}", f"{PACKAGE}.{benchmark}.{name}"):
                raise
            _PARTS[key] = None
    return _PARTS[key]
