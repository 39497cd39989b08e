"""Where the analysis finds its processed tables, figures, claims and report sections.

Each benchmark's package (serverbench/benchmarks/<id>/, docs/extending.md) declares its
own as module-level values of its analysis modules (plugins.Declared.analysis), and
`load()` collects them into one frozen `Registry`, built once per set of plug-ins on the
path (a plug-in added later, a test's toy, is seen by the next call; nothing is mutated):

* a processed table:   ``TABLE = registry.TableSpec(...)``
* a claim:             ``C1 = claims.engine.Claim(...)`` (or a tuple of them)
* a source regime:     ``REGIME = claims.regime.define(SourceRegime(...), "C1", ...)``
* a figure:            ``@registry.figure("fig_tcp", title=..., tables=(...))``
* a report section:    ``@registry.report_section("TCP ping-pong", order=60)``

A decorated function becomes its spec (still callable as the function). A figure function
takes ``(P: Processed, *, languages, show_reference)`` and returns a matplotlib Figure, or
``None`` when the sweep has nothing to draw (the figure is then left out: no empty figure,
no empty panel). A report section function takes ``P`` and returns a list of blocks:
``str`` (Markdown), ``pandas.DataFrame`` (a table) or ``FigureRef(name)`` (a figure's PNG).
The report's own figure and sections (the audit, 2026 runtimes) are declared the same way
and added by the modules that show them (`Registry.with_modules`).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from types import MappingProxyType, ModuleType
from typing import Any


class Entry:
    """A value an analysis module declares at module level for `load()` to collect: a
    table, a figure, a report section, set-up rows, a claim (claims.engine.Claim), a source
    regime (claims.regime.SourceRegime)."""

    def registry_keys(self) -> tuple[tuple[str, str], ...]:
        """(kind, key) pairs under which the registry holds this value (kind: a field of Registry)."""
        raise NotImplementedError


@dataclass(frozen=True)
class AuditSpec:
    """How the paper-variant audit (analysis/auditing/audit.py) reads a benchmark's runs: its fair
    metric against the paper record's reported one, per configuration of `config`."""

    fair_metric: str
    reported_metric: str
    config: tuple[str, ...]
    what: str  # the audit figure's axis: what the ratio is


@dataclass(frozen=True)
class TableSpec(Entry):
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

    def registry_keys(self) -> tuple[tuple[str, str], ...]:
        return (("tables", self.name),)


@dataclass(frozen=True)
class FigureSpec(Entry):
    name: str  # file name without extension, e.g. "fig3_pingping"
    title: str
    draw: Callable[..., Any]
    tables: tuple[str, ...] = ()
    order: float = 100.0

    def __call__(self, *args, **kwargs):
        return self.draw(*args, **kwargs)

    def registry_keys(self) -> tuple[tuple[str, str], ...]:
        return (("figures", self.name),)


@dataclass(frozen=True)
class FigureRef:
    """A report block: the PNG of a registered figure."""

    name: str


@dataclass(frozen=True)
class SectionSpec(Entry):
    title: str
    render: Callable[..., list]
    order: float = 100.0

    def __call__(self, *args, **kwargs):
        return self.render(*args, **kwargs)

    def registry_keys(self) -> tuple[tuple[str, str], ...]:
        return (("sections", self.title),)


@dataclass(frozen=True)
class SetupRows(Entry):
    """A benchmark's rows of the report's table of differences from the paper's set-up:
    rows(P, runs) -> [(aspect, the paper's, this sweep's)] (runs: warm-ups left out)."""

    rows: Callable[..., list]

    def __call__(self, *args, **kwargs):
        return self.rows(*args, **kwargs)

    def registry_keys(self) -> tuple[tuple[str, str], ...]:
        return (("setup_rows", f"{self.rows.__module__}.{self.rows.__qualname__}"),)


@dataclass(frozen=True)
class Registry:
    """Everything the analysis modules declared, by kind and key, in declaration order."""

    tables: Mapping[str, TableSpec] = field(default_factory=dict)
    figures: Mapping[str, FigureSpec] = field(default_factory=dict)
    sections: Mapping[str, SectionSpec] = field(default_factory=dict)
    setup_rows: Mapping[str, SetupRows] = field(default_factory=dict)
    claims: Mapping[str, Any] = field(default_factory=dict)  # id -> claims.engine.Claim
    regimes: Mapping[str, Any] = field(default_factory=dict)  # claim id -> claims.regime.SourceRegime

    def by_kind(self) -> dict[str, Mapping[str, Any]]:
        return {
            "tables": self.tables,
            "figures": self.figures,
            "sections": self.sections,
            "setup_rows": self.setup_rows,
            "claims": self.claims,
            "regimes": self.regimes,
        }

    def with_modules(self, *modules: ModuleType) -> Registry:
        """This registry and the values `modules` declare (the report's own figure and sections)."""
        found: dict[str, dict[str, Any]] = {k: dict(v) for k, v in self.by_kind().items()}
        where: dict[tuple[str, str], str] = {}
        for mod in modules:
            for value in _declared(mod):
                for kind, key in value.registry_keys():
                    known = found[kind].get(key)
                    if known is not None and known is not value and known != value:
                        raise ImportError(
                            f"{mod.__name__} declares {kind[:-1].replace('_', ' ')} {key!r} again "
                            f"(first declared in {where.get((kind, key), 'the registry it extends')})"
                        )
                    found[kind].setdefault(key, value)
                    where.setdefault((kind, key), mod.__name__)
        return Registry(**{k: MappingProxyType(v) for k, v in found.items()})


def _declared(mod: ModuleType):
    """The module's declared values: its module-level Entries and tuples of them."""
    for value in vars(mod).values():
        if isinstance(value, Entry):
            yield value
        elif isinstance(value, tuple) and value and all(isinstance(v, Entry) for v in value):
            yield from value


def figure(name: str, title: str, tables: tuple[str, ...] = (), order: float = 100.0):
    """Decorator: the figure function, as the FigureSpec of that file name."""

    def deco(fn) -> FigureSpec:
        return FigureSpec(name, title, fn, tuple(tables), order)

    return deco


def report_section(title: str, order: float = 100.0):
    """Decorator: the report section function, as its SectionSpec (rendered after the
    built-in sections, by order)."""

    def deco(fn) -> SectionSpec:
        return SectionSpec(title, fn, order)

    return deco


def setup_rows(fn) -> SetupRows:
    """Decorator: rows a benchmark adds to the report's table of differences from the paper's
    set-up, fn(P, runs) -> [(aspect, the paper's, this sweep's)]."""
    return SetupRows(fn)


@lru_cache(maxsize=8)
def _built(found: tuple[tuple[str, str], ...], path: tuple[str, ...]) -> Registry:
    from serverbench import plugins

    return Registry().with_modules(*plugins.load())


def load() -> Registry:
    """Every benchmark package's tables, figures, sections, set-up rows, claims and source
    regimes, collected from the plug-ins on the path (cached per set of plug-ins and path:
    the same package imported from another folder is another module)."""
    from serverbench import plugins

    return _built(plugins.found(), tuple(sys.path))


def figures() -> list[FigureSpec]:
    return sorted(load().figures.values(), key=lambda f: (f.order, f.name))


def sections() -> list[SectionSpec]:
    return sorted(load().sections.values(), key=lambda s: (s.order, s.title))


def tables() -> Mapping[str, TableSpec]:
    return load().tables
