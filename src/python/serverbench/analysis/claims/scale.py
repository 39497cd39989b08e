"""A claim's verdict at a scale from every sweep of its pieces (protocol 2, section 5).

Each sweep was judged on its own (claims.csv, claims_evidence.csv). Here every deciding
comparison's per-sweep ratios are the observations: the combined ratio is exp of the mean
of the S sweeps' log ratios with a t interval on S - 1 degrees of freedom at the protocol's
level for "yes", and "no" only through Holm's step-down at 1 - 2 alpha / k (_holm), the regions as protocol 2 draws
them (an order word's no region at 1). A comparison made in one sweep only has no
between-sweep interval: it keeps that sweep's own result, and says so. A comparison without
a ratio (C3's limits) is yes or no when every sweep that made it agrees. The claim rule is
then the protocol's: supported when every comparison is yes, contradicted when any is no,
inconclusive otherwise; over the union of its pieces' comparisons.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import stats as sps

from serverbench import protocol
from serverbench.analysis.claims import engine
from serverbench.rawdata.columns import Col

YES, NO, UNCLEAR = "yes", "no", "unclear"
DECIDING = (YES, NO, UNCLEAR)  # a comparison shown beside the deciding ones has result "-"
DIFFER = "differs between sweeps"  # no comparison to combine and the sweeps' own verdicts differ


@dataclass
class SweepVerdict:
    """One sweep's own verdict on one claim, with its evidence rows for that claim."""

    piece: str
    sweep: str
    machine: str
    protocol: int | None
    verdict: str
    evidence: pd.DataFrame = field(default_factory=pd.DataFrame)


@dataclass
class Combined:
    """A comparison over the sweeps that made it."""

    piece: str
    comparison: str
    config: str
    sweeps: list[str]
    ratios: list[float]
    ratio: float
    lo: float
    hi: float
    result: str
    regions: tuple[float, float, float, float]  # yes_lo, yes_hi, no_below, no_above
    holm_level: float | None = None  # the level a 'no' held at, or needed (two or more sweeps)
    pooled: Pool | None = None  # protocol 4: the interval's sd and df are its benchmark's pool's

    @property
    def rejudged(self) -> bool:
        """Whether its interval is computed here (two or more sweeps, or any with a pool), not
        taken from its one sweep."""
        return self.n >= 2 or self.pooled is not None

    @property
    def n(self) -> int:
        return len(self.sweeps)

    def text(self) -> str:
        where = f"{self.comparison} ({self.config})" if self.config else self.comparison
        if not np.isfinite(self.ratio):
            return f"{where}: {self.result} in {self.n} sweep(s)"
        if self.n == 1 and self.pooled is None:
            spread = "within its one sweep (between-sweep spread unknown)"
            return f"{where}: {self.ratio:.3g} [{self.lo:.3g}, {self.hi:.3g}] {spread}: {self.result}"
        held = f" at {self.holm_level:.1%} (Holm)" if self.result == NO and self.holm_level else ""
        sweeps = f"{self.n} sweep{'s' * (self.n != 1)}"
        spread = f"{sweeps}, pooled sd on {self.pooled.df} df" if self.pooled else f"between {sweeps}"
        return f"{where}: {self.ratio:.3g} [{self.lo:.3g}, {self.hi:.3g}] {spread}: {self.result}{held}"


@dataclass
class ClaimAtScale:
    id: str
    verdict: str
    sweeps: list[SweepVerdict]
    comparisons: list[Combined]
    version: int | None = None  # the protocol whose scale rule combined them

    @property
    def tested(self) -> list[SweepVerdict]:
        """The sweeps that could test the claim (a piece without its deciding configurations,
        e.g. one core for a claim about two or more, is not counted as disagreeing)."""
        return [s for s in self.sweeps if s.verdict != engine.NOT_TESTABLE] or self.sweeps

    @property
    def agree(self) -> int:
        """How many of the sweeps that could test it gave the combined verdict on their own."""
        return sum(s.verdict == self.verdict for s in self.tested)

    def agreement(self) -> str:
        """E.g. "2 of 3", "1 of 1 (1 more could not test it)"."""
        rest = len(self.sweeps) - len(self.tested)
        return f"{self.agree} of {len(self.tested)}" + (f" ({rest} more could not test it)" if rest else "")

    @property
    def one_sweep_only(self) -> bool:
        """Whether every comparison with a ratio rests on one sweep (and there is one)."""
        rated = [c for c in self.comparisons if np.isfinite(c.ratio)]
        return bool(rated) and all(c.n == 1 and c.pooled is None for c in rated)


def no_region(yes_lo: float, yes_hi: float) -> tuple[float, float]:
    """Protocol 2's no region from a yes region: one margin factor beyond each bound, at
    the bound itself where it is the order (1)."""
    with protocol.in_force(protocol.newest()):
        m, ordinal = protocol.margin_factor(), protocol.ordinal_no_region()
    below = 0.0 if yes_lo <= 0 else yes_lo if ordinal and yes_lo == 1 else yes_lo / m
    above = math.inf if not np.isfinite(yes_hi) else yes_hi if ordinal and yes_hi == 1 else yes_hi * m
    return below, above


