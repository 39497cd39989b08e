"""A simulated re-run of a processed sweep, for P(verdict) (analysis/reliability.py;
docs/statistics.md, "How sure is a verdict?"). Had the sweep been run again, its trials
would differ within the sweep (other draws of the same noise) and between sweeps (the
machine's state, which every trial of a sweep shares). A copy draws both:

* within: the rounds of each configuration are drawn with replacement (a round keeps every
  language's trial of it, so pairing by round holds in the copy), smoothed and rescaled
  (Rounds.redraw): each value moves by Gaussian noise with the configuration's own
  covariance between languages, so a copy of 5 rounds holds 5 values and not ~3 repeats
  of the sweep's, and each cell's spread is scaled by g, drawn from the posterior of its
  sd (Rounds._scale: g^2 = (n-1)/chi2(n-1) for n rounds, moderated towards the language's
  typical spread in the table): the sd 5 rounds show is itself uncertain (a re-run of a
  sweep that saw a calm spell is not as calm), and a copy that takes the sweep's sd as the
  truth separates two samples far more often than re-runs do. Measured with a normal truth whose two
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
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import chi2

from serverbench.analysis.claims import decision

_NOT_KEYS = {"language", "trial", "value"}
# The prior a cell's spread is moderated towards (Rounds._scale) weighs as much as this many
# degrees of freedom (one configuration of 5 rounds), and needs this many configurations of
# the language in the table to be estimated at all.
PRIOR_DF = 4.0
MIN_CONFIGS = 3


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
        self.var = self.n = self.prior_var = np.zeros(0)  # per cell (see below)
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
        # Each cell's log variance and rounds, and its prior (see _scale): the median variance
        # of the same language's cells in this table, where it has MIN_CONFIGS or more.
        self.var = per.var(ddof=1).reindex(range(ncell)).to_numpy(dtype=float)
        self.n = n
        lang = self.d.groupby(self.cell)["language"].first().reindex(range(ncell)).astype(str)
        ok = pd.Series(np.isfinite(self.var) & (self.var > 0))
        typical = pd.Series(self.var)[ok].groupby(lang[ok]).agg(["median", "count"])
        typical = typical[typical["count"] >= MIN_CONFIGS]["median"]
        self.prior_var = lang.map(typical).to_numpy(dtype=float)  # nan: no prior

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
        rows, trial, eps = [], [], []
        g_cell = np.ones(len(self.cell_se))
        for rounds, (cells, m) in zip(self.groups, self.noise):
            n = len(rounds)
            g_cell[cells] = self._scale(rng.uniform(), self.n[cells], self.var[cells], self.prior_var[cells])
            picks = rng.integers(n, size=n)
            e = rng.normal(0.0, 1.0, size=(n, n)) @ m  # one noise vector per drawn round
            for k, p in enumerate(picks):
                r = rounds[p]
                rows.append(r)
                trial.append(np.full(len(r), k + 1))
                eps.append(e[k, np.searchsorted(cells, self.cell[r])])
        r = np.concatenate(rows)
        out = self.d.iloc[r].copy()
        out["trial"] = np.concatenate(trial)
        c = self.cell[r]
        spread = g_cell[c] * self.shrink[c] * (self.dev[r] + np.concatenate(eps))
        smoothed = np.exp(self.logs[r] - self.dev[r] + spread)
        value = np.where(np.isfinite(self.logs[r]), smoothed, out["value"].to_numpy(dtype=float))
        sd = np.sqrt(spread_log**2 + (g_cell * self.cell_se) ** 2)
        factor = np.exp(rng.normal(0.0, 1.0, size=len(sd)) * sd)
        out["value"] = value * factor[c]
        return out

    @staticmethod
    def _scale(u: float, n: np.ndarray, var: np.ndarray, prior_var: np.ndarray) -> np.ndarray:
        """g per cell of one configuration, the factor on its observed spread: sigma / s,
        sigma drawn from its posterior given the s^2 of its n rounds. A flat prior gives
        sigma^2 = (n-1) s^2 / chi2(n-1). Where the language has MIN_CONFIGS or more
        configurations in the table, the prior is their median variance s0^2, worth PRIOR_DF
        degrees of freedom (empirical Bayes, as limma moderates a gene's variance): sigma^2 =
        (d0 s0^2 + (n-1) s^2) / chi2(d0 + n - 1). Why: 5 rounds that happened to be calm
        (issue 26: Go's 5 kB ping-ping at 0.060-0.064 s in one sweep, 0.044-0.075 s in the
        next) made every copy calm too, and C2 was robust at P 1.00 in a sweep where a re-run
        found it inconclusive; the language's other configurations say how calm 5 rounds
        usually are. Per language, because runtimes differ in noise (Akka's rounds vary more
        than Go's). One uniform u drives every cell's chi2 (its quantile), so the cells of a
        configuration widen together and a slow round shared by its languages still cancels
        in their ratio."""
        has = (n >= 2) & np.isfinite(var) & (var > 0)
        prior = has & np.isfinite(prior_var)
        d0 = np.where(prior, PRIOR_DF, 0.0)
        df = np.maximum(d0 + n - 1, 1.0)
        s2 = np.where(has, var, 1.0)
        sigma2 = (d0 * np.nan_to_num(prior_var) + (n - 1) * s2) / chi2.ppf(u, df)
        flat = np.sqrt(np.maximum(n - 1, 1) / chi2.ppf(u, df))  # identical rounds: any g scales 0
        return np.where(has, np.sqrt(sigma2 / s2), np.where(n >= 2, flat, 1.0))
