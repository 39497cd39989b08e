"""The probability of each verdict (docs/statistics.md, "How sure is a verdict?").

A verdict is a function of one sweep's trials. Had the sweep been run again, its trials
would differ in two ways: within the sweep (other draws of the same noise) and between
sweeps (the machine's state, which every trial of a sweep shares). `probabilities`
re-decides every claim on B simulated re-runs of the sweep:

* within and between: `resample.Rounds` redraws each table (its module says how and why:
  a smoothed, rescaled redraw of the rounds, and a between-sweep factor per cell).

P(supported), P(inconclusive), P(contradicted) are the verdicts' frequencies over the B
copies. The copies redraw rounds; they do not re-run the second stage, and a re-run's stage
would reach a share of the claims with candidates (rerun.reach: its stage 1 ends at another
time, so its budget differs, and it ranks its own candidates). So, for a profile with a
second stage: a claim that read a configuration this sweep's stage extended gets that share
of the copies' frequencies and the rest from copies of the stage-1 view (what a re-run
whose stage passes it over would decide); for an inconclusive claim whose best undecided
comparison this sweep did not extend, P(decide) of that comparison, times the share
(rerun.left_undecided), moves that share of P(inconclusive) to the side it would most
likely decide (a "no": contradicted; a "yes": supported).

A claim is *robust* when the verdict the sweep reports is the most frequent one with
P >= 0.9 beyond the copies' Monte Carlo error (`label`), and *borderline* when the
reported verdict's P is below 0.8 (the issue said "the
modal verdict"; the two differ only when the sweep reported an unusual verdict, and calling
that robust would mislead). With 5-7 rounds these are estimates of how repeatable the
verdict is, not exact probabilities (they lean towards 1/2: in tests/python/
test_reliability.py a truth of 0.77 is predicted 0.62 on average); the five-sweep check
in docs/statistics.md compares them with real repeats (Brier score).
"""

from __future__ import annotations

import multiprocessing
import os
import sys
import warnings
from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import beta

from serverbench.analysis import rerun, resample, second_stage
from serverbench.analysis.claims import engine

ROBUST, BORDERLINE, NEITHER = "robust", "borderline", "-"
ROBUST_P, BORDERLINE_P = 0.9, 0.8
# robust needs P >= ROBUST_P at this one-sided confidence over the B copies (label)
ROBUST_CONFIDENCE = 0.95
DEFAULT_B = 40  # ~0.7 s per copy on the 2-core VM, split over its 2 CPUs: ~19 s in the quick report
OUTCOMES = (engine.SUPPORTED, engine.INCONCLUSIVE, engine.CONTRADICTED, engine.NOT_TESTABLE, engine.ERROR)
COLUMNS = ["p_supported", "p_inconclusive", "p_contradicted", "p_not_testable", "p_error"]


def _count(P: Any, claims: list, opts: dict, seed: int, copies) -> dict[str, dict[str, int]]:
    """The verdicts' counts over the given copies; copy i draws from its own stream
    (seed, i), so the counts do not depend on how the copies are split between processes."""
    cache: dict = {}
    counts = {c.id: dict.fromkeys(OUTCOMES, 0) for c in claims}
    for i in copies:
        view = resample.Resampled(P, cache, np.random.default_rng([seed, i]), opts["spreads"])
        for c in claims:
            counts[c.id][engine.evaluate(c, view, opts).verdict] += 1
    return counts


_JOB: tuple[Any, ...] = ()  # what a forked worker counts over (set in the parent before forking)


def _count_job(copies) -> dict[str, dict[str, int]]:
    P, claims, opts, seed = _JOB
    return _count(P, claims, opts, seed, copies)


def default_workers() -> int:
    """Processes for the copies: the CPUs this process may use, at most 4 (the report runs
    after the sweep, on an idle machine; a copy takes ~0.7 s on the 2-core VM)."""
    try:
        return max(1, min(4, len(os.sched_getaffinity(0))))
    except AttributeError:  # no sched_getaffinity (macOS)
        return max(1, min(4, os.cpu_count() or 1))


