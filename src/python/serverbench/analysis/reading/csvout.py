"""Every derived table is written at a stated precision: SIGNIFICANT_DIGITS significant
digits for each non-integral float. A ratio or interval goes through exp, log and numpy's
SIMD kernels, whose last bits differ between CPUs (an AMD EPYC of family 26 changed the
16th-17th digits of a committed ratios.csv); rounded to 6 digits, a re-render on any CPU
writes the same bytes. Integral floats (3000000.0 processes, a memory size in bytes) are
kept whole, and a table that mirrors raw records (runs.csv) rounds only the columns it
computes, so no measured value loses a digit it was recorded with."""

from __future__ import annotations

import math
from collections.abc import Iterable
from pathlib import Path

import pandas as pd

SIGNIFICANT_DIGITS = 6


def fixed(x):
    """x at SIGNIFICANT_DIGITS significant digits when it is a finite non-integral float;
    anything else as it is."""
    if isinstance(x, float) and math.isfinite(x) and not x.is_integer():
        return float(f"{x:.{SIGNIFICANT_DIGITS}g}")
    return x


def at_precision(df: pd.DataFrame, columns: Iterable[str] | None = None) -> pd.DataFrame:
    """A copy of df with its float columns (or only `columns`) rounded by `fixed`."""
    out = df.copy()
    names = list(columns) if columns is not None else list(out.columns)
    for c in names:
        if c in out and (pd.api.types.is_float_dtype(out[c]) or out[c].dtype == object):
            out[c] = out[c].map(fixed)
    return out


def write(df: pd.DataFrame, path: Path, columns: Iterable[str] | None = None) -> Path:
    """df as CSV (no index) at the stated precision: every float column, or only `columns`."""
    at_precision(df, columns).to_csv(path, index=False)
    return Path(path)
