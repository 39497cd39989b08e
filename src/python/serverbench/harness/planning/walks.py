"""The walks of a replicated search (harness.running.replicated runs them with real runs;
the plan's estimate runs them on the value it expects): pure functions that ask
`step(value, phase, runs)` for "pass" | "fail" | "censored" and return the search's result
{"value", "bound" (established | at_least | below_start), "failed", "why"}. See
running.replicated for the rules (protocol 5's im.search and im.memory)."""

from __future__ import annotations

import math

from serverbench.rawdata.columns import Col

PASS, FAIL, CENSORED = "pass", "fail", "censored"


def _result(value, bound: str, failed=None, why: str = "") -> dict:
    return {"value": value, "bound": bound, "failed": failed, "why": why}


def bisect(p, f, ratio: float, step) -> dict:
    """Geometric bisection between a pass p and a failure f until f / p <= ratio."""
    while f / p > ratio:
        m = round(math.sqrt(p * f))
        if m <= p or m >= f:
            break
        o = step(m, "bisect")
        if o == CENSORED:
            return _result(p, "at_least", None, f"censored at {m:g} (bisection)")
        p, f = (m, f) if o == PASS else (p, m)
    return _result(p, "established", f, f"passes at {p:g}, fails at {f:g}")


def rate_walk(grid: list, scout_factor: float, factor: float, ratio: float, step) -> dict:
    """The rate search on a grid (see the module docstring); step(value, phase, runs)."""
    top = len(grid) - 1
    stride = max(1, round(math.log(scout_factor) / math.log(factor)))
    i, last = 0, None
    while True:  # the scout: one run a step
        if step(grid[i], "scout", 1) != PASS:
            break
        last = i
        if i == top:
            break
        i = min(top, i + stride)
    i = last or 0

    def rep(v, phase="grid"):
        return step(v, phase, None)

    o = rep(grid[i])
    if o == CENSORED:
        return _result(None, "at_least", None, f"censored at {grid[i]:g}, no replicated pass")
    if o == PASS:
        while i < top:
            o = rep(grid[i + 1])
            if o == CENSORED:
                return _result(grid[i], "at_least", None, f"censored at {grid[i + 1]:g}")
            if o == FAIL:
                break
            i += 1
        if i == top:
            return _result(grid[top], "at_least", None, "passed the grid's top")
        p, f = grid[i], grid[i + 1]
    else:
        while i > 0:
            o = rep(grid[i - 1])
            if o == CENSORED:
                return _result(None, "at_least", grid[i], f"censored at {grid[i - 1]:g}, no replicated pass")
            if o == PASS:
                break
            i -= 1
        if i == 0:
            return _result(None, "below_start", grid[0], f"fails at the grid's start, {grid[0]:g}")
        p, f = grid[i - 1], grid[i]
    return bisect(p, f, ratio, rep)


def doubling_walk(start: int, maximum: int, ratio: float, step) -> dict:
    """The memory-cap search: one run a probe, doubling from start (at most maximum) until
    a probe fails, then bisection; at the maximum the value is 'at least'."""
    n, p = start, None
    while True:
        o = step(n, "double", 1)
        if o == CENSORED:
            return _result(p, "at_least", None, f"censored at {n:g}")
        if o == FAIL:
            break
        p = n
        if n >= maximum:
            return _result(maximum, "at_least", None, f"held the maximum, {maximum:g}")
        n = min(2 * n, maximum)
    if p is None:
        return _result(None, "below_start", n, f"fails at the start, {n:g}")
    return bisect(p, n, ratio, lambda v, phase: step(v, phase, 1))


def walk(s, step) -> dict:
    """The walk of this search's kind, with step(value, phase, runs)."""
    cfg = s.settings
    if s.kind == "memory":
        return doubling_walk(
            cfg[Col.memory_start_clients], cfg[Col.memory_clients_max], cfg[Col.memory_bisect_ratio], step
        )
    part = s.declared.part
    runs = cfg[Col.step_runs]
    return rate_walk(
        part.grid(cfg),
        cfg[Col.scout_factor],
        cfg[Col.factor],
        cfg[Col.bisect_ratio],
        lambda v, ph, n: step(v, ph, n or runs),
    )