def _counts(P: Any, claims: list, opts: dict, seed: int, B: int, workers: int) -> dict[str, dict[str, int]]:
    """The counts over copies 0..B-1, split over `workers` forked processes on Linux (in
    one process elsewhere, with the same result)."""
    global _JOB
    parts = [range(w, B, workers) for w in range(min(workers, B))]
    if len(parts) <= 1 or not sys.platform.startswith("linux"):  # fork is safe on Linux only
        return _count(P, claims, opts, seed, range(B))
    _JOB = (P, claims, opts, seed)
    try:
        with warnings.catch_warnings():
            # Python >= 3.12 warns when a process with threads (a Jupyter kernel) forks; the
            # workers only compute and return counts
            warnings.filterwarnings("ignore", message=".*multi-threaded.*fork", category=DeprecationWarning)
            with multiprocessing.get_context("fork").Pool(len(parts)) as pool:
                results = pool.map(_count_job, parts)
    finally:
        _JOB = ()
    return {c.id: {o: sum(r[c.id][o] for r in results) for o in OUTCOMES} for c in claims}


def probabilities(
    P: Any,
    B: int = DEFAULT_B,
    seed: int = 2018,
    spawn_metric: str = "all_ready_s",
    spreads: dict[str, float] | None = None,
    ids=None,
    workers: int | None = None,
) -> pd.DataFrame:
    """One row per claim: P of each verdict over B re-runs, the modal verdict, its P and
    the label (robust / borderline / -). workers: processes for the copies (default
    default_workers(); the result is the same for any number)."""
    opts = engine.options_for(spawn_metric, spreads, P)
    claims = [c for c in engine.all_claims() if ids is None or c.id in ids]
    workers = default_workers() if workers is None else workers
    counts = _counts(P, claims, opts, seed, B, workers)
    observed = {c.id: engine.evaluate(c, P, opts) for c in claims}
    # a re-run's second stage (rerun.py): it reaches this share of the claims with candidates
    share = rerun.reach(P, lambda view: [engine.evaluate(c, view, opts) for c in engine.all_claims()])
    left = rerun.left_undecided(observed.values(), P, share)
    mixed = [c for c in claims if c.id in rerun.extended_claims(observed.values(), P)] if share is not None else []
    first = _counts(rerun.stage_one(P), mixed, opts, seed, B, workers) if mixed else {}
    rows = []
    for c in claims:
        f = {o: counts[c.id][o] / B for o in OUTCOMES}
        if c.id in first:  # decided with the extra rounds only when a re-run's stage reaches it too
            f = {o: share * f[o] + (1.0 - share) * first[c.id][o] / B for o in OUTCOMES}
        if c.id in left:  # a re-run's second stage may decide what this sweep's left
            p_yes, p_no = left[c.id]
            moved = f[engine.INCONCLUSIVE] * (p_yes + p_no)
            f[engine.INCONCLUSIVE] -= moved
            f[engine.CONTRADICTED if p_no >= p_yes else engine.SUPPORTED] += moved
        # 4 decimals: P(decide)'s last bits differ between CPUs, and the committed file must not
        f = {o: round(x, 4) for o, x in f.items()}
        modal = max(OUTCOMES, key=lambda k: f[k])
        p = f[modal]
        reported = f.get(observed[c.id].verdict, 0.0)  # the label is about the verdict the sweep reports
        rows.append(
            {
                "id": c.id,
                **{col: f[o] for col, o in zip(COLUMNS, OUTCOMES)},
                "modal_verdict": modal,
                "p_modal": p,
                "reliability": label(p, reported, B),
                "copies": B,
            }
        )
    return pd.DataFrame(rows)


def label(p_modal: float, p_reported: float, copies: int = DEFAULT_B) -> str:
    """robust: the reported verdict is the most frequent one and its P is >= 0.9 beyond the
    copies' Monte Carlo error (the one-sided ROBUST_CONFIDENCE Clopper-Pearson lower bound
    of p_reported over `copies`: with 40 copies, all 40); borderline: the reported verdict
    has P < 0.8 (when the modal one is another, the sweep reported an unusual verdict,
    however sure the modal one is). Why the bound: a P of 0.90-0.97 from 40 copies cannot
    tell a verdict re-runs repeat 9 times in 10 from one they always repeat; on issue 26's
    Intel sweeps C2 (contradicted in 9 of 10) and C11 were labelled robust at P 0.93-0.97 in
    one sweep and changed verdict in another."""
    if p_reported < p_modal or copies <= 0:
        return BORDERLINE if p_reported < BORDERLINE_P else NEITHER
    k = p_reported * copies  # not always whole: rerun.py moves and mixes mass
    lower = float(beta.ppf(1.0 - ROBUST_CONFIDENCE, k, copies - k + 1)) if k > 0 else 0.0
    if lower >= ROBUST_P:
        return ROBUST
    return BORDERLINE if p_reported < BORDERLINE_P else NEITHER


