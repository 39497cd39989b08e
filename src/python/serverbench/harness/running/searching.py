"""Running a search (planning.search says what one is, e.g. spawn's max processes, IM's
rate): the parameter N grows by a factor (or along its declared geometric grid) until a
step does not pass (its benchmark's judge; by default a run that is not ok); then
bisection between the last success and the failure. A failure that is a timeout does not
establish a limit, so a timed-out step is bisected further (timeout_bisect_steps) until a
classified failure (e.g. over_memory_budget, crashed) or a success below it. Before every
step the host must keep its floor: MemAvailable - budget >= host_floor_bytes, else the step
is refused (no run)."""

from __future__ import annotations

import sys
import time

from serverbench.harness.planning.search import Search
from serverbench.harness.planning.task import Task
from serverbench.harness.running import environment
from serverbench.rawdata.columns import Col

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


def _verdict(s: Search, rec: dict) -> tuple[bool, bool]:
    """(passed, establishes) of a step's record: as recorded, else judged now (a log
    written before the verdicts were recorded)."""
    got = rec.get(Col.search) or {}
    if "passed" in got:
        return bool(got["passed"]), bool(got.get("establishes"))
    passed, _, establishes = s.declared.judge(rec, s.settings)
    return passed, establishes


def run_search(s: Search, seen: dict, execute, skipped_step=None, check_host: bool = True) -> dict:
    """Run (or resume) one search and its second stage; return its outcome.

    seen: config_id -> earlier records (any status) of this sweep: those steps (and stage
    runs) are reused, so a resumed search continues where it stopped. execute(task, finish)
    -> record runs a step (finish(rec), when given, completes the record before it is
    written); skipped_step() is called for a reused one (progress). Outcome: {"key",
    "steps", "largest_ok", "smallest_failed", "failure_status", "established", "refused",
    "stage"}."""
    cfg, d = s.settings, s.declared
    cap = s.cap
    step = 0
    last_status: dict = {}
    establishes: dict = {}
    records: list[dict] = []
    refused = None

    def attempt(n) -> bool | None:
        nonlocal step, refused
        task = s.task(n, step)
        prior = seen.get(task.config_id)
        if prior:
            rec = next((r for r in prior if _verdict(s, r)[0]), prior[-1])
            if skipped_step:
                skipped_step()
        else:
            why = host_has_room(task, setting=f"{d.table}.host_floor_bytes") if check_host else None
            if why:
                refused = why
                print(f"serverbench: {why}", file=sys.stderr, flush=True)
                return None
            rec = execute(task, None)  # spawn's step passes when ok, as its record says
            seen.setdefault(task.config_id, []).append(rec)
        step += 1
        records.append(rec)
        passed, establishes[n] = _verdict(s, rec)
        last_status[n] = rec.get(Col.status)
        return passed

    lo, hi, n, grown = None, None, cfg[Col.start], 0
    while step < cfg[Col.max_steps]:
        ok = attempt(n)
        if ok is None:
            break
        if ok:
            lo = n
            if n >= cap:
                break
            n = s.value(n, grown)
            grown += 1
        else:
            hi = n
            break
    extra = cfg[Col.refine_steps]
    while hi is not None and refused is None:
        timed_out = last_status.get(hi) == "timeout"
        if extra <= 0:
            if not timed_out or cfg[Col.timeout_bisect_steps] <= 0:
                break
            cfg = {**cfg, "timeout_bisect_steps": cfg[Col.timeout_bisect_steps] - 1}
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
        "server_language": s.server,
        "cores": s.cores,
        "budget_bytes": s.budget,
        "steps": step,
        "largest_ok": lo,
        "smallest_failed": hi,
        "failure_status": status,
        "established": hi is not None and bool(establishes.get(hi)),
        "refused": refused,
        "stage": [],  # a growth search has no second stage (a replicated one's loss runs go here)
    }
