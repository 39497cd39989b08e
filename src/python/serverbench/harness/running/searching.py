"""Running a search (planning.search says what one is, e.g. spawn's max processes): the
parameter N grows by a factor until a run fails; then bisection between the last success
and the failure. A failure that
is a timeout does not establish a limit, so a timed-out step is bisected further
(timeout_bisect_steps) until a classified failure (e.g. over_memory_budget, crashed) or a
success below it. Before every step the host must keep its floor: MemAvailable - budget >=
host_floor_bytes, else the step is refused (no run)."""

from __future__ import annotations

import math
import sys
import time

from serverbench import contract
from serverbench.harness.planning.search import Search
from serverbench.harness.planning.task import Task
from serverbench.harness.running import environment

FLOOR_WAIT_S = 30.0  # how long a step waits for the host's memory to come back


def host_has_room(task: Task, wait_s: float | None = None, setting: str = "host_floor_bytes") -> str | None:
    """None when MemAvailable - budget stays above the floor (waiting up to wait_s for it),
    else why not (naming the profile setting of the floor)."""
    floor, budget = task.host_floor_bytes or 0, task.memory_budget_bytes or 0
    t_end = time.monotonic() + (FLOOR_WAIT_S if wait_s is None else wait_s)
    while True:
        avail = environment.mem_available()
        if avail - budget >= floor:
            return None
        if time.monotonic() >= t_end:
            return (
                f"refused {task.config_id}: MemAvailable is {avail} bytes; a run with a budget of {budget} "
                f"bytes would leave less than the host floor of {floor} bytes ({setting})"
            )
        time.sleep(1.0)


def run_search(s: Search, seen: dict, execute, skipped_step=None, check_host: bool = True) -> dict:
    """Run (or resume) one search; return its outcome.

    seen: config_id -> earlier records (any status) of this sweep: those steps are reused,
    so a resumed search continues where it stopped. execute(task) -> record runs a step;
    skipped_step() is called for a reused one (progress). Outcome: {"key", "steps",
    "largest_ok", "smallest_failed", "failure_status", "established", "refused"}."""
    cfg, d = s.settings, s.declared
    flag = next(f for f in contract.benchmark_flags(d.benchmark).values() if f.get("param") == d.param)
    cap = flag.get("max", 200_000_000)
    step = 0
    last_status: dict[int, str] = {}
    refused = None

    def attempt(n: int) -> bool | None:
        nonlocal step, refused
        task = s.task(n, step)
        prior = seen.get(task.config_id)
        if prior:
            rec = next((r for r in prior if r.get("status") == "ok"), prior[-1])
            if skipped_step:
                skipped_step()
        else:
            why = host_has_room(task, setting=f"{d.table}.host_floor_bytes") if check_host else None
            if why:
                refused = why
                print(f"serverbench: {why}", file=sys.stderr, flush=True)
                return None
            rec = execute(task)
            seen.setdefault(task.config_id, []).append(rec)
        step += 1
        last_status[n] = rec.get("status")
        return rec.get("status") == "ok"

    lo, hi, n = None, None, cfg["start"]
    while step < cfg["max_steps"]:
        ok = attempt(n)
        if ok is None:
            break
        if ok:
            lo = n
            if n >= cap:
                break
            n = min(cap, max(n + 1, math.ceil(n * cfg["factor"])))
        else:
            hi = n
            break
    extra = cfg["refine_steps"]
    while hi is not None and refused is None:
        timed_out = last_status.get(hi) == "timeout"
        if extra <= 0:
            if not timed_out or cfg["timeout_bisect_steps"] <= 0:
                break
            cfg = {**cfg, "timeout_bisect_steps": cfg["timeout_bisect_steps"] - 1}
        else:
            extra -= 1
        low = lo or 0
        mid = (low + hi) // 2
        if mid <= low or mid >= hi:
            break
        ok = attempt(mid)
        if ok is None:
            break
        if ok:
            lo = mid
        else:
            hi = mid
    status = last_status.get(hi) if hi is not None else None
    return {
        "key": s.key,
        "language": s.language,
        "cores": s.cores,
        "budget_bytes": s.budget,
        "steps": step,
        "largest_ok": lo,
        "smallest_failed": hi,
        "failure_status": status,
        "established": hi is not None and status not in (None, "timeout"),
        "refused": refused,
    }