def brier(probs: pd.DataFrame, observed: pd.DataFrame) -> float:
    """Mean over claims of the Brier score of the stated probabilities against the observed
    verdict frequencies: observed has one column per repeat sweep and a row per claim id."""
    scores = []
    for r in probs.itertuples():
        if r.id not in observed.index:
            continue
        seen = observed.loc[r.id]
        scores.append(sum((getattr(r, col) - float((seen == o).mean())) ** 2 for col, o in zip(COLUMNS, OUTCOMES)))
    return float(np.mean(scores)) if scores else float("nan")


FILE = "claims_reliability.csv"
STAMP = ".reliability_of"  # the claims.csv content (and copies) the file was computed for


def write(
    P: Any, out_dir=None, spawn_metric: str = "all_ready_s", copies: int = DEFAULT_B, force: bool = False, spreads=None
):
    """claims_reliability.csv beside claims.csv; recomputed only when claims.csv, the
    copies, the spreads or this module changed (a new sweep, new claims code, a new rule for
    the copies), since it costs ~1 s per copy."""
    import hashlib
    from pathlib import Path

    out = Path(out_dir) if out_dir else Path(P.folder)
    claims_csv, target, stamp = out / "claims.csv", out / FILE, out / STAMP
    key = hashlib.sha256(
        (claims_csv.read_bytes() if claims_csv.exists() else b"")
        + f"|{copies}|{sorted((spreads or {}).items())}|".encode()
        + Path(__file__).read_bytes()
        + Path(resample.__file__).read_bytes()
        + Path(second_stage.__file__).read_bytes()
        + Path(rerun.__file__).read_bytes()
    ).hexdigest()
    if not force and target.exists() and stamp.exists() and stamp.read_text(encoding="utf-8") == key:
        return target
    probabilities(P, B=copies, spawn_metric=spawn_metric, spreads=spreads).to_csv(target, index=False)
    stamp.write_text(key, encoding="utf-8")
    return target


def with_reliability(claims: pd.DataFrame, rel: pd.DataFrame) -> pd.DataFrame:
    """claims plus P(its verdict), the modal verdict's P and the label."""
    if rel is None or rel.empty:
        return claims
    m = claims.merge(rel, on="id", how="left")
    col = {o: c for c, o in zip(COLUMNS, OUTCOMES)}
    m["p_verdict"] = [getattr(r, col[r.verdict]) if r.verdict in col else np.nan for r in m.itertuples()]
    return m


def load(P: Any) -> pd.DataFrame:
    """The sweep's claims_reliability.csv (empty when it was not computed)."""
    from pathlib import Path

    f = Path(P.folder) / FILE
    return pd.read_csv(f) if f.exists() else pd.DataFrame()


def headline(claims: pd.DataFrame) -> str:
    """'20 claims. Verdicts: ...; robust: ..., borderline: ...' for the report."""

    def tally(t: pd.DataFrame) -> str:
        return ", ".join(f"**{n}** {v}" for v, n in t["verdict"].value_counts().items())

    text = f"{len(claims)} claims. "
    if "regime_kind" in claims.columns:
        at = claims[claims["regime_kind"] == "as the source"]
        red = claims[claims["regime_kind"] == "reduced"]
        other = claims[~claims["regime_kind"].isin(["as the source", "reduced"])]
        text += f"Tested at the scale their source measured: {len(at)}" + (f" ({tally(at)})" if len(at) else "")
        text += f". At a reduced scale (see the regime column): {len(red)}" + (f" ({tally(red)})" if len(red) else "")
        text += f". No source regime or no runs here: {len(other)}" + (f" ({tally(other)})" if len(other) else "") + "."
    else:
        text += "Verdicts: " + tally(claims) + "."
    if "reliability" in claims.columns:
        rob = int((claims["reliability"] == ROBUST).sum())
        bord = claims.loc[claims["reliability"] == BORDERLINE, "id"].tolist()
        copies = int(claims["copies"].dropna().iloc[0]) if claims["copies"].notna().any() else 0
        text += (
            f" On {copies} simulated re-runs, **{rob}** verdicts are robust (the reported verdict the most "
            f"frequent, P >= "
            f"{ROBUST_P:g} at {ROBUST_CONFIDENCE:.0%} confidence over the copies) "
            f"and **{len(bord)}** borderline (its P < {BORDERLINE_P:g})" + (f": {', '.join(bord)}." if bord else ".")
        )
    return text
