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

No module-level registry: what is found is a function of sys.path (the folder and the
installed distributions' metadata), memoised by it, and an imported module is Python's own
(sys.modules), so a distribution put on the path is found at the next call.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import pkgutil
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from types import ModuleType

PACKAGE = "serverbench.benchmarks"
GROUP = "serverbench.benchmarks"  # the entry-point group of benchmark packages outside the tree
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


@lru_cache(maxsize=8)
def _found(path: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    """(id, dotted package) of every benchmark package on this sys.path, sorted by id."""
    builtin = importlib.import_module(PACKAGE)
    out = {m.name: f"{PACKAGE}.{m.name}" for m in pkgutil.iter_modules(builtin.__path__) if m.ispkg}
    seen = set()
    for dist in importlib.metadata.distributions(path=list(path)):
        if dist.name in seen:  # the first of a distribution found twice on the path, as Python imports it
            continue
        seen.add(dist.name)
        for ep in dist.entry_points.select(group=GROUP):
            if ep.attr:
                raise ImportError(
                    f"{dist.name}: the entry point {ep.name} = {ep.value} names a package, not {ep.attr!r}"
                )
            if ep.name in out and out[ep.name] != ep.module:
                raise ImportError(f"two benchmark packages are called {ep.name!r}: {out[ep.name]} and {ep.module}")
            out[ep.name] = ep.module
    return tuple(sorted(out.items()))


def found() -> tuple[tuple[str, str], ...]:
    """(id, dotted package) of every benchmark package on the current sys.path, sorted by id:
    what a cache of anything built from the plug-ins is keyed by."""
    return _found(tuple(sys.path))


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
