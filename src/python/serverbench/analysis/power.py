"""Could this sweep have recovered its source's effect? (issue 25; docs/statistics.md,
"Power: underpowered here")

An inconclusive verdict means two different things: the effect is not there at the size
the source reported, or this sweep could not have seen it even if it were. The power check
tells them apart. For every deciding comparison of a claim (the rows of
claims_evidence.csv that take part in the verdict) it takes

* the source's effect: the ratio the same comparison gives on the source's own numbers
  (the paper's spreadsheets, paperdata.py; the write-ups' tables, sourcedata.py), the
  median over the source's configurations where it has several;
* this sweep's noise and trial counts: the standard error of the log ratio implied by the
  comparison's own interval (its width at its achieved level), and that achieved level
  (a comparison whose trials cannot reach the engine's minimum confidence can never decide);

and simulates the comparison's estimate as normal around the source's effect, deciding
"yes" when the interval lies in the comparison's yes region (the decision regions of
claims.decision). The claim's power is the share of simulations in which every deciding
comparison says yes (comparisons drawn independently: correlated ones would recover the
effect together more often, so this errs towards "underpowered"). An inconclusive claim
with power < 0.8 is labelled "underpowered here". Comparisons the source has no number for
are left out; a claim with none gets no power (NaN), and so does a claim one of whose
comparisons the source's own estimate does not meet (its yes region excludes the source's
ratio: recovering the source's effect would not support the claim).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.stats import norm

from serverbench.analysis.claims import decision, engine

POWER_NEEDED = 0.8
UNDERPOWERED = "underpowered here"
SIMULATIONS = 4000
_DECIDING = (engine.YES, engine.NO, engine.UNCLEAR)


def _key(label: str) -> str:
    """A comparison's name without its parenthesised qualifiers (the heap, the placement
    note), so that a sweep's row meets the source's row for the same comparison."""
    return str(label).split(" (")[0].strip()


def source_effects(evidence: pd.DataFrame) -> pd.DataFrame:
    """claim, key, log_effect: the median log ratio per comparison on a source's own data."""
    if evidence is None or evidence.empty or "ratio" not in evidence:
        return pd.DataFrame(columns=["claim", "key", "log_effect"])
    e = evidence[pd.to_numeric(evidence["ratio"], errors="coerce") > 0].copy()
    e["key"] = e["comparison"].map(_key)
    e["log_effect"] = np.log(e["ratio"].astype(float))
    return e.groupby(["claim", "key"], as_index=False)["log_effect"].median()


def _row_terms(r) -> tuple[float, float, float, float] | None:
    """(se of the log ratio, z of the achieved level, log yes_lo, log yes_hi), or None when
    the row cannot decide at all with these trials. A similarity claim says yes on its
    equivalence interval (TOST: ci_yes_* at ~90 %), the others on the main interval."""
    yes_level = float(getattr(r, "ci_yes_level", np.nan))
    if np.isfinite(yes_level):
        level, lo, hi, need = yes_level, float(r.ci_yes_lo), float(r.ci_yes_hi), decision.TOST_LEVEL
    else:
        level, lo, hi, need = float(r.ci_level), float(r.ci_lo), float(r.ci_hi), engine.MIN_CONFIDENCE
    if not (level >= need - 1e-12 and lo > 0 and hi > lo):
        return None
    z = float(norm.ppf(0.5 + level / 2))
    se = (np.log(hi) - np.log(lo)) / (2 * z)
    ylo = np.log(r.yes_lo) if r.yes_lo > 0 else -np.inf
    yhi = np.log(r.yes_hi) if np.isfinite(r.yes_hi) else np.inf
    return se, z, ylo, yhi


def claim_power(rows: pd.DataFrame, effects: pd.DataFrame, rng: np.random.Generator, sims: int = SIMULATIONS) -> float:
    """P(every deciding comparison of one claim says yes) were the source's effects true."""
    eff = {(c, k): v for c, k, v in effects[["claim", "key", "log_effect"]].itertuples(index=False)}
    ok = np.ones(sims, dtype=bool)
    used, too_few = 0, False
    for r in rows.itertuples():
        e = eff.get((r.claim, _key(r.comparison)))
        if e is None or not np.isfinite(e):
            continue
        used += 1
        terms = _row_terms(r)
        if terms is None:
            too_few = True  # too few trials for this comparison to ever decide
            continue
        se, z, ylo, yhi = terms
        if not ylo <= e <= yhi:
            return float("nan")  # the source's own estimate does not meet the claim: nothing to recover
        est = e + se * rng.standard_normal(sims)
        ok &= (est - z * se >= ylo) & (est + z * se <= yhi)
    if not used:
        return float("nan")
    return 0.0 if too_few else float(ok.mean())


def powers(evidence: pd.DataFrame, source_evidence: pd.DataFrame, seed: int = 2018) -> pd.DataFrame:
    """id, power for every claim with deciding comparisons in `evidence` (this sweep's
    claims_evidence) that the source's own evidence gives effects for."""
    need = {"claim", "comparison", "result", "ci_lo", "ci_hi", "ci_level", "yes_lo", "yes_hi"}
    if evidence is None or evidence.empty or not need <= set(evidence.columns):
        return pd.DataFrame(columns=["id", "power"])
    effects = source_effects(source_evidence)
    rng = np.random.default_rng(seed)
    ev = evidence[evidence["result"].isin(_DECIDING)]
    out = [{"id": cid, "power": claim_power(g, effects, rng)} for cid, g in ev.groupby("claim", sort=False)]
    return pd.DataFrame(out, columns=["id", "power"])


def label_underpowered(ct: pd.DataFrame, pw: pd.DataFrame) -> pd.DataFrame:
    """The claims table with a `power` column; an inconclusive verdict whose power is below
    POWER_NEEDED reads "underpowered here" instead."""
    t = ct.merge(pw, on="id", how="left") if not pw.empty else ct.assign(power=np.nan)
    weak = (t["verdict"] == engine.INCONCLUSIVE) & (t["power"] < POWER_NEEDED)
    t.loc[weak, "verdict"] = UNDERPOWERED
    return t


def source_evidence_all() -> pd.DataFrame:
    """The paper's claims on the paper's numbers and the write-ups' on theirs, as one
    evidence table (the paper's is cached in data/processed/paper-reference/)."""
    from serverbench import paths
    from serverbench.analysis import paperdata, sourcedata

    paperdata.paper_verdicts_cached()
    f = paths.processed_dir() / paperdata.SWEEP_ID / "claims_evidence.csv"
    paper = pd.read_csv(f) if f.exists() else pd.DataFrame()
    return pd.concat([paper, sourcedata.source_evidence()], ignore_index=True)
