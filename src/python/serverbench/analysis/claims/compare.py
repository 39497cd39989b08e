"""Small helpers claim entries are built from: the expectation a ratio must meet
(`RatioBelow`, `RatioAbove`, `RatioWithin`), the selection of trial values, and the
comparison factories (`ratio_between_languages`, `pooled_ratio_between_languages`,
`ratio_between_configs`) that return Comparison rows. Two languages at one configuration
are paired by round where pairing holds (analysis.paired: exact signed-rank interval),
else compared unpaired (stats.ratio_ci / stats.pooled_ratio_ci); every interval is at its
achieved confidence, and below engine.MIN_CONFIDENCE a comparison is never decisive. Each
comparison can be judged again at a stricter level (Comparison.rejudge: Holm's correction,
claims.familywise)."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from serverbench.analysis import paired, stats
from serverbench.analysis.claims import decision
from serverbench.analysis.claims.engine import MIN_CONFIDENCE, NO, UNCLEAR, YES, Comparison, label

# the same comparison's interval at another confidence (level, and the level its method is
# chosen for: pairing only where the pairs can reach it)
AtLevel = Callable[[float, float], stats.RatioCI]


def too_few_trials(ci: stats.RatioCI) -> str:
    """'' if ci reaches MIN_CONFIDENCE, else why not, with the best level these counts allow."""
    if ci.level >= MIN_CONFIDENCE - 1e-12:
        return ""
    if paired.kind(ci) == paired.PAIRED:
        return f"too few rounds ({ci.n_num} pairs reach at most {paired.max_paired_confidence(ci.n_num):.1%})"
    if ci.strata > 1:
        return (
            f"too few trials ({ci.strata} configurations with >= {ci.n_num} vs {ci.n_den} trials reach {ci.level:.0%})"
        )
    best = stats.max_confidence(ci.n_num, ci.n_den)
    return f"too few trials ({ci.n_num} vs {ci.n_den} reaches at most {best:.0%})"


@dataclass(frozen=True)
class Regions:
    """An expectation resolved with the gap in force (claims.decision): "yes" when the
    interval at `yes_level` lies inside [yes_lo, yes_hi]; "no" when the interval at
    MIN_CONFIDENCE lies entirely below `no_below` or above `no_above`; else undecided."""

    yes_lo: float
    yes_hi: float
    no_below: float
    no_above: float
    yes_level: float
    text: str

    def columns(self) -> dict[str, float]:
        return {"yes_lo": self.yes_lo, "yes_hi": self.yes_hi, "no_below": self.no_below, "no_above": self.no_above}

    def judge(self, ci: stats.RatioCI, ci_yes: stats.RatioCI | None = None) -> tuple[str, str]:
        if not np.isfinite(ci.ratio) or not np.isfinite(ci.lo):
            return UNCLEAR, "no values to compare"
        cy = ci_yes if ci_yes is not None else ci
        if cy.level >= self.yes_level - 1e-12 and np.isfinite(cy.lo) and self.yes_lo <= cy.lo and cy.hi <= self.yes_hi:
            return YES, ""
        few = too_few_trials(ci)
        if few:
            return UNCLEAR, few
        if ci.hi < self.no_below or ci.lo > self.no_above:
            return NO, ""
        return UNCLEAR, (
            f"the {ci.level:.0%} interval [{ci.lo:.3g}, {ci.hi:.3g}] lies in neither the yes region "
            f"({_span(self.yes_lo, self.yes_hi)}) nor the no region ({_outside(self.no_below, self.no_above)})"
        )


def _span(lo: float, hi: float) -> str:
    if lo <= 0:
        return f"< {hi:.3g}"
    if not np.isfinite(hi):
        return f"> {lo:.3g}"
    return f"[{lo:.3g}, {hi:.3g}]"


def _outside(below: float, above: float) -> str:
    if not np.isfinite(below) or below <= 0:
        return f"> {above:.3g}"
    if not np.isfinite(above):
        return f"< {below:.3g}"
    return f"< {below:.3g} or > {above:.3g}"


INF = float("inf")


@dataclass(frozen=True)
class RatioBelow:
    """ratio < threshold. An order claim (`order`, threshold 1) says "yes" below
    1/(1+e) and "no" above 1+e, the gap between them decision.order_gap_log(); a tolerance
    ("< 1.05") says "yes" below it and "no" above it times exp(decision.tolerance_gap_log())."""

    threshold: float
    order: bool = False

    def resolved(self) -> Regions:
        if self.order:
            half = decision.order_gap_log() / 2
            yes_hi, no_above = self.threshold * math.exp(-half), self.threshold * math.exp(half)
        else:
            yes_hi, no_above = self.threshold, self.threshold * math.exp(decision.tolerance_gap_log())
        return Regions(0.0, yes_hi, -INF, no_above, MIN_CONFIDENCE, f"< {yes_hi:.3g} (no: > {no_above:.3g})")

    @property
    def text(self) -> str:
        return self.resolved().text

    def judge(self, ci: stats.RatioCI) -> tuple[str, str]:
        return self.resolved().judge(ci)


@dataclass(frozen=True)
class RatioAbove:
    """ratio > threshold, the mirror of RatioBelow."""

    threshold: float
    order: bool = False

    def resolved(self) -> Regions:
        if self.order:
            half = decision.order_gap_log() / 2
            yes_lo, no_below = self.threshold * math.exp(half), self.threshold * math.exp(-half)
        else:
            yes_lo, no_below = self.threshold, self.threshold * math.exp(-decision.tolerance_gap_log())
        return Regions(yes_lo, INF, no_below, INF, MIN_CONFIDENCE, f"> {yes_lo:.3g} (no: < {no_below:.3g})")

    @property
    def text(self) -> str:
        return self.resolved().text

    def judge(self, ci: stats.RatioCI) -> tuple[str, str]:
        return self.resolved().judge(ci)


@dataclass(frozen=True)
class RatioWithin:
    """lo <= ratio <= hi: equivalence by two one-sided tests (the decision.TOST_LEVEL
    interval inside [lo, hi]); "no" when the MIN_CONFIDENCE interval lies beyond either
    bound by the tolerance gap."""

    lo: float
    hi: float

    def resolved(self) -> Regions:
        g = math.exp(decision.tolerance_gap_log())
        nb, na = self.lo / g, self.hi * g
        return Regions(
            self.lo,
            self.hi,
            nb,
            na,
            decision.TOST_LEVEL,
            f"in [{self.lo:.3g}, {self.hi:.3g}] at {decision.TOST_LEVEL:.0%} (no: < {nb:.3g} or > {na:.3g})",
        )

    @property
    def text(self) -> str:
        return self.resolved().text

    def judge(self, ci: stats.RatioCI, ci_yes: stats.RatioCI | None = None) -> tuple[str, str]:
        return self.resolved().judge(ci, ci_yes)


Expectation = RatioBelow | RatioAbove | RatioWithin


def order_below() -> RatioBelow:
    """An order claim, numerator faster (smaller): decided only outside the indifference zone."""
    return RatioBelow(1.0, order=True)


def order_above() -> RatioAbove:
    """An order claim, numerator larger: decided only outside the indifference zone."""
    return RatioAbove(1.0, order=True)


def judged(
    what: str, config: str, ci: stats.RatioCI, expect: Expectation, at_level: AtLevel | None = None, **extra
) -> Comparison:
    """A comparison judged against expect's decision regions (the gap in force now); with
    at_level it is judged at the yes region's own level (equivalence: 90 %) and can be
    judged again at a stricter confidence (Holm's correction)."""
    r = expect.resolved()
    ci_yes = at_level(r.yes_level, MIN_CONFIDENCE) if at_level is not None and r.yes_level != MIN_CONFIDENCE else None
    result, why = r.judge(ci, ci_yes)
    if ci_yes is not None:
        extra = {"ci_yes_lo": ci_yes.lo, "ci_yes_hi": ci_yes.hi, "ci_yes_level": round(ci_yes.level, 4), **extra}

    def rejudge(level: float, choose_at: float = MIN_CONFIDENCE) -> tuple[str, str, stats.RatioCI]:
        c = at_level(level, choose_at) if at_level is not None else ci
        return (*r.judge(c, ci_yes), c)

    return Comparison(what, config, r.text, result, ci, why, {**r.columns(), **extra}, rejudge if at_level else None)


def sources(*frames: pd.DataFrame) -> dict[str, tuple]:
    """extra["_sources"] of a comparison that read these trial rows (Comparison.sources)."""
    rows = tuple((i, lang) for f in frames if "language" in f.columns for i, lang in zip(f.index, f["language"]))
    return {"_sources": rows}


def by_round(a: pd.DataFrame, b: pd.DataFrame, scale: float = 1.0) -> tuple[stats.RatioCI, AtLevel, dict]:
    """a/b of two sides' trials (rows with value and, when known, trial): paired by round
    where it holds, with the same choice at any other level, and the comparison's extra
    (why it is unpaired; the rows it read)."""
    ci, why = paired.ratio_by_round(a, b, min_confidence=MIN_CONFIDENCE)

    def at_level(level: float, choose_at: float) -> stats.RatioCI:
        return paired.ratio_by_round(a, b, level, choose_at)[0].scaled(scale)

    return ci.scaled(scale), at_level, {**({"method_note": why} if why else {}), **sources(a, b)}


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
        common = [x for x, gx in g.groupby(along) if langs <= set(gx["language"])]
        if common:
            out.append({**dict(zip(keys, kv)), along: max(common)})
    return out


# ------------------------------------------------------------------ comparison factories


def ratio_between_languages(
    d: pd.DataFrame,
    num: str,
    den: str,
    cfg: dict,
    expect: Expectation,
    what: str | None = None,
    config: str | None = None,
) -> Comparison | None:
    """The ratio num/den of two languages' values at one configuration cfg (None if either
    side has no value there); `config` is how the row names it (default: all of cfg)."""
    a, b = rows_where(d, language=num, **cfg), rows_where(d, language=den, **cfg)
    if len(a) == 0 or len(b) == 0:
        return None
    ci, at_level, note = by_round(a, b)
    return judged(what or f"{label(num)}/{label(den)}", config or config_text(cfg), ci, expect, at_level, **note)


def ratio_between_configs(
    d: pd.DataFrame,
    language: str,
    num_cfg: dict,
    den_cfg: dict,
    expect: Expectation,
    what: str,
    config: str,
    divide_by: float = 1.0,
) -> Comparison | None:
    """One language's values at num_cfg over its values at den_cfg (optionally divided
    by a known factor, e.g. N2/N1 for growth faster than linear)."""
    ra, rb = rows_where(d, language=language, **num_cfg), rows_where(d, language=language, **den_cfg)
    a, b = ra["value"].to_numpy(dtype=float), rb["value"].to_numpy(dtype=float)
    if len(a) == 0 or len(b) == 0:
        return None
    # two configurations are different comparison groups of a round: not paired
    return judged(
        what,
        config,
        stats.ratio_ci(a, b).scaled(divide_by),
        expect,
        lambda level, _: stats.ratio_ci(a, b, level).scaled(divide_by),
        **sources(ra, rb),
    )


def paired_groups(d: pd.DataFrame, num: str, den: str, keys: Iterable[str], mask=None):
    """[(num rows, den rows)] and their configurations, for every configuration of
    `keys` measured in both languages."""
    dd = d if mask is None else d[mask]
    keys = present_keys(dd, keys)
    groups, cfgs = [], []
    for kv, g in dd.groupby(keys):
        kv = kv if isinstance(kv, tuple) else (kv,)
        a = g.loc[g["language"] == num]
        b = g.loc[g["language"] == den]
        if len(a) and len(b):
            groups.append((a, b))
            cfgs.append(dict(zip(keys, kv)))
    return groups, cfgs


def pooled_ratio_between_languages(
    d: pd.DataFrame,
    num: str,
    den: str,
    keys: Iterable[str],
    expect: Expectation,
    mask=None,
    where: str = "all configurations",
) -> list[Comparison]:
    """One pooled ratio num/den over every configuration measured in both (decides), and
    each configuration's own ratio (evidence only, result '-')."""
    groups, cfgs = paired_groups(d, num, den, keys, mask)
    if not groups:
        return []
    rows = []
    for (a, b), c in zip(groups, cfgs):
        ci, _, note = by_round(a, b)
        rows.append(Comparison(f"{label(num)}/{label(den)}", config_text(c), expect.text, "-", ci, "", note))
    ci, why = paired.pooled_ratio_by_round(groups, min_confidence=MIN_CONFIDENCE)
    pooled = judged(
        f"{label(num)}/{label(den)} pooled",
        f"{where} ({len(groups)})",
        ci,
        expect,
        lambda level, choose_at: paired.pooled_ratio_by_round(groups, level, choose_at)[0],
        **({"method_note": why} if why else {}),
        **sources(*(f for g in groups for f in g)),
    )
    return [pooled, *rows]
