"""Decision regions: where a comparison says "yes", where "no", and the indifference zone
between them (docs/statistics.md, "Decision regions").

A claim states its yes region (e.g. "Go/Akka time < 1 by more than 15 %", "Go/Erlang in
[1/1.5, 1.5]"). The no region starts a gap further out, on the log-ratio scale, and a
ratio inside the gap decides nothing. The gap is the larger of

* the claim's smallest effect of interest (order claims: 15 % each side of 1, so a gap of
  2 log 1.15 = 0.28; tolerance claims: log 1.15 = 0.14 beyond their written tolerance), and
* GAP_SIGMAS between-sweep standard deviations of the claim's benchmark on this machine
  (measured from stability sweeps, analysis/spread.py; DEFAULT_SPREAD_LOG where none was).

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


def load_spreads(processed_dir: Path | None = None) -> dict[str, float]:
    """{table: sd} from the committed spread table (analysis/spread.py); {} when absent."""
    if processed_dir is None:
        from serverbench import paths

        processed_dir = paths.processed_dir()
    f = Path(processed_dir) / SPREAD_FOLDER / SPREAD_FILE
    if not f.exists():
        return {}
    t = pd.read_csv(f)
    return {str(r.table): float(r.spread_log) for r in t.itertuples() if pd.notna(r.spread_log)}
