"""Decision regions: where a comparison says "yes", where "no", and the indifference zone
between them (docs/statistics.md, "Decision regions").

A claim states its yes region (e.g. "Go/Akka time < 1 by more than 15 %", "Go/Erlang in
[1/1.5, 1.5]"). The no region starts a gap further out, on the log-ratio scale, and a
ratio inside the gap decides nothing. The gap is the larger of

* the claim's smallest effect of interest (order claims: 15 % each side of 1, so a gap of
  2 log 1.15 = 0.28; tolerance claims: log 1.15 = 0.14 beyond their written tolerance), and
* GAP_SIGMAS between-sweep standard deviations of the claim's benchmark on this kind of
  machine (measured from stability sweeps, analysis/spread.py, and kept per machine: CPU
  model and logical CPUs; DEFAULT_SPREAD_LOG where none was measured on the sweep's kind).

Why the second: an interval covers one sweep's sampling noise; what it cannot cover is the
machine state shared by every trial of a sweep. A true effect on the edge of the yes region
is "yes" in about half of all sweeps; it is "no" in another only when that sweep's shift
exceeds the gap, which at 3 standard deviations happens in ~0.13 % of sweeps, so a
supported <-> contradicted flip between two sweeps stays below 1 % (the simulation test in
tests/python/test_decision.py checks it with the real interval methods).

The gap in force is set per claim by the engine (`using`), from its benchmark's table, and
read by the expectations when they judge (claims.compare).
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator
from contextvars import ContextVar
from pathlib import Path
from typing import Any

import pandas as pd

ORDER_EFFECT = 0.15  # smallest effect of interest of an order claim: 15 % faster or slower
TOLERANCE_EFFECT = 0.15  # how far past a written tolerance a ratio must lie to contradict it
GAP_SIGMAS = 3.0  # the gap is at least this many between-sweep standard deviations
DEFAULT_SPREAD_LOG = 0.15  # between-sweep sd of a log ratio where none was measured (conservative)
MIN_SPREAD_LOG = 0.05  # floor on a measured sd: three sweeps cannot show a smaller one reliably
ZONE_TEXT = f"the indifference zone (>= {ORDER_EFFECT:.0%}; more where sweeps here differ more)"
TOST_LEVEL = 0.90  # "inside [lo, hi]" is two one-sided 5 % tests: the 90 % interval inside

SPREAD_FILE = "spread.csv"  # under data/processed/<spread folder>/ (analysis/spread.py)
SPREAD_FOLDER = "between-sweep-spread"

_SPREAD: ContextVar[float] = ContextVar("between_sweep_spread_log", default=DEFAULT_SPREAD_LOG)


def spread_log() -> float:
    """The between-sweep sd of a log ratio in force for the claim being judged."""
    return _SPREAD.get()


def order_gap_log() -> float:
    """The gap between an order claim's yes (< 1/(1+e)) and no (> 1+e) regions."""
    return max(2.0 * math.log1p(ORDER_EFFECT), GAP_SIGMAS * spread_log())


def tolerance_gap_log(effect: float = TOLERANCE_EFFECT) -> float:
    """How far (log) beyond a written tolerance the no region starts."""
    return max(math.log1p(effect), GAP_SIGMAS * spread_log())


@contextlib.contextmanager
def using(spread: float) -> Iterator[None]:
    token = _SPREAD.set(spread)
    try:
        yield
    finally:
        _SPREAD.reset(token)


def spread_for(table: str, spreads: dict[str, float] | None) -> float:
    """The sd to use for a benchmark table: measured (floored), else the default."""
    if spreads and table in spreads and math.isfinite(spreads[table]):
        return max(float(spreads[table]), MIN_SPREAD_LOG)
    return DEFAULT_SPREAD_LOG


def machine_kind(host: dict | None) -> str | None:
    """The kind of machine a spread holds for: its CPU model and logical CPUs, e.g.
    "AMD EPYC, 2 CPUs" (None when unknown). Not the fingerprint: that changes with every VM
    instance, and a spread measured on one instance is the best estimate for the next."""
    if not host or not host.get("cpu_model"):
        return None
    n = host.get("logical_cpus")
    return f"{host['cpu_model']}, {int(n)} CPUs" if n else str(host["cpu_model"])


def machine_of(P: Any) -> str | None:
    """The kind of machine a processed sweep (or a view of one) ran on, from its sweep.json."""
    info = getattr(P, "info", None) or {}
    return machine_kind(info.get("host"))


def spread_path(processed_dir: Path | None = None) -> Path:
    if processed_dir is None:
        from serverbench import paths

        processed_dir = paths.processed_dir()
    return Path(processed_dir) / SPREAD_FOLDER / SPREAD_FILE


def load_spreads(processed_dir: Path | None = None, machine: str | None = None) -> dict[str, float]:
    """{table: sd} measured on `machine` (machine_kind) in the committed spread table
    (analysis/spread.py); {} when none was measured there, so every table gets the default."""
    f = spread_path(processed_dir)
    if machine is None or not f.exists():
        return {}
    t = pd.read_csv(f)
    if "machine" not in t.columns:  # a table from before spreads were kept per machine: whose is unknown
        return {}
    t = t[t["machine"] == machine]
    return {str(r.table): float(r.spread_log) for r in t.itertuples() if pd.notna(r.spread_log)}


def regions_note(P: Any) -> str:
    """The report's sentence on which between-sweep spreads set this sweep's decision regions:
    measured on its kind of machine, or the default because none was."""
    kind = machine_of(P)
    measured = load_spreads(machine=kind)
    gap = GAP_SIGMAS * DEFAULT_SPREAD_LOG
    default = (
        f"the conservative default {DEFAULT_SPREAD_LOG:g}, so an order claim's gap between yes and no is "
        f"{gap:.2f} on the log scale (a factor {math.exp(gap):.2f})"
    )
    if not measured:
        return (
            f"**Decision regions.** No between-sweep spread has been measured on this kind of machine "
            f"({kind or 'unknown'}): every benchmark uses {default}. `python -m serverbench spread` on "
            f'repeated sweeps here measures it (docs/statistics.md, "Decision regions").'
        )
    parts = ", ".join(f"{t} {spread_for(t, measured):.3g}" for t in sorted(measured))
    return (
        f"**Decision regions.** Set by the between-sweep spread measured on this kind of machine ({kind}; "
        f"log sd, floored at {MIN_SPREAD_LOG:g}): {parts}; benchmarks not measured there use {default}."
    )
