"""Where the analysis finds its processed tables, figures, claims and report sections.

Each benchmark's package (serverbench/benchmarks/<id>/, docs/extending.md) registers its
own at import time; `load()` imports them all once, through serverbench.plugins.load()
(package iteration: the packages list their modules explicitly):

* a processed table:   ``registry.table(TableSpec(...))``
* a claim:             ``claims.engine.register(Claim(...))``
* a figure:            ``@registry.figure("fig_tcp", title=..., tables=(...))``
* a report section:    ``@registry.report_section("TCP ping-pong", order=60)``

A figure function takes ``(P: Processed, *, languages, show_reference)`` and returns a
matplotlib Figure, or ``None`` when the sweep has nothing to draw (the figure is then
left out: no empty figure, no empty panel). A report section function takes ``P`` and
returns a list of blocks: ``str`` (Markdown), ``pandas.DataFrame`` (a table) or
``FigureRef(name)`` (a registered figure's PNG).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class AuditSpec:
    """How the paper-variant audit (analysis/auditing/audit.py) reads a benchmark's runs: its fair
    metric against the paper record's reported one, per configuration of `config`."""

    fair_metric: str
    reported_metric: str
    config: tuple[str, ...]
    what: str  # the audit figure's axis: what the ratio is


@dataclass(frozen=True)
class TableSpec:
    """A processed table: runs of `benchmark` (raw `benchmark` field) grouped by `keys`
    (besides language), each metric in `metrics` summarised (median with its interval)."""

    name: str
    benchmark: str
    keys: tuple[str, ...]
    metrics: tuple[str, ...]
    ratio_metric: str | None = None  # the metric compared between languages in ratios.csv
    # the explorer's defaults (analysis/explorer/explore.py): the metric shown (default: ratio_metric,
    # else the first metric) and the parameter on the x axis (default: the last key)
    explore_metric: str | None = None
    explore_x: str | None = None
    search_steps: bool = False  # the table of the benchmark's search steps (raw `search`), not of its grid
    audit: AuditSpec | None = None  # the paper-variant audit's view of it (None: not audited)

    @property
    def default_metric(self) -> str:
        return self.explore_metric or self.ratio_metric or self.metrics[0]

    @property
    def default_x(self) -> str:
        return self.explore_x or self.keys[-1]


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
    # the report's "what differs from the paper's set-up": fn(P, runs) -> [(aspect, paper, this sweep)]
    setup_rows: list[Callable[..., list]] = field(default_factory=list)
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


def setup_rows(fn):
    """Decorator: rows a benchmark adds to the report's table of differences from the paper's
    set-up, fn(P, runs) -> [(aspect, the paper's, this sweep's)] (runs: warm-ups left out)."""
    REG.setup_rows.append(fn)
    return fn


def load() -> _Registry:
    """Every benchmark package's tables, figures, claims and sections, registered once."""
    if REG.loaded:
        return REG
    REG.loaded = True
    from serverbench import plugins

    plugins.load()
    return REG


def figures() -> list[FigureSpec]:
    load()
    return sorted(REG.figures.values(), key=lambda f: (f.order, f.name))


def sections() -> list[SectionSpec]:
    load()
    return sorted(REG.sections.values(), key=lambda s: (s.order, s.title))


def tables() -> dict[str, TableSpec]:
    load()
    return REG.tables
