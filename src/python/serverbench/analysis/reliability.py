"""The probability of each verdict (docs/statistics.md, "How sure is a verdict?").

A verdict is a function of one sweep's trials. Had the sweep been run again, its trials
would differ in two ways: within the sweep (other draws of the same noise) and between
sweeps (the machine's state, which every trial of a sweep shares). `probabilities`
re-decides every claim on B simulated re-runs of the sweep:

* within: the rounds of each configuration are drawn with replacement (a round keeps every
  language's trial of it, so pairing by round holds in the copy), smoothed and rescaled
  (Rounds.redraw): each value moves by Gaussian noise with the configuration's own
  covariance between languages, so a copy of 5 rounds holds 5 values and not ~3 repeats
  of the sweep's, and the whole configuration's spread is scaled by g, g^2 = (n-1)/chi2(n-1)
  for n rounds: the sd 5 rounds show is itself uncertain (a re-run of a sweep that saw a
  calm spell is not as calm), and a copy that takes the sweep's sd as the truth separates
  two samples far more often than re-runs do. Measured with a normal truth whose two
  5-round samples separate completely in 38 % of sweeps (tests/python/test_reliability.py):
  the plain bootstrap said P >= 0.9 in 22 % of sweeps (mean P 0.57), this redraw in 3 %
  (mean 0.40); on issue 26's Intel sweeps the plain bootstrap called C11 robust at
  P(contradicted) 0.95 and it was contradicted in 3 of 5.
* between, and where the truth is: every (language, configuration) of a table is multiplied
  by exp(N(0, s^2 + (g se)^2)), s the table's between-sweep sd of a log *ratio*
  (analysis/spread.py; claims.decision gives the floor and the default) and se the standard
  error of that cell's mean log value (its rounds' sd / sqrt(rounds); 0 with one round).
  Why both: the copy should behave like an independent re-run, not like this sweep drawn
  again. A re-run's log ratio differs from this sweep's by (b2 - b1) + (e2 - e1): two
  independent between-sweep effects (2 s^2 for a ratio, s^2 per cell) and two sampling
  errors, of which the redrawn rounds supply the re-run's (e2) and the factor this sweep's
  own (e1, se_a^2 + se_b^2). Without e1 a sweep that happened to see no slow round labels a
  comparison near a boundary robust (issue 26's five sweeps: C4, C4b). Per cell, se counts
  a slow spell shared by a round's languages twice, so for paired comparisons the spread is
  conservative (fewer claims robust, none more).

P(supported), P(inconclusive), P(contradicted) are the verdicts' frequencies over the B
copies. A sweep with a second stage extended some undecided comparisons and not others; a
re-run ranks its own. So for an inconclusive claim whose best undecided comparison this
sweep did not extend, P(decide) of that comparison (second_stage.left_undecided) moves that
share of P(inconclusive) to the side it would most likely decide (a "no": contradicted; a
"yes": supported): the copies redraw rounds, they do not re-run the second stage.

A claim is *robust* when the verdict the sweep reports is the most frequent one with
P >= 0.9, and *borderline* when the reported verdict's P is below 0.8 (the issue said "the
modal verdict"; the two differ only when the sweep reported an unusual verdict, and calling
that robust would mislead). With 5-7 rounds these are estimates of how repeatable the
verdict is, not exact probabilities (they lean towards 1/2: in the test above, a truth of
0.77 is predicted 0.62 on average); the five-sweep check in docs/statistics.md compares
them with real repeats (Brier score).
"""

from __future__ import annotations

import multiprocessing
import os
from typing import Any

import numpy as np
import pandas as pd

from serverbench.analysis import second_stage
from serverbench.analysis.claims import decision, engine

ROBUST, BORDERLINE, NEITHER = "robust", "borderline", "-"
ROBUST_P, BORDERLINE_P = 0.9, 0.8
DEFAULT_B = 40  # ~1.5 s per copy on the 2-core VM: 40 copies keep the quick report's render under 1.5 min
OUTCOMES = (engine.SUPPORTED, engine.INCONCLUSIVE, engine.CONTRADICTED, engine.NOT_TESTABLE, engine.ERROR)
COLUMNS = ["p_supported", "p_inconclusive", "p_contradicted", "p_not_testable", "p_error"]

_NOT_KEYS = {"language", "trial", "value"}


