"""The second stage's choice (docs/statistics.md, "The second stage"): after the profile's
own trials, which comparisons get extra rounds.

The rule, fixed before any sweep runs:

* candidates: the undecided comparisons ('unclear', an interval that overlaps the
  indifference zone) of claims whose verdict is inconclusive, with the trials they read
  (Comparison.sources); a decided claim cannot change by one more decided comparison;
* each gets P(decide): the chance that k more rounds give an interval wholly inside its
  yes region or its no region, taking its estimate for the truth and a normal model on the
  log scale (se shrinks as sqrt(n / (n + k)), the estimate moves by its conditional sd).
  It only ranks; the verdict itself is decided again by the claim's own interval method;
* ranked per claim: every claim's most likely comparison first, by P(decide), then every
  claim's second, and so on (until 25 Nov 2026 by P(decide) alone: four tied
  comparisons of one claim took a sweep's whole budget from another's), and given their
  configurations' rounds in that order while the budget lasts (the caller prices a set of
  configurations; a configuration already chosen costs nothing again).

Why no error-rate correction for looking twice: a comparison is decided by an interval that
excludes the whole indifference zone, so an extra look can only move a comparison whose
estimate is already clear of the zone; the simulation test (tests/python/
test_second_stage.py) checks that the two-stage rule keeps a supported <-> contradicted
flip between two sweeps below 1 % with true effects on the boundaries.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import pandas as pd
from scipy.stats import norm

from serverbench.analysis.claims.engine import INCONCLUSIVE, UNCLEAR, Verdict

Z95 = float(norm.ppf(0.975))
MIN_P_DECIDE = 0.05  # a comparison less likely than this to be decided is not worth a round


@dataclass(frozen=True)
class Candidate:
    claim: str
    comparison: str  # "label @ config", as the evidence table names it
    ratio: float
    lo: float
    hi: float
    rounds_now: int
    p_decide: float
    config_ids: tuple[str, ...]
    p_no: float = 0.0  # the part of p_decide that is a "no"

    def as_dict(self) -> dict:
        return {
            "claim": self.claim,
            "comparison": self.comparison,
            "ratio": round(self.ratio, 4),
            "interval": [round(self.lo, 4), round(self.hi, 4)],
            "rounds_now": self.rounds_now,
            "p_decide": round(self.p_decide, 4),
            "config_ids": list(self.config_ids),
        }


def _log(x: float) -> float:
    if x is None or not math.isfinite(x):
        return math.inf if x is not None and x > 0 else -math.inf
    return math.log(x) if x > 0 else -math.inf


def p_decide(
    ratio: float, lo: float, hi: float, level: float, n: int, k: int, regions: dict[str, float], z: float = Z95
) -> float:
    """P(an interval after k more rounds lies wholly in the yes or wholly in the no region),
    normal model on the log scale with the current estimate as the truth."""
    return sum(p_sides(ratio, lo, hi, level, n, k, regions, z))


def p_sides(
    ratio: float, lo: float, hi: float, level: float, n: int, k: int, regions: dict[str, float], z: float = Z95
) -> tuple[float, float]:
    """p_decide split: (P(wholly in the yes region), P(wholly in the no region))."""
    if not (ratio > 0 and lo > 0 and hi > lo and n >= 1 and k >= 1 and 0 < level < 1):
        return 0.0, 0.0
    est = math.log(ratio)
    se = (math.log(hi) - math.log(lo)) / (2 * norm.ppf(0.5 + level / 2))
    se_after = se * math.sqrt(n / (n + k))
    move = se * math.sqrt(n * k) / (n + k)  # sd of the estimate after k more rounds, given today's
    if move <= 0:
        return 0.0, 0.0

    def cdf(x: float) -> float:
        return float(norm.cdf((x - est) / move)) if math.isfinite(x) else (1.0 if x > 0 else 0.0)

    half = z * se_after
    yes_lo, yes_hi = _log(regions.get("yes_lo", math.nan)), _log(regions.get("yes_hi", math.nan))
    p_yes = max(0.0, cdf(yes_hi - half) - cdf(yes_lo + half)) if yes_hi > yes_lo else 0.0
    no_below, no_above = _log(regions.get("no_below", math.nan)), _log(regions.get("no_above", math.nan))
    p_no = (cdf(no_below - half) if no_below > -math.inf else 0.0) + (
        1.0 - cdf(no_above + half) if no_above < math.inf else 0.0
    )
    total = p_yes + p_no
    if total > 1.0:  # rounding at the regions' shared edge
        p_yes, p_no = p_yes / total, p_no / total
    return p_yes, p_no


def candidates(verdicts: Iterable[Verdict], runs: pd.DataFrame, rounds: int) -> list[Candidate]:
    """The undecided comparisons of inconclusive claims, with the configurations they read
    (config_id of the processed runs), ranked: highest P(decide) first."""
    out = []
    for v in verdicts:
        if v.verdict != INCONCLUSIVE:
            continue
        for c in v.comparisons:
            ci = c.ci
            if c.result != UNCLEAR or ci is None or not c.sources:
                continue
            ids = config_ids_of(c.sources, runs)
            if not ids:
                continue
            regions = {k: c.extra.get(k, math.nan) for k in ("yes_lo", "yes_hi", "no_below", "no_above")}
            n = int(min(ci.n_num, ci.n_den))
            p_yes, p_no = p_sides(ci.ratio, ci.lo, ci.hi, ci.level, n, rounds, regions)
            out.append(Candidate(v.id, f"{c.label} @ {c.config}", ci.ratio, ci.lo, ci.hi, n, p_yes + p_no, ids, p_no))
    return rank(out)


def rank(cands: list[Candidate]) -> list[Candidate]:
    """Per claim, its candidates by P(decide); then every claim's best before any claim's
    second (and so on), by P(decide) within a turn: one more decided comparison of a claim
    that already has one is less likely to change its verdict than another claim's first."""
    by_claim: dict[str, list[Candidate]] = {}
    for c in sorted(cands, key=lambda c: (-c.p_decide, c.claim, c.comparison)):
        by_claim.setdefault(c.claim, []).append(c)
    turns = [(k, c) for cs in by_claim.values() for k, c in enumerate(cs)]
    return [c for _, c in sorted(turns, key=lambda t: (t[0], -t[1].p_decide, t[1].claim, t[1].comparison))]


