"""What claim encodings are built from: selecting trial rows, and judging one ratio
against a claim's regions (docs/protocol.md).

Every deciding ratio is paired by round (analysis.statistics.paired), at the protocol's level (90 %:
two one-sided 5 % tests): "yes" when the interval lies inside the yes region; "no" when
it lies inside the no region (at the level Holm's correction asks: familywise.py);
"unclear" otherwise, saying why. Against a region of point_values options (a source's one
value per point, engine.Options) the ratio of the two values (of their medians, where the
source gave a few runs per point) is judged as a point.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pandas as pd

from serverbench import protocol
from serverbench.analysis.claims.engine import NO, UNCLEAR, YES, Comparison, label
from serverbench.analysis.statistics import paired
from serverbench.analysis.statistics.stats import RatioCI
from serverbench.rawdata.columns import Col

_EPS = 1e-12


def interval(
    num: pd.DataFrame, den: pd.DataFrame | None, level: float, divide_by: float = 1.0, point_values: bool = False
) -> RatioCI | str:
    """num/den (frames with trial and value; den None: against 1) paired by round at
    `level`, divided by a known factor; or why there is no interval. point_values: the
    ratio of the sides' medians, as a point (a source's one value per point)."""
    if den is None:
        den = num.assign(value=1.0)
    if point_values:
        ci = paired.point_ratio([np.median(num["value"])], [np.median(den["value"])])
    else:
        pairs = paired.pairs_by_round(num, den)
        if isinstance(pairs, str):
            return pairs
        ci = paired.paired_ratio_ci(*pairs, level)
    if not np.isfinite(ci.ratio):
        return "no positive values to compare"
    return ci.scaled(divide_by)


def judge(region: protocol.Region, ci: RatioCI, level: float) -> tuple[str, str]:
    """One interval against a region: (YES | NO | UNCLEAR, why)."""
    if ci.level < level - _EPS:
        return UNCLEAR, f"too few rounds ({ci.n_num} pairs reach at most {paired.max_paired_confidence(ci.n_num):.1%})"
    lo, hi = region.yes()
    if lo <= ci.lo and ci.hi <= hi:
        return YES, ""
    below, above = region.no()
    if ci.hi <= below or ci.lo >= above:
        return NO, ""
    return UNCLEAR, f"the {ci.level:.0%} interval [{ci.lo:.3g}, {ci.hi:.3g}] is in neither region ({region.text()})"


def judged(
    what: str,
    config: str,
    region: protocol.Region,
    num: pd.DataFrame,
    den: pd.DataFrame | None = None,
    divide_by: float = 1.0,
    **extra,
) -> Comparison:
    """A comparison of num/den judged against region at the protocol's level; it can be
    judged again at a stricter level for Holm's correction (Comparison.rejudge)."""
    level = protocol.level()
    ci = interval(num, den, level, divide_by, region.point_values)
    lo, hi = region.yes()
    below, above = region.no()
    cols = {"yes_lo": lo, "yes_hi": hi, "no_below": below, "no_above": above, **extra}
    if isinstance(ci, str):
        return Comparison(what, config, region.text(), UNCLEAR, None, f"cannot pair: {ci}", cols)
    result, why = judge(region, ci, level)

    def rejudge(at: float) -> tuple[str, RatioCI]:
        c = interval(num, den, at, divide_by, region.point_values)
        if isinstance(c, str):
            return UNCLEAR, ci
        r, _ = judge(region, c, at)
        return (NO if r == NO else UNCLEAR), c

    return Comparison(what, config, region.text(), result, ci, why, cols, rejudge)


# ------------------------------------------------------------------ selecting values


def rows_where(d: pd.DataFrame, **eq) -> pd.DataFrame:
    """The rows of d where every column equals its given value."""
    m = np.ones(len(d), dtype=bool)
    for k, v in eq.items():
        m &= (d[k] == v).to_numpy()
    return d.loc[m]


def values_where(d: pd.DataFrame, **eq) -> np.ndarray:
    """The `value` column of the rows of d where every column equals its given value."""
    return rows_where(d, **eq)["value"].to_numpy(dtype=float)


def per_round(num: pd.DataFrame, den: pd.DataFrame) -> pd.DataFrame:
    """num/den round by round (trial, value): a ratio that is itself one side of a
    comparison, e.g. a server's flood-time growth between two N (E1)."""
    pairs = paired.pairs_by_round(num, den)
    if isinstance(pairs, str):
        return pd.DataFrame(columns=[paired.ROUND, "value"])
    rounds = sorted(set(num[paired.ROUND]) & set(den[paired.ROUND]))
    return pd.DataFrame({paired.ROUND: rounds, "value": pairs[0] / pairs[1]})


def config_text(cfg: dict) -> str:
    def v(x):
        if isinstance(x, (int, np.integer)) or (isinstance(x, (float, np.floating)) and float(x).is_integer()):
            return f"{int(x):,}"
        return x

    return ", ".join(f"{k}={v(x)}" for k, x in cfg.items())


def present_keys(d: pd.DataFrame, keys: Iterable[str]) -> list[str]:
    return [k for k in keys if k in d.columns]


def largest_common(d: pd.DataFrame, group_keys: Iterable[str], along: str, languages: Iterable[str]) -> list[dict]:
    """Per group of `group_keys`: the configuration at the largest value of `along`
    measured in every one of `languages` (groups where none is common are left out)."""
    langs = set(languages)
    keys = present_keys(d, group_keys)
    out = []
    for kv, g in d.groupby(keys) if keys else [((), d)]:
        kv = kv if isinstance(kv, tuple) else (kv,)
        common = [x for x, gx in g.groupby(along) if langs <= set(gx[Col.language])]
        if common:
            out.append({**dict(zip(keys, kv)), along: max(common)})
    return out


def ratio_between_languages(
    d: pd.DataFrame,
    num: str,
    den: str,
    cfg: dict,
    region: protocol.Region,
    what: str | None = None,
    config: str | None = None,
) -> Comparison | None:
    """num/den of two languages at one configuration cfg (None if either has no value)."""
    a, b = rows_where(d, language=num, **cfg), rows_where(d, language=den, **cfg)
    if len(a) == 0 or len(b) == 0:
        return None
    return judged(what or f"{label(num)}/{label(den)}", config or config_text(cfg), region, a, b)


def ratio_between_configs(
    d: pd.DataFrame,
    language: str,
    num_cfg: dict,
    den_cfg: dict,
    region: protocol.Region,
    what: str,
    config: str,
    divide_by: float = 1.0,
) -> Comparison | None:
    """One language's values at num_cfg over its values at den_cfg, paired by round (both
    configurations' trial k ran in round k), optionally divided by a known factor."""
    a, b = rows_where(d, language=language, **num_cfg), rows_where(d, language=language, **den_cfg)
    if len(a) == 0 or len(b) == 0:
        return None
    return judged(what, config, region, a, b, divide_by)
