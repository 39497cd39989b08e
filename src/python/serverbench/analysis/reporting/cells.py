"""How the report writes a number (`fmt`, `style`): integers as integers, ratios to 3
significant digits, seconds in units, timestamps to the second, missing as an em dash,
never "nan" and never more than 4 decimals. Every table of every report goes through it."""

from __future__ import annotations

import math
import re
from datetime import datetime

import pandas as pd

DASH = "\u2014"
_FRACTION_OF_SECOND = re.compile(r"(\d{2}:\d{2}:\d{2})\.\d+")


def is_missing(x) -> bool:
    if x is None or x is pd.NA or x is pd.NaT:
        return True
    try:
        return bool(isinstance(x, float) and math.isnan(x))
    except TypeError:
        return False


def sig(x: float, digits: int = 3) -> str:
    """x to `digits` significant digits, never in exponent form between 1e-3 and 1e15 and
    never with more than 4 decimals (below 0.01 one digit fewer, below 0.001 as 1.2e-04);
    1000 and above as a whole number with thousands separators."""
    x = float(x)
    if math.isnan(x):
        return DASH
    if math.isinf(x):
        return "\u221e" if x > 0 else "-\u221e"
    if x == 0:
        return "0"
    a = abs(x)
    if a >= 1000:
        return f"{x:,.0f}"
    if a < 0.001:
        return f"{x:.{max(digits - 2, 0)}e}"
    exp = math.floor(math.log10(a))
    decimals = min(max(digits - 1 - exp, 0), 4)
    s = f"{x:.{decimals}f}"
    if "." in s and a < 1:  # 0.250 -> 0.25 below 1; 1.50 keeps its digits (a ratio's)
        s = s.rstrip("0").rstrip(".")
    return s


def fmt(x, group_from: int | None = None) -> str:
    """One table cell: integers as integers with thousands separators from 10,000 (from
    `group_from` when given: `style` gives 1,000 in a table that holds one of 10,000 or
    more, so 9,445 stands beside 11,824), whole floats from 1,000 (as `sig` writes the other
    floats of their column: 2,644 beside 3,274); other numbers to 3 significant digits
    (`sig`); timestamps to the second; missing (None, NaN, NaT) as an em dash; text as it
    is, with any timestamp in it cut to the second."""
    if is_missing(x):
        return DASH
    if isinstance(x, bool):
        return "yes" if x else "no"
    if isinstance(x, (pd.Timestamp, datetime)):
        return x.strftime("%Y-%m-%d %H:%M:%S")
    if isinstance(x, str):
        return _FRACTION_OF_SECOND.sub(r"\1", x)
    try:
        f = float(x)
    except (TypeError, ValueError):
        return _FRACTION_OF_SECOND.sub(r"\1", str(x))
    if math.isfinite(f) and f == int(f) and abs(f) < 1e15:
        n = int(f)
        start = 1000 if isinstance(x, float) else group_from or 10_000
        return f"{n:,}" if abs(n) >= start else str(n)
    return sig(f)


def _has_wide_integer(column: pd.Series) -> bool:
    """Whether a column holds a whole number of 10,000 or more."""
    for x in column:
        if isinstance(x, bool) or isinstance(x, str) or is_missing(x):
            continue
        try:
            f = float(x)
        except (TypeError, ValueError):
            continue
        if math.isfinite(f) and f == int(f) and abs(f) >= 10_000:
            return True
    return False


def fmt_seconds(x) -> str:
    """A duration in seconds in a unit that suits it: 12.3 µs, 4.56 ms, 7.89 s, 12.3 min."""
    if is_missing(x):
        return DASH
    try:
        s = float(x)
    except (TypeError, ValueError):
        return fmt(x)
    if not math.isfinite(s):
        return fmt(s)
    a = abs(s)
    if a == 0:
        return "0 s"
    for unit, f in (("µs", 1e-6), ("ms", 1e-3)):
        if a < f * 1000:
            return f"{sig(s / f)} {unit}"
    if a >= 7200:
        return f"{sig(s / 3600)} h"
    if a >= 600:
        return f"{sig(s / 60)} min"
    return f"{sig(s)} s"


def is_seconds(column) -> bool:
    """A column holding seconds, by its name: 'wall (s)', 'elapsed_s', 'max wall s'; not a
    rate or a count per second ('rate_per_s', 'lost_at_10_per_s', 'msgs per s')."""
    c = str(column).strip()
    if re.search(r"(_|\s)per(_|\s)s$", c):
        return False
    return c.endswith("(s)") or c.endswith("_s") or c.endswith(" s")


def style(df: pd.DataFrame, index: bool = False):
    """df as a pandas Styler with every cell through `fmt` (a table's integers grouped alike
    once any reaches 10,000: 1,384 beside 14,831), seconds columns through
    `fmt_seconds` (their header without its '(s)': the cells carry their unit), the index
    hidden unless asked for."""
    group_from = 1000 if any(_has_wide_integer(df.iloc[:, i]) for i in range(df.shape[1])) else None
    st = df.style.format(lambda x: fmt(x, group_from=group_from))  # the table's integers grouped alike
    secs = [c for c in df.columns if is_seconds(c)]
    if secs:
        st = st.format(fmt_seconds, subset=secs)
        st = st.format_index(lambda c: re.sub(r"\s*\(s\)$|_s$", "", str(c)) if is_seconds(c) else c, axis="columns")
    return st if index else st.hide(axis="index")