class Resampled:
    """One simulated re-run of a processed sweep, with the interface the claims read
    (values, info, runs, spawn_max_limits, folder)."""

    def __init__(self, P: Any, cache: dict, rng: np.random.Generator, spreads: dict[str, float]):
        self._P, self._cache, self._rng, self._spreads = P, cache, rng, spreads
        self.info, self.runs, self.spawn_max_limits, self.folder = P.info, P.runs, P.spawn_max_limits, P.folder
        self._drawn: dict[tuple[str, str], pd.DataFrame] = {}

    def values(self, table: str, metric: str) -> pd.DataFrame:
        key = (table, metric)
        if key not in self._drawn:
            if key not in self._cache:
                self._cache[key] = Rounds(self._P.values(table, metric))
            self._drawn[key] = self._cache[key].redraw(self._rng, decision.spread_for(table, self._spreads))
        return self._drawn[key].copy()


class Rounds:
    """A values table indexed for redrawing: per configuration, the row numbers of each
    round, and per (language, configuration) cell its mean log value, each row's deviation
    from it and the cell's rounds as a deviation matrix (for the smoothing noise)."""

    def __init__(self, d: pd.DataFrame):
        self.d = d.reset_index(drop=True)
        self.groups: list[list[np.ndarray]] = []
        if self.d.empty or "trial" not in self.d.columns:
            return
        keys = [c for c in self.d.columns if c not in _NOT_KEYS]
        gid = self.d.groupby(keys, dropna=False, sort=False).ngroup().to_numpy() if keys else np.zeros(len(self.d))
        trial = self.d["trial"].to_numpy()
        # one factor per (language, configuration), with the se of that cell's mean log value
        self.cell, _ = pd.factorize(pd.Series(gid).astype(str) + "|" + self.d["language"].astype(str))
        v = self.d["value"].to_numpy(dtype=float)
        logs = pd.Series(np.log(np.where(v > 0, v, np.nan)))  # a time or a rate is positive
        per = logs.groupby(self.cell)
        ncell = int(self.cell.max()) + 1
        n = per.count().reindex(range(ncell), fill_value=0).to_numpy(dtype=float)
        se = (per.std(ddof=1) / np.sqrt(per.count())).fillna(0.0)
        self.cell_se = se.reindex(range(ncell), fill_value=0.0).to_numpy(dtype=float)
        self.logs = logs.to_numpy(dtype=float)
        self.dev = np.nan_to_num(self.logs - per.transform("mean").to_numpy(dtype=float))  # 0 where no log
        # half the spread from the redrawn round, half from the noise: a^2 ((n-1)/n + 1) = 1,
        # so a cell's copies have its sample variance (ddof 1), not the bootstrap's (n-1)/n of it
        self.shrink = np.where(n >= 2, 1.0 / np.sqrt(2.0 - 1.0 / np.maximum(n, 1.0)), 1.0)
        self.noise: list[tuple[np.ndarray, np.ndarray]] = []  # per configuration: its cells, its deviation matrix
        for g in np.unique(gid):
            idx = np.flatnonzero(gid == g)
            rounds = [idx[trial[idx] == r] for r in np.unique(trial[idx])]
            self.groups.append(rounds)
            cells = np.unique(self.cell[idx])
            m = np.zeros((len(rounds), len(cells)))
            for j, rows in enumerate(rounds):
                pos = np.searchsorted(cells, self.cell[rows])
                np.add.at(m[j], pos, self.dev[rows] / np.bincount(pos, minlength=len(cells))[pos])
            scale = np.sqrt(np.maximum(n[cells] - 1.0, 0.0))
            m = np.divide(m, scale, out=np.zeros_like(m), where=scale > 0)
            self.noise.append((cells, m))

    def redraw(self, rng: np.random.Generator, spread_log: float) -> pd.DataFrame:
        """A smoothed redraw. The rounds of every configuration are drawn with replacement
        (renumbered 1..n); each drawn value's log becomes the cell mean + a (its deviation +
        e), e a Gaussian mixture of the configuration's observed rounds (sum_j w_j dev_j /
        sqrt(n - 1), w ~ N(0, 1) per drawn round), so a copy's rounds have the sample's
        variances and, between languages, its covariances (pairing by round holds), but are
        not repeats of the same few values: a plain bootstrap of 5 rounds holds ~3.2
        distinct ones and its range is never wider than the sweep's, so copies separate two
        samples more often than real re-runs do (issue 26: C11's P(contradicted) 0.63-0.98
        against 3 of 5 on the Intel sweeps). Then each (language, configuration) is
        multiplied by exp(N(0, spread_log^2 + se^2)), se its own."""
        if not self.groups:
            return self.d
        rows, trial, eps, scale = [], [], [], []
        g_cell = np.ones(len(self.cell_se))
        for rounds, (cells, m) in zip(self.groups, self.noise):
            n = len(rounds)
            g = np.sqrt((n - 1) / rng.chisquare(n - 1)) if n >= 2 else 1.0
            g_cell[cells] = g
            picks = rng.integers(n, size=n)
            e = rng.normal(0.0, 1.0, size=(n, n)) @ m  # one noise vector per drawn round
            for k, p in enumerate(picks):
                r = rounds[p]
                rows.append(r)
                trial.append(np.full(len(r), k + 1))
                eps.append(e[k, np.searchsorted(cells, self.cell[r])])
                scale.append(np.full(len(r), g))
        r = np.concatenate(rows)
        out = self.d.iloc[r].copy()
        out["trial"] = np.concatenate(trial)
        c = self.cell[r]
        spread = np.concatenate(scale) * self.shrink[c] * (self.dev[r] + np.concatenate(eps))
        smoothed = np.exp(self.logs[r] - self.dev[r] + spread)
        value = np.where(np.isfinite(self.logs[r]), smoothed, out["value"].to_numpy(dtype=float))
        sd = np.sqrt(spread_log**2 + (g_cell * self.cell_se) ** 2)
        factor = np.exp(rng.normal(0.0, 1.0, size=len(sd)) * sd)
        out["value"] = value * factor[c]
        return out