def config_ids_of(sources: tuple, runs: pd.DataFrame) -> tuple[str, ...]:
    """The config_ids of the rows a comparison read; a row whose language does not match the
    runs table's (a frame re-indexed on the way) makes the whole set unknown: ()."""
    ids = []
    for label, lang in sources:
        if label not in runs.index or runs.at[label, "language"] != lang:
            return ()
        ids.append(str(runs.at[label, "config_id"]))
    return tuple(sorted(set(ids)))


def choose(
    ranked: list[Candidate], cost_s: Callable[[set[str]], float], budget_s: float, min_p: float = MIN_P_DECIDE
) -> tuple[list[Candidate], float]:
    """The candidates given rounds, in rank order while the budget lasts (a candidate that
    does not fit is passed over, a cheaper one after it may still fit); P(decide) below
    min_p is not worth a round. Returns them and the estimated seconds they take."""
    chosen: list[Candidate] = []
    configs: set[str] = set()
    spent = 0.0
    for c in ranked:
        if c.p_decide < min_p:
            continue
        new = set(c.config_ids) - configs
        extra = cost_s(configs | new) - cost_s(configs) if new else 0.0
        if spent + extra > budget_s:
            continue
        chosen.append(c)
        configs |= new
        spent += extra
    return chosen, spent


def _rerun_note(info: dict) -> str:
    """The sentence on how P(verdict) counts a re-run's second stage (analysis/rerun.py)."""
    from serverbench.analysis import spread
    from serverbench.analysis.claims import decision

    took = info.get("stage1_s")
    if not took:
        return ""
    kind = decision.machine_kind(info.get("host"))
    sd, measured = spread.stage1_log_sd(kind, info.get("profile"))
    where = (
        f"measured on this kind of machine: {kind}"
        if measured
        else f"the default: none measured for this profile on {kind or 'this kind of machine'}"
    )
    return (
        f" P(verdict) counts what a re-run's second stage would do: its stage 1 taken as log-normal around "
        f"this sweep's {took:.0f} s with a log sd of {sd:.3g} ({where}), each time given the budget it would "
        "leave, so a claim decided with this stage's rounds counts as decided only as often as a re-run's "
        'stage would reach it (docs/statistics.md, "The second stage in the copies").'
    )


def summary(info: dict) -> str:
    """The report's paragraph on the second stage of a sweep (sweep.json's second_stage)."""
    info = info or {}
    st = info.get("second_stage")
    prof = ((info.get("manifest") or {}).get("resolved_profile") or {}).get("second_stage") or {}
    if not st:
        if prof.get("enabled"):
            took, deadline = info.get("stage1_s"), prof.get("deadline_s")
            if took is not None and deadline is not None and took >= deadline:
                return (
                    f"**The second stage** had no budget: stage 1 took {took:.0f} s of the profile's "
                    f"{deadline:.0f} s deadline for both stages (a slower machine, or a busy one), so no "
                    "comparison got more rounds." + _rerun_note(info)
                )
            return (
                "**The second stage** ran no rounds: it chose none, the sweep stopped before it, or the sweep "
                "ran in shards."
            )
        return "**No second stage**: this sweep's profile has no `[second_stage]` table."
    chosen = st.get("chosen") or []
    head = (
        f"**The second stage.** After the profile's own trials, {st.get('candidates', 0)} comparison(s) of "
        f"inconclusive claims were undecided; {len(chosen)} got {st.get('rounds')} more round(s) of every "
        f"language of their configurations (estimated {st.get('estimated_s', 0):.0f} s of a "
        f"{st.get('budget_s', 0):.0f} s budget), chosen by P(decide), the chance that those rounds decide "
        'them, each claim\'s best first (docs/statistics.md, "The second stage"). The verdicts above use every round.'
    ) + _rerun_note(info)
    if not chosen:
        return head
    rows = "\n".join(f"- {c['claim']}: {c['comparison']} (P(decide) {c['p_decide']:.2f})" for c in chosen)
    return head + "\n\n" + rows