def t_interval(logs: np.ndarray, level: float, pool: Pool | None = None) -> tuple[float, float, float]:
    """exp(mean) and its t interval at `level` (two-sided) over S log ratios: on S - 1 degrees
    of freedom with their own sd (S >= 2), or, given a pool (protocol 4), with the pooled sd on
    the pool's degrees of freedom (S >= 1)."""
    n = len(logs)
    sd, df = (pool.sd, pool.df) if pool else (float(np.std(logs, ddof=1)), n - 1)
    mean, se = float(np.mean(logs)), sd / math.sqrt(n)
    q = float(sps.t.ppf(0.5 + level / 2, df))
    return math.exp(mean), math.exp(mean - q * se), math.exp(mean + q * se)


@dataclass(frozen=True)
class Pool:
    """Protocol 4's between-sweep sd of log ratios, pooled over every deciding comparison with a
    ratio of one benchmark's claims made in two or more sweeps (one-way ANOVA's residual mean
    square: sum over comparisons of squared deviations from their own mean, over the sum of
    S - 1), so that every comparison borrows the degrees of freedom of all of them."""

    benchmark: str
    sd: float
    df: int
    comparisons: int

    def text(self) -> str:
        return (
            f"{self.benchmark}: pooled between-sweep sd of log ratios {self.sd:.3g} "
            f"on {self.df} df ({self.comparisons} comparisons)"
        )


def pool(benchmark: str, sweeps: list[SweepVerdict]) -> Pool | None:
    """The pool of these sweeps' deciding comparisons with a ratio (each (piece, comparison,
    config) once, each sweep once), or None when no comparison was made in two sweeps."""
    seen: dict[tuple[str, str, str], dict[str, float]] = {}
    for s in sweeps:
        if s.evidence is None or s.evidence.empty or Col.result not in s.evidence:
            continue
        for r in s.evidence[s.evidence[Col.result].isin(DECIDING)].to_dict("records"):
            x = _f(r.get(Col.ratio))
            if np.isfinite(x) and x > 0 and np.isfinite(_f(r.get(Col.yes_lo))):
                key = (s.piece, str(r.get(Col.comparison, "")), str(r.get(Col.config, "") or ""))
                seen.setdefault(key, {})[s.sweep] = math.log(x)
    groups = [np.array(list(v.values())) for v in seen.values() if len(v) >= 2]
    df = sum(len(g) - 1 for g in groups)
    if df == 0:
        return None
    ss = sum(float(np.sum((g - g.mean()) ** 2)) for g in groups)
    return Pool(benchmark, math.sqrt(ss / df), df, len(groups))


def pooled_rule() -> bool:
    """Whether the version in force pools the between-sweep variance (protocol 4 on)."""
    return protocol.section("scale").get("variance") == "pooled"


def _judge(lo: float, hi: float, regions: tuple[float, float, float, float]) -> str:
    yes_lo, yes_hi, no_below, no_above = regions
    if lo >= yes_lo and hi <= yes_hi:
        return YES
    if hi <= no_below or lo >= no_above:
        return NO
    return UNCLEAR


def _f(v) -> float:
    try:
        return float(v)
    except (TypeError, ValueError):
        return float("nan")


def _comparisons(sweeps: list[SweepVerdict], pool_: Pool | None = None) -> list[Combined]:
    rows = []
    for s in sweeps:
        if s.evidence is None or s.evidence.empty or Col.result not in s.evidence:
            continue
        ev = s.evidence[s.evidence[Col.result].isin(DECIDING)]
        for r in ev.to_dict("records"):
            rows.append((s.piece, str(r.get(Col.comparison, "")), str(r.get(Col.config, "") or ""), s.sweep, r))
    level = protocol.level()
    out = []
    keys = list(dict.fromkeys((p, c, g) for p, c, g, _, _ in rows))
    for piece, comp, config in keys:
        mine = [(sw, r) for p, c, g, sw, r in rows if (p, c, g) == (piece, comp, config)]
        ratios = [_f(r.get(Col.ratio)) for _, r in mine]
        last = mine[-1][1]
        yes_lo, yes_hi = _f(last.get(Col.yes_lo)), _f(last.get(Col.yes_hi))
        regions = (yes_lo, yes_hi, *no_region(yes_lo, yes_hi)) if np.isfinite(yes_lo) else (np.nan,) * 4
        names = [sw for sw, _ in mine]
        finite = all(np.isfinite(x) and x > 0 for x in ratios)
        if not finite or not np.isfinite(yes_lo):  # no ratio: the sweeps' results, when they agree
            results = {str(r.get(Col.result)) for _, r in mine}
            result = results.pop() if len(results) == 1 else UNCLEAR
            out.append(
                Combined(piece, comp, config, names, ratios, float("nan"), float("nan"), float("nan"), result, regions)
            )
        elif len(mine) == 1 and pool_ is None:  # one sweep: its own interval and result
            r = mine[0][1]
            out.append(
                Combined(
                    piece,
                    comp,
                    config,
                    names,
                    ratios,
                    ratios[0],
                    _f(r.get(Col.ci_lo)),
                    _f(r.get(Col.ci_hi)),
                    str(r[Col.result]),
                    regions,
                )
            )
        else:  # 'yes' from the protocol's level; 'no' only through Holm's step-down below
            ratio, lo, hi = t_interval(np.log(ratios), level, pool_)
            result = YES if _judge(lo, hi, regions) == YES else UNCLEAR
            out.append(Combined(piece, comp, config, names, ratios, ratio, lo, hi, result, regions, pooled=pool_))
    _holm(out)
    return out


