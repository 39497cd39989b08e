"""The regime a claim's source measured, and the one a sweep tested it in
(docs/statistics.md, "What a verdict states").

A verdict speaks for the scale it was tested at. Each claim's source ran at a scale (the
paper: R up to 10^6, 3 M processes, 60 s throughput runs with up to 128 pairs; the 2010
echo flood: up to 32,768 connections; the 2016 ping-pong: 100 connections x 10,000 round
trips, client and server on one laptop). `tested(claim_id, P)` compares the largest value
of each deciding parameter in the sweep's ok runs with the source's: "as the source" when
every one reaches it, else "reduced: ..." naming each shortfall. The report counts the
verdicts of the two kinds apart. Core counts are named but do not make a regime reduced:
the claims are checked per core count, at the counts the machine has (a claim that needs
more cores is "not testable on this machine").
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import pandas as pd

from serverbench.analysis.reading import registry
from serverbench.rawdata.columns import Col

AS_SOURCE, REDUCED = "as the source", "reduced"


@dataclass(frozen=True)
class Scale:
    column: str  # a column of the processed runs table
    source: float  # the largest value the source measured
    what: str  # how a reader names it
    unit: float = 1.0  # shown divided by this (bytes as GiB)
    # the claim decides only at values up to this (C4b: N <= 100,000), so larger runs of the
    # same table (spawn_max steps) do not count towards its regime; None: every value counts
    decides_up_to: float | None = None


@dataclass(frozen=True)
class SourceRegime(registry.Entry):
    """Where a source measured the claims `claims`; a claims module declares it at module
    level for the registry (claim id -> its regime)."""

    text: str  # the source's regime in a few words
    tables: tuple[str, ...]
    scales: tuple[Scale, ...] = ()
    placement: str | None = None  # a socket benchmark's CPU placement in the source ("shared": one CPU)
    claims: tuple[str, ...] = ()

    def registry_keys(self) -> tuple[tuple[str, str], ...]:
        return tuple(("regimes", cid) for cid in self.claims)


def define(reg: SourceRegime, *claim_ids: str) -> SourceRegime:
    """The regime where the source of these claims measured, to declare at module level."""
    return replace(reg, claims=tuple(claim_ids))


def _regimes() -> dict[str, SourceRegime]:
    return dict(registry.load().regimes)


def _fmt(x: float) -> str:
    return f"{x:,.0f}" if float(x).is_integer() else f"{x:.3g}"


def tested(claim_id: str, P: Any) -> tuple[str, str]:
    """(AS_SOURCE | REDUCED | "", the regime tested in words) for one claim on a sweep; two
    empty strings when the claim names no source regime or the sweep has none of its runs."""
    reg = _regimes().get(claim_id)
    runs = getattr(P, "runs", None)
    if reg is None or runs is None or runs.empty or Col.table not in runs.columns:
        return "", ""
    wanted = {*(s.column for s in reg.scales), "table", "is_ok", "placement", "cores"}
    r = runs.loc[runs[Col.table].isin(reg.tables), [c for c in runs.columns if c in wanted]]  # not every column
    if Col.is_ok in r.columns:
        r = r[r[Col.is_ok].astype(bool)]
    if r.empty:
        return "", ""
    short, have = [], []
    for s in reg.scales:
        vals = pd.to_numeric(r[s.column], errors="coerce").dropna() if s.column in r.columns else pd.Series()
        if s.decides_up_to is not None:
            vals = vals[vals <= s.decides_up_to]
        if vals.empty:
            continue
        top = float(vals.max())
        have.append(f"{s.what} up to {_fmt(top / s.unit)}")
        if top < s.source:
            short.append(f"{s.what} <= {_fmt(top / s.unit)} of {_fmt(s.source / s.unit)}")
    if reg.placement and Col.placement in r.columns:
        places = sorted(str(p) for p in r[Col.placement].dropna().unique())
        if reg.placement not in places:
            short.append(f"client and server on separate CPUs ({', '.join(places)}); the source shared them")
    if Col.cores in r.columns and r[Col.cores].notna().any():
        have.append("cores " + ", ".join(_fmt(c) for c in sorted(r[Col.cores].dropna().unique())))
    if short:
        return REDUCED, "reduced: " + "; ".join(short)
    return AS_SOURCE, "as the source (" + "; ".join(have) + ")"


def source_text(claim_id: str) -> str:
    reg = _regimes().get(claim_id)
    return reg.text if reg else ""


def reduced_summary(P: Any) -> str:
    """The report's paragraph on what "reduced" means, one line per benchmark (per source
    regime): the claims it decides, the source's scale, and the scale this sweep tested."""
    groups: dict[int, tuple[SourceRegime, list[str]]] = {}
    for cid, reg in _regimes().items():
        groups.setdefault(id(reg), (reg, []))[1].append(cid)
    lines = []
    for reg, cids in groups.values():
        kind, text = tested(cids[0], P)
        if not kind:
            here = "not run in this sweep"
        elif kind == REDUCED:
            here = text + "; the verdicts speak for this scale on this machine, not for the source's"
        else:
            here = text
        lines.append(f"- **{' / '.join(reg.tables)}** ({', '.join(cids)}). Source: {reg.text}. Here: {here}.")
    return (
        "What *reduced* means, benchmark by benchmark (the largest value of each deciding parameter "
        "in this sweep's ok runs against the source's):\n\n" + "\n".join(lines)
    )
