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

import numpy as np
import pandas as pd
from scipy.stats import norm

from serverbench.analysis.claims.engine import INCONCLUSIVE, UNCLEAR, Verdict
from serverbench.harness import second_stage as harness_second_stage

Z95 = float(norm.ppf(0.975))


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
            ids = _config_ids(c.sources, runs)
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


def _config_ids(sources: tuple, runs: pd.DataFrame) -> tuple[str, ...]:
    """The config_ids of the rows a comparison read; a row whose language does not match the
    runs table's (a frame re-indexed on the way) makes the whole set unknown: ()."""
    ids = []
    for label, lang in sources:
        if label not in runs.index or runs.at[label, "language"] != lang:
            return ()
        ids.append(str(runs.at[label, "config_id"]))
    return tuple(sorted(set(ids)))


def choose(
    ranked: list[Candidate], cost_s: Callable[[set[str]], float], budget_s: float, min_p: float = 0.05
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
    """The sentence on how P(verdict) counts a re-run's second stage (left_undecided)."""
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
        f" P(verdict) counts what a re-run's second stage could decide: its stage 1 taken as log-normal around "
        f"this sweep's {took:.0f} s with a log sd of {sd:.3g} ({where}), each time given the budget it would "
        'leave (docs/statistics.md, "The second stage in the copies").'
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


def _group_of(config_id: str, language: str) -> str:
    """A configuration's comparison group: its id without the language (harness.task.config_id
    puts it second, "bench/lang/variant/..."; other ids, the synthetic sweeps' among them,
    lose their first mention of the language)."""
    parts = config_id.split("/")
    if len(parts) > 2:
        return "/".join(parts[:1] + parts[2:])
    return config_id.replace(language, "*", 1)


def run_cost(runs: pd.DataFrame, rounds: int) -> Callable[[set[str]], float]:
    """What serverbench.stages prices, from the processed runs: `rounds` more trials of every
    configuration in the comparison groups of config_ids, each at its mean stage-1 wall time
    plus the harness's per-run overhead."""
    nw = runs[~runs["warmup"].astype(bool)]
    if "stage" in nw.columns:
        nw = nw[nw["stage"].fillna(1).astype(int) <= 1]
    walls: dict[str, list[float]] = {}
    group: dict[str, str] = {}
    for (cid, lang), w in nw.groupby(["config_id", "language"])["wall_s"].mean().items():
        group[str(cid)] = _group_of(str(cid), str(lang))
        if pd.notna(w):
            walls.setdefault(group[str(cid)], []).append(float(w))

    def cost_s(config_ids: set[str]) -> float:
        groups = {group.get(c, c) for c in config_ids}
        return rounds * sum(w + harness_second_stage.OVERHEAD_S for g in groups for w in walls.get(g, []))

    return cost_s


def rerun_reach(
    ranked: list[Candidate],
    cost_s: Callable[[set[str]], float],
    settings: dict,
    stage1_s: float,
    log_sd: float,
    points: int = 41,
) -> float:
    """The share of the claims with candidates that a re-run's second stage would reach,
    averaged over the re-run's stage-1 time: log-normal around this sweep's, with sd
    sqrt(2) * log_sd (both sweeps' times vary), at `points` equally likely quantiles; each
    time gives the stage its budget (harness.second_stage.budget_s: nothing once the
    deadline has passed) and `choose` spends it."""
    claims = {c.claim for c in ranked}
    if not claims or not stage1_s or stage1_s <= 0:
        return 0.0
    z = norm.ppf((np.arange(points) + 0.5) / points)
    total = 0.0
    for t in stage1_s * np.exp(math.sqrt(2.0) * max(log_sd, 0.0) * z):
        chosen, _ = choose(ranked, cost_s, harness_second_stage.budget_s(settings, float(t)))
        total += len({c.claim for c in chosen}) / len(claims)
    return total / points


def left_undecided(verdicts: Iterable[Verdict], P) -> dict[str, tuple[float, float]]:
    """For a sweep whose profile has a second stage: per inconclusive claim, the chance that
    a re-run's second stage decides it through a comparison this sweep's did not extend (its
    rounds all stage 1): (P(yes), P(no)) of that claim's most likely such comparison, with
    the stage's number of rounds (a "yes" counts only when it is the claim's last undecided
    comparison), times `rerun_reach`: the share of the claims with candidates that a re-run's
    stage would reach, over the re-run's stage-1 time (the between-sweep sd of its log,
    spread.stage1_log_sd, measured per kind of machine and profile). A re-run ranks its own
    candidates (its stage-1 trials differ), so the share, not this sweep's ranking, says how
    likely a given claim is to be reached. A stage that had no budget here (stage 1 passed
    the deadline) still counts: a re-run's stage 1 may end in time. Until 26 Nov 2026 such a
    sweep counted as one whose re-runs would have no budget either, and on issue 26's
    15:14-16:28 Intel sweeps C5 and C6 were labelled robust inconclusive at P 1.00 by the two
    sweeps whose stage 1 ended 8-28 s past the deadline, then decided by the others' stage
    (docs/statistics.md, section 10). {} for a profile without a second stage or a sharded
    sweep (a re-run in shards has none either)."""
    info = getattr(P, "info", None) or {}
    manifest = info.get("manifest") or {}
    settings = (manifest.get("resolved_profile") or {}).get("second_stage") or {}
    runs, stage1_s = P.runs, info.get("stage1_s")
    if not settings.get("enabled") or manifest.get("shard") or runs is None or runs.empty or not stage1_s:
        return {}
    rounds = int((info.get("second_stage") or {}).get("rounds") or settings.get("rounds") or 0)
    if rounds < 1:
        return {}
    stage = runs["stage"].fillna(1).astype(int) if "stage" in runs.columns else pd.Series(1, index=runs.index)
    extended = set(runs.loc[stage >= 2, "config_id"].astype(str))
    verdicts = list(verdicts)
    # a "yes" settles a claim only when it was the claim's last undecided comparison
    undecided = {v.id: sum(c.result == UNCLEAR for c in v.comparisons) for v in verdicts}
    ranked = candidates(verdicts, runs, rounds)
    from serverbench.analysis import spread
    from serverbench.analysis.claims import decision

    log_sd, _ = spread.stage1_log_sd(decision.machine_of(P), info.get("profile"))
    reach = rerun_reach(ranked, run_cost(runs, rounds), settings, float(stage1_s), log_sd)
    out: dict[str, tuple[float, float]] = {}
    for c in ranked:
        if set(c.config_ids) & extended:
            continue
        p_yes = c.p_decide - c.p_no if undecided.get(c.claim) == 1 else 0.0
        if p_yes + c.p_no > sum(out.get(c.claim, (0.0, 0.0))):
            out[c.claim] = (p_yes, c.p_no)
    return {k: (y * reach, n * reach) for k, (y, n) in out.items() if reach > 0}