def _holm(comps: list[Combined]) -> None:
    """Holm's step-down for 'no' (docs/protocol.md sections 1 and 5), as within a sweep
    (familywise.py): the family is the claim's comparisons with a ratio, over the union of its
    pieces; with `left` of them not yet shown to be 'no', each combined over two or more sweeps
    whose t interval at two-sided level 1 - 2 alpha / left lies in the no region is a 'no';
    repeat with the smaller `left` until none is added. A one-sweep comparison keeps its sweep's
    own result (its 'no' passed Holm within that sweep) and counts as shown when it is 'no'.
    Each family member's `holm_level` is the level its 'no' held at, or the one it needed."""
    family = [c for c in comps if np.isfinite(c.ratio)]
    alpha = protocol.alpha()
    shown = {id(c) for c in family if not c.rejudged and c.result == NO}
    decided: dict[int, float] = {}
    while len(shown) + len(decided) < len(family):
        at = 1 - 2 * alpha / (len(family) - len(shown) - len(decided))
        new = [
            c
            for c in family
            if c.rejudged
            and id(c) not in decided
            and _judge(*t_interval(np.log(c.ratios), at, c.pooled)[1:], c.regions) == NO
        ]
        if not new:
            break
        decided.update((id(c), at) for c in new)
    left = max(len(family) - len(shown) - len(decided), 1)
    for c in family:
        if c.rejudged:
            c.holm_level = decided.get(id(c), 1 - 2 * alpha / left)
            if id(c) in decided:
                c.result = NO


def combine(
    claim_id: str, sweeps: list[SweepVerdict], version: int | None = None, pool_: Pool | None = None
) -> ClaimAtScale:
    """The claim's verdict at the scale of these sweeps (every sweep of every piece that runs
    its benchmark) by the scale rule of `version` (default: the newest); under a version that
    pools (protocol 4) with its benchmark's pool (combine_all computes it)."""
    v = version or protocol.newest()
    with protocol.in_force(v):
        comps = _comparisons(sweeps, pool_ if pooled_rule() else None)
    if any(s.verdict == engine.ERROR for s in sweeps):  # a sweep's check failed: nothing hides it
        return ClaimAtScale(claim_id, engine.ERROR, sweeps, comps, v)
    # the protocol's claim rule over the comparisons; with nothing to combine (no evidence
    # table), the own verdicts of the sweeps that could test it
    verdict = engine.combine([c.result for c in comps]) if comps else own_verdict(sweeps)
    return ClaimAtScale(claim_id, verdict, sweeps, comps, v)


def own_verdict(sweeps: list[SweepVerdict]) -> str:
    """The sweeps' own verdict where every one that could test the claim gives the same
    (not testable when none could), else DIFFER."""
    own = {s.verdict for s in sweeps if s.verdict != engine.NOT_TESTABLE} or {engine.NOT_TESTABLE}
    return own.pop() if len(own) == 1 else DIFFER


def combine_all(
    groups: dict[str, list[SweepVerdict]], benchmark: dict[str, str], version: int | None = None
) -> tuple[list[ClaimAtScale], dict[str, Pool]]:
    """Every claim of `groups` ({claim: its sweeps}) at the scale of its sweeps by `version`'s
    rule, and the pools it used ({benchmark: Pool}; empty under a version that does not pool).
    `benchmark` names each claim's benchmark (its needs.table): a pool is one benchmark's."""
    v = version or protocol.newest()
    with protocol.in_force(v):
        pooling = pooled_rule()
    pools: dict[str, Pool] = {}
    if pooling:
        for b in dict.fromkeys(benchmark[c] for c in groups):
            mine = [s for c, ss in groups.items() if benchmark[c] == b for s in ss]
            found = pool(b, mine)
            if found:
                pools[b] = found
    return [combine(c, ss, v, pools.get(benchmark[c])) for c, ss in groups.items()], pools


def confirmatory(c: ClaimAtScale) -> bool:
    """Whether any of the claim's sweeps started after its version's freeze (the sweep id's
    time stamp): a rule is confirmed only on data gathered after it was fixed; else its verdict
    on these sweeps is exploratory."""
    with protocol.in_force(c.version):
        frozen = str(protocol.load()["frozen_utc"]).replace("-", "").replace(":", "")
    stamps = [re.search(r"(\d{8}T\d{6}Z)$", s.sweep) for s in c.sweeps]
    return any(m is not None and m.group(1) > frozen for m in stamps)
