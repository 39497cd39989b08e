"""Where the analysis finds its claims, figures, processed tables and report sections.

Other modules add theirs without editing the core: a module in the package
``serverbench.analysis`` whose name ends in ``_claims``, ``_figures`` or ``_report``
(e.g. ``analysis/sockets_tcp_claims.py``, ``analysis/echo_figures.py``) is imported by
``load()`` and registers its entries at import time:

* a processed table for a new benchmark:   ``registry.table(TableSpec(...))``
* a claim:                                  ``claims.engine.register(Claim(...))``
* a figure:                                 ``@registry.figure("fig_tcp", title=..., tables=(...))``
* a report section:                         ``@registry.report_section("TCP ping-pong", order=60)``

A figure function takes ``(P: Processed, *, languages, show_reference)`` and returns a
matplotlib Figure, or ``None`` when the sweep has nothing to draw (the figure is then
left out: no empty figure, no empty panel). A report section function takes ``P`` and
returns a list of blocks: ``str`` (Markdown), ``pandas.DataFrame`` (a table) or
``FigureRef(name)`` (a registered figure's PNG). See docs/statistics.md, "Adding claims".
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

PROVIDER_SUFFIXES = ("_claims", "_figures", "_report")


@dataclass(frozen=True)
class TableSpec:
    """A processed table: runs of `benchmark` (raw `benchmark` field) grouped by `keys`
    (besides language), each metric in `metrics` summarised (median with its interval)."""

    name: str
    benchmark: str
    keys: tuple[str, ...]
    metrics: tuple[str, ...]
    ratio_metric: str | None = None  # the metric compared between languages in ratios.csv


@dataclass(frozen=True)
class FigureSpec:
    name: str  # file name without extension, e.g. "fig3_pingping"
    title: str
    draw: Callable[..., Any]
    tables: tuple[str, ...] = ()
    order: float = 100.0


@dataclass(frozen=True)
class FigureRef:
    """A report block: the PNG of a registered figure."""

    name: str


@dataclass(frozen=True)
class SectionSpec:
    title: str
    render: Callable[..., list]
    order: float = 100.0


@dataclass
class _Registry:
    tables: dict[str, TableSpec] = field(default_factory=dict)
    figures: dict[str, FigureSpec] = field(default_factory=dict)
    sections: dict[str, SectionSpec] = field(default_factory=dict)
    loaded: bool = False


REG = _Registry()


def table(spec: TableSpec) -> TableSpec:
    REG.tables[spec.name] = spec
    return spec


def figure(name: str, title: str, tables: tuple[str, ...] = (), order: float = 100.0):
    """Decorator: register a figure function under its file name."""

    def deco(fn):
        REG.figures[name] = FigureSpec(name, title, fn, tuple(tables), order)
        return fn

    return deco


def report_section(title: str, order: float = 100.0):
    """Decorator: register a report section (rendered after the built-in ones, by order)."""

    def deco(fn):
        REG.sections[title] = SectionSpec(title, fn, order)
        return fn

    return deco


def load() -> _Registry:
    """Import the built-in definitions and every provider module of serverbench.analysis
    (names ending in _claims, _figures, _report), once."""
    if REG.loaded:
        return REG
    REG.loaded = True
    import serverbench.analysis as pkg

    importlib.import_module("serverbench.analysis.process")
    importlib.import_module("serverbench.analysis.figures")
    importlib.import_module("serverbench.analysis.claims")
    for m in sorted(pkgutil.iter_modules(pkg.__path__), key=lambda m: m.name):
        if m.name.endswith(PROVIDER_SUFFIXES):
            importlib.import_module(f"serverbench.analysis.{m.name}")
    return REG


def figures() -> list[FigureSpec]:
    load()
    return sorted(REG.figures.values(), key=lambda f: (f.order, f.name))


def sections() -> list[SectionSpec]:
    load()
    return sorted(REG.sections.values(), key=lambda s: (s.order, s.title))


def tables() -> dict[str, TableSpec]:
    return REG.tables
