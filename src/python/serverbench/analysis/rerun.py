"""What a re-run's second stage would do, for P(verdict) (docs/statistics.md, "The second
stage in the copies").

reliability.py's copies redraw a sweep's rounds; they do not re-run its second stage, and a
re-run's stage would not repeat this sweep's. Its stage 1 ends at another time (so it has
another budget, or none once the deadline has passed), and its stage-1 trials rank the
candidates differently. So, for a sweep whose profile has a second stage:

* `reach`: the share of the claims with candidates (on this sweep's stage-1 trials) that a
  re-run's stage would reach, averaged over the re-run's stage-1 time (`rerun_reach`);
* a claim whose comparisons this sweep's stage extended is decided, in a re-run, with the
  extra rounds with probability `reach` and on stage 1's rounds alone otherwise:
  reliability.py mixes the copies of the whole sweep with copies of its stage-1 view
  (`stage_one`) for `extended_claims`;
* an inconclusive claim whose undecided comparison this sweep's stage did not extend may be
  decided by a re-run's stage: `left_undecided`.

Until 26 Nov 2026 (evening) only the last was counted, scaled by the share this sweep's own
stage reached (0 when it had no budget): on issue 26's Intel sweeps of 15:16-16:28, two
sweeps whose stage 1 ended 8 and 28 s past the deadline labelled C5 and C6 robust
inconclusive, and the other three sweeps' stages decided them; and a sweep whose stage
decided C5 and C6 labelled them robust contradicted, though a re-run without a budget would
leave them inconclusive.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import norm

from serverbench.analysis.claims.engine import UNCLEAR, Verdict
from serverbench.analysis.second_stage import MIN_P_DECIDE, Candidate, candidates, choose, config_ids_of
from serverbench.harness import second_stage as harness_second_stage


def _stage(runs: pd.DataFrame) -> pd.Series:
    if "stage" in runs.columns:
        return runs["stage"].fillna(1).astype(int)
    return pd.Series(1, index=runs.index)


def settings_of(P: Any) -> dict | None:
    """The sweep's [second_stage] settings when a re-run would have a second stage (the
    profile has one, the sweep ran whole, its stage-1 time is known), else None."""
    info = getattr(P, "info", None) or {}
    manifest = info.get("manifest") or {}
    settings = (manifest.get("resolved_profile") or {}).get("second_stage") or {}
    runs = getattr(P, "runs", None)
    if not settings.get("enabled") or manifest.get("shard") or runs is None or runs.empty:
        return None
    if not info.get("stage1_s") or rounds_of(P) < 1:
        return None
    return settings


def rounds_of(P: Any) -> int:
    """The rounds the second stage gives a configuration: what it ran with, else the profile's."""
    info = getattr(P, "info", None) or {}
    settings = ((info.get("manifest") or {}).get("resolved_profile") or {}).get("second_stage") or {}
    return int((info.get("second_stage") or {}).get("rounds") or settings.get("rounds") or 0)


def extended(P: Any) -> set[str]:
    """The configurations this sweep's second stage gave rounds."""
    runs = P.runs
    return set(runs.loc[_stage(runs) >= 2, "config_id"].astype(str))


def stage_one(P: Any) -> Any:
    """P as it stood after stage 1: its runs without the second stage's (the claims read
    values from the runs)."""
    view = copy.copy(P)
    view.runs = P.runs[_stage(P.runs) <= 1]
    return view


def extended_claims(verdicts: Iterable[Verdict], P: Any) -> set[str]:
    """The claims with a comparison that read a configuration the second stage extended."""
    ext = extended(P)
    if not ext:
        return set()
    return {v.id for v in verdicts for c in v.comparisons if c.sources and set(config_ids_of(c.sources, P.runs)) & ext}


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
    nw = nw[_stage(nw) <= 1]
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
    """The share of the claims with candidates worth a round (P(decide) >= MIN_P_DECIDE) that
    a re-run's second stage would reach, averaged over the re-run's stage-1 time: log-normal
    around this sweep's, with sd sqrt(2) * log_sd (both sweeps' times vary), at `points`
    equally likely quantiles; each time gives the stage its budget (harness.second_stage.
    budget_s: nothing once the deadline has passed) and `choose` spends it."""
    claims = {c.claim for c in ranked if c.p_decide >= MIN_P_DECIDE}
    if not claims or not stage1_s or stage1_s <= 0:
        return 0.0
    z = norm.ppf((np.arange(points) + 0.5) / points)
    total = 0.0
    for t in stage1_s * np.exp(math.sqrt(2.0) * max(log_sd, 0.0) * z):
        chosen, _ = choose(ranked, cost_s, harness_second_stage.budget_s(settings, float(t)))
        total += len({c.claim for c in chosen}) / len(claims)
    return total / points


def reach(P: Any, evaluate: Callable[[Any], list[Verdict]]) -> float | None:
    """`rerun_reach` for sweep P, ranking the candidates of its stage-1 view (evaluate:
    the claims' verdicts on a view), with the between-sweep sd of stage 1's log time
    measured for its kind of machine and profile (spread.stage1_log_sd); None when a re-run
    would have no second stage (settings_of)."""
    from serverbench.analysis import spread
    from serverbench.analysis.claims import decision

    settings = settings_of(P)
    if settings is None:
        return None
    first = stage_one(P) if extended(P) else P
    rounds = rounds_of(P)
    ranked = candidates(evaluate(first), first.runs, rounds)
    log_sd, _ = spread.stage1_log_sd(decision.machine_of(P), P.info.get("profile"))
    return rerun_reach(ranked, run_cost(P.runs, rounds), settings, float(P.info["stage1_s"]), log_sd)


def left_undecided(verdicts: Iterable[Verdict], P: Any, share: float | None) -> dict[str, tuple[float, float]]:
    """Per inconclusive claim, the chance that a re-run's second stage decides it through a
    comparison this sweep's did not extend (its rounds all stage 1): (P(yes), P(no)) of that
    claim's most likely such comparison, with the stage's number of rounds (a "yes" counts
    only when it is the claim's last undecided comparison), times `share`, the re-run's
    reach (`reach`). A re-run ranks its own candidates (its stage-1 trials differ), so the
    share, not this sweep's ranking, says how likely a given claim is to be reached. {}
    when share is None (no second stage in a re-run) or 0."""
    if not share:
        return {}
    ext = extended(P)
    verdicts = list(verdicts)
    # a "yes" settles a claim only when it was the claim's last undecided comparison
    undecided = {v.id: sum(c.result == UNCLEAR for c in v.comparisons) for v in verdicts}
    out: dict[str, tuple[float, float]] = {}
    for c in candidates(verdicts, P.runs, rounds_of(P)):
        if set(c.config_ids) & ext:
            continue
        p_yes = c.p_decide - c.p_no if undecided.get(c.claim) == 1 else 0.0
        if p_yes + c.p_no > sum(out.get(c.claim, (0.0, 0.0))):
            out[c.claim] = (p_yes, c.p_no)
    return {k: (y * share, n * share) for k, (y, n) in out.items()}
