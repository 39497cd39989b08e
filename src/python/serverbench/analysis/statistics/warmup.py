"""Warm-up, classified per run as Barrett et al. do ("Virtual machine warmup blows hot and
cold", OOPSLA 2017): each run's rate over time is cut into segments by changepoint
analysis, the last segment is the run's steady state, and the run is

* flat: every segment is equivalent to the last (one level from start to end);
* warm-up: the last segment is at least as fast as every earlier one, and some earlier
  segment is slower (the run got faster and stayed there);
* slow-down: some earlier segment is faster than the last (the run got slower);
* no steady state: the last changepoint falls in the run's final quarter, so no level
  held for long enough to call it the run's steady state.

The rule's constants are protocol 2's (spec/protocol.json "warmup"), fixed before any
verdict of it was looked at: a throughput run's cumulative exchange count, sampled by the
program about every 0.1 s (`metrics.samples`, [[t_s, exchanges], ...], the sampler sharing
the run's CPUs so the spacing stretches under load), is interpolated onto a grid of
`window_s` windows and differenced into a rate per window; PELT (ruptures) with a
squared-error cost finds the changepoints with a penalty of `penalty_log_n` x log(n) x
sigma^2 — Barrett et al.'s 15 log n in the units of a Gaussian likelihood, sigma estimated
robustly from the first differences (a level shift moves one difference, not their median),
floored at the counter's own resolution (report_every exchanges per window). Segments whose
mean rates differ by less than `equivalent_share` of the last segment's are the same level.

The throughput verdicts do not use this: their metric is the whole run (docs/protocol.md);
the classification says how much of what they measured was the steady state.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from serverbench import protocol
from serverbench.rawdata.columns import Col

FLAT, WARMUP, SLOWDOWN, NO_STEADY = "flat", "warm-up", "slow-down", "no steady state"
CLASSES = (FLAT, WARMUP, SLOWDOWN, NO_STEADY)
TOO_SHORT = "too short to classify"


@dataclass(frozen=True)
class Rule:
    window_s: float
    min_windows: int
    min_segment: int
    penalty_log_n: float
    equivalent_share: float
    steady_tail_share: float

    @classmethod
    def of_protocol(cls) -> Rule:
        w = protocol.warmup_rule()
        return cls(
            float(w["window_s"]),
            int(w["min_windows"]),
            int(w["min_segment_windows"]),
            float(w["penalty_log_n"]),
            float(w["equivalent_share"]),
            float(w["steady_tail_share"]),
        )


@dataclass(frozen=True)
class Classified:
    label: str
    changepoints: tuple[int, ...]  # window indexes where a segment starts (after the first)
    windows: int
    steady_share: float  # share of the windows in the last segment (the steady state)
    steady_over_whole: float  # the last segment's mean rate / the whole series' mean rate


def rates(samples, elapsed_s: float, window_s: float) -> np.ndarray:
    """The rate per window [k w, (k+1) w) of a cumulative count sampled at times, from the
    start (0, 0) to the last whole window before elapsed_s."""
    s = np.asarray(samples, dtype=float).reshape(-1, 2)
    t = np.concatenate([[0.0], s[:, 0]])
    c = np.concatenate([[0.0], s[:, 1]])
    order = np.argsort(t, kind="stable")
    t, c = t[order], np.maximum.accumulate(c[order])
    end = min(float(elapsed_s), float(t[-1]))
    n = int(math.floor(end / window_s + 1e-9))
    if n < 1:
        return np.empty(0)
    grid = np.arange(n + 1) * window_s
    return np.diff(np.interp(grid, t, c)) / window_s


def _sigma(x: np.ndarray, floor: float) -> float:
    d = np.diff(x)
    mad = float(np.median(np.abs(d - np.median(d)))) if len(d) else 0.0
    return max(mad / (0.6745 * math.sqrt(2.0)), floor)


def _l2_cost():
    """ruptures' least-squares cost (CostL2: a segment's sum of squared deviations from its
    mean) from running sums of the centred series: the same cost as n var(segment), up to
    rounding, in O(1) a segment instead of a numpy call each (PELT asks for about 1,000 a
    run; the committed pieces' ~700 runs took ~30 CPU-s with CostL2, on a 2-core AMD EPYC)."""
    from ruptures.base import BaseCost
    from ruptures.exceptions import NotEnoughPoints

    class RunningL2(BaseCost):
        model = "l2"
        min_size = 1

        def fit(self, signal):
            self.signal = np.asarray(signal, dtype=float).reshape(-1, 1)  # ruptures reads its length
            x = self.signal[:, 0] - self.signal[:, 0].mean()  # centred: the sums of squares stay small
            self.s1 = np.concatenate([[0.0], np.cumsum(x)]).tolist()
            self.s2 = np.concatenate([[0.0], np.cumsum(x * x)]).tolist()
            return self

        def error(self, start, end):
            if end - start < self.min_size:
                raise NotEnoughPoints
            s = self.s1[end] - self.s1[start]
            return max((self.s2[end] - self.s2[start]) - s * s / (end - start), 0.0)

    return RunningL2()


def classify(x: np.ndarray, rule: Rule, resolution: float = 0.0) -> Classified:
    """The class of one rate series (higher is faster). resolution: the rate one counter
    step is worth per window (report_every / window_s), the floor of the noise estimate."""
    import ruptures

    n = len(x)
    if n < rule.min_windows:
        return Classified(TOO_SHORT, (), n, float("nan"), float("nan"))
    sigma = _sigma(x, max(resolution / math.sqrt(12.0), 1e-12 * max(float(np.mean(np.abs(x))), 1.0)))
    algo = ruptures.Pelt(custom_cost=_l2_cost(), min_size=rule.min_segment, jump=1).fit(x.reshape(-1, 1))
    ends = algo.predict(pen=rule.penalty_log_n * math.log(n) * sigma**2)
    starts = [0] + ends[:-1]
    means = [float(np.mean(x[a:b])) for a, b in zip(starts, ends)]
    last = means[-1]
    steady_share = (ends[-1] - starts[-1]) / n
    whole = float(np.mean(x))
    ratio = last / whole if whole > 0 else float("nan")
    cps = tuple(int(a) for a in starts[1:])
    if len(means) > 1 and starts[-1] > (1.0 - rule.steady_tail_share) * n:
        return Classified(NO_STEADY, cps, n, steady_share, ratio)
    tol = rule.equivalent_share * abs(last)
    slower = [m for m in means[:-1] if m < last - tol]
    faster = [m for m in means[:-1] if m > last + tol]
    label = SLOWDOWN if faster else WARMUP if slower else FLAT
    return Classified(label, cps, n, steady_share, ratio)


def classify_run(metrics: dict, params: dict, rule: Rule | None = None) -> Classified:
    """A throughput run's class from its raw metrics (samples, elapsed_s) and params
    (report_every)."""
    rule = rule or Rule.of_protocol()
    samples = metrics.get("samples")
    if not samples or not metrics.get(Col.elapsed_s):
        return Classified(TOO_SHORT, (), 0, float("nan"), float("nan"))
    x = rates(samples, float(metrics[Col.elapsed_s]), rule.window_s)
    every = params.get(Col.report_every) or 0
    return classify(x, rule, float(every) / rule.window_s)
