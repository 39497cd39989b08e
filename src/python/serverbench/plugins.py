"""The plug-in loader of the benchmark packages (serverbench/benchmarks/<id>/,
docs/extending.md), at the bottom of the import graph: it imports nothing of serverbench
statically, so the harness and the analysis can ask it for a benchmark's parts without
importing the packages that plug into them.

Each sub-package `serverbench.benchmarks.<id>` (its folder name is the benchmark's id in
spec/cli.json, or a harness table of it) lists in its `__init__.py` the modules that
register its parts with the analysis, in import order:

    ORDER = 1                                   # its place among the benchmarks (tables' order)
    ANALYSIS = ("tables", "figures", "claims", "report")

`tables` registers its processed tables (analysis.reading.registry.table: keys, metrics, the
explorer's defaults), `figures` its figures, `claims` its claims, `report` its report
sections; a benchmark has the ones it needs. The harness asks a package for more modules
by name, `part(id, name)`: "cost" (what a run costs, for the plan's estimates), for a
socket benchmark "sockets" (its byte accounting and CPU placement), and optionally "search"
(a search it declares: spawn's max processes) and "limits" (the process limit a run needs);
they import nothing of the analysis, so the harness may load them. `load()` finds the packages by iterating
the benchmarks package (pkgutil), never by file-name endings, and imports each one's
ANALYSIS modules once. analysis.reading.registry.load() calls it the first time anything asks for
the registered tables, figures, claims or sections, so every entry point (the command
line, a notebook, a test) sees every benchmark without a call of its own to forget; the
generic stages name no benchmark.
"""

from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path

PACKAGE = "serverbench.benchmarks"
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
    for pkg in sorted(pkgs, key=lambda p: (getattr(p, "ORDER", 100), p.__name__)):
        name = pkg.__name__
        if name in _LOADED:
            continue
        parts = getattr(pkg, "ANALYSIS", None)
        if parts is None:
            raise ImportError(f"{name}: a benchmark package must list its modules in ANALYSIS (docs/extending.md)")
        for part_name in parts:
            importlib.import_module(f"{name}.{part_name}")
        _LOADED.append(name)
    return list(_LOADED)


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
