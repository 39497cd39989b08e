"""The regime a claim's source measured, and the one a sweep tested it in (issue 25;
docs/statistics.md, "Regimes").

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

from dataclasses import dataclass
from typing import Any

import pandas as pd

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
class SourceRegime:
    text: str  # the source's regime in a few words
    tables: tuple[str, ...]
    scales: tuple[Scale, ...] = ()
    placement: str | None = None  # a socket benchmark's CPU placement in the source ("shared": one CPU)


_PINGPING = SourceRegime(
    "the paper (Fig. 3): 5, 10 and 50 kB, R = 10^3 to 10^6 repetitions",
    ("pingping",),
    (Scale("repetitions", 1_000_000, "repetitions"),),
)
_THROUGHPUT = SourceRegime(
    "the paper (Fig. 5): 60 s runs, 1 to 128 pairs, 1 to 32 cores",
    ("throughput",),
    (Scale("duration_s", 60, "run length (s)"), Scale("pairs", 128, "pairs")),
)
_ECHO = SourceRegime(
    "the 2010 echo flood: 1 to 32,768 connections x 32 KiB and 512 KiB, best of 3, one machine",
    ("echo_flood",),
    (Scale("connections", 32_768, "connections"),),
)
_TCP = SourceRegime(
    "the 2016 TCP ping-pong: 100 connections x 10,000 round trips, client and server sharing a laptop's CPUs",
    ("tcp_pingpong",),
    (Scale("connections", 100, "connections"), Scale("round_trips", 10_000, "round trips")),
    placement="shared",
)

REGIMES: dict[str, SourceRegime] = {
    "C1": _PINGPING,
    "C2": _PINGPING,
    "C10": _PINGPING,
    "C3": SourceRegime(
        "the paper: a max-processes search on an 8 GiB machine",
        ("spawn_max",),
        (Scale("memory_budget_bytes", 8 * 2**30, "memory budget (GiB)", 2**30),),
    ),
    "C4": SourceRegime(
        "the paper: 3,000,000 processes (Erlang 12 s, Go 26 s, Akka 114 s)",
        ("spawn", "spawn_max"),
        (Scale("processes", 3_000_000, "processes"),),
    ),
    "C4b": SourceRegime(
        "the paper (Fig. 4(b)): N = 1,000 to 100,000 processes",
        ("spawn", "spawn_max"),
        (Scale("processes", 100_000, "processes", decides_up_to=100_000),),
    ),
    "C5": SourceRegime(
        "the paper: N = 1,000 to 100,000 processes, the JVM's default heap growth",
        ("spawn",),
        (Scale("processes", 100_000, "processes", decides_up_to=100_000),),
    ),
    **{cid: _THROUGHPUT for cid in ("C6", "C7a", "C7b", "C8", "C9", "C11", "C12")},
    **{cid: _ECHO for cid in ("E1", "E2", "E3", "E4")},
    **{cid: _TCP for cid in ("T1", "T1b", "T2", "T3")},
}


def _fmt(x: float) -> str:
    return f"{x:,.0f}" if float(x).is_integer() else f"{x:.3g}"


def tested(claim_id: str, P: Any) -> tuple[str, str]:
    """(AS_SOURCE | REDUCED | "", the regime tested in words) for one claim on a sweep; two
    empty strings when the claim names no source regime or the sweep has none of its runs."""
    reg = REGIMES.get(claim_id)
    runs = getattr(P, "runs", None)
    if reg is None or runs is None or runs.empty or "table" not in runs.columns:
        return "", ""
    r = runs[runs["table"].isin(reg.tables)]
    if "is_ok" in r.columns:
        r = r[r["is_ok"].astype(bool)]
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
    if reg.placement and "placement" in r.columns:
        places = sorted(str(p) for p in r["placement"].dropna().unique())
        if reg.placement not in places:
            short.append(f"client and server on separate CPUs ({', '.join(places)}); the source shared them")
    if "cores" in r.columns and r["cores"].notna().any():
        have.append("cores " + ", ".join(_fmt(c) for c in sorted(r["cores"].dropna().unique())))
    if short:
        return REDUCED, "reduced: " + "; ".join(short)
    return AS_SOURCE, "as the source (" + "; ".join(have) + ")"


def source_text(claim_id: str) -> str:
    reg = REGIMES.get(claim_id)
    return reg.text if reg else ""


def reduced_summary(P: Any) -> str:
    """The report's paragraph on what "reduced" means, one line per benchmark (per source
    regime): the claims it decides, the source's scale, and the scale this sweep tested."""
    groups: dict[int, tuple[SourceRegime, list[str]]] = {}
    for cid, reg in REGIMES.items():
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