def _count(P: Any, claims: list, opts: dict, seed: int, copies) -> dict[str, dict[str, int]]:
    """The verdicts' counts over the given copies; copy i draws from its own stream
    (seed, i), so the counts do not depend on how the copies are split between processes."""
    cache: dict = {}
    counts = {c.id: dict.fromkeys(OUTCOMES, 0) for c in claims}
    for i in copies:
        view = Resampled(P, cache, np.random.default_rng([seed, i]), opts["spreads"])
        for c in claims:
            counts[c.id][engine.evaluate(c, view, opts).verdict] += 1
    return counts


_JOB: tuple = ()  # what a forked worker counts over (set in the parent before forking)


def _count_job(copies) -> dict[str, dict[str, int]]:
    return _count(*_JOB, copies)


def default_workers() -> int:
    """Processes for the copies: the CPUs this process may use, at most 4 (the report runs
    after the sweep, on an idle machine; a copy takes ~0.7 s on the 2-core VM)."""
    try:
        return max(1, min(4, len(os.sched_getaffinity(0))))
    except AttributeError:  # no sched_getaffinity (macOS)
        return max(1, min(4, os.cpu_count() or 1))


def _counts(P: Any, claims: list, opts: dict, seed: int, B: int, workers: int) -> dict[str, dict[str, int]]:
    """The counts over copies 0..B-1, split over `workers` forked processes where fork
    exists (in one process otherwise, with the same result)."""
    global _JOB
    parts = [range(w, B, workers) for w in range(min(workers, B))]
    if len(parts) <= 1 or "fork" not in multiprocessing.get_all_start_methods():
        return _count(P, claims, opts, seed, range(B))
    _JOB = (P, claims, opts, seed)
    try:
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
    counts = _counts(P, claims, opts, seed, B, default_workers() if workers is None else workers)
    observed = {c.id: engine.evaluate(c, P, opts) for c in claims}
    left = second_stage.left_undecided(observed.values(), P)
    rows = []
    for c in claims:
        f = {o: counts[c.id][o] / B for o in OUTCOMES}
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
                "reliability": label(p, reported),
                "copies": B,
            }
        )
    return pd.DataFrame(rows)


def label(p_modal: float, p_reported: float) -> str:
    """robust: the reported verdict is the most frequent one and has P >= 0.9; borderline:
    the reported verdict has P < 0.8 (when the modal one is another, the sweep reported an
    unusual verdict, however sure the modal one is)."""
    if p_reported >= ROBUST_P and p_reported >= p_modal:
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
        + Path(second_stage.__file__).read_bytes()
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
            f"{ROBUST_P:g}) and **{len(bord)}** borderline (its P < {BORDERLINE_P:g})"
            + (f": {', '.join(bord)}." if bord else ".")
        )
    return text
