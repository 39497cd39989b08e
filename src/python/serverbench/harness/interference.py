"""Interference measured per run (issue 26), instead of guessing it from the load average:
how much CPU time other processes took on the run's own CPUs while it ran, how often the
kernel preempted the benchmark (involuntary context switches), and the hypervisor's steal
(environment.contention_fields). A run over a limit fixed in advance is flagged
`interfered` and run once more; the later ok attempt is the one the analysis selects.

The harness itself is moved off the benchmark's CPUs for the run when the machine leaves
one free (`harness_off`), so its watchdog and bookkeeping do not count as interference
(on 2 CPUs: every 1-core run).

other_cpu_s = busy ticks of the run's CPUs during it (user, nice, system, irq, softirq of
/proc/stat) / CLK_TCK - the run's own user + system CPU seconds (wait4), floored at 0;
other_cpu_share = other_cpu_s / (wall seconds x the run's CPUs). Processes of the family
'process' only: a socket run's CPUs hold its client and server, whose CPU time is known
separately.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator

from serverbench.harness import environment
from serverbench.harness.environment import CLK_TCK

OTHER_CPU_LIMIT = 0.10  # other processes took more than 10 % of the run's CPU time: interfered
STEAL_LIMIT = 0.05  # the hypervisor stole more than 5 % of it: interfered (report.STEAL_LIMIT's value)


def busy_ticks(cpus: list[int]) -> int | None:
    """user + nice + system + irq + softirq ticks of the given CPUs (/proc/stat)."""
    lines = environment.cpu_stat_lines(cpus)
    if lines is None:
        return None
    return sum(n[0] + n[1] + n[2] + sum(n[5:7]) for n in lines)


def fields(busy_before: int | None, busy_after: int | None, cpus: list[int], rec: dict) -> dict:
    """The raw record's interference fields for a finished process run."""
    wall, user, system = rec.get("wall_s"), rec.get("user_cpu_s"), rec.get("system_cpu_s")
    other = share = None
    if busy_before is not None and busy_after is not None and wall and user is not None and system is not None:
        other = max(0.0, (busy_after - busy_before) / CLK_TCK - user - system)
        share = min(1.0, other / (wall * max(len(cpus), 1)))
    steal = rec.get("steal_share")
    flagged = None
    if share is not None or steal is not None:
        flagged = bool((share or 0.0) > OTHER_CPU_LIMIT or (steal or 0.0) > STEAL_LIMIT)
    return {"other_cpu_s": other, "other_cpu_share": share, "interfered": flagged}


@contextlib.contextmanager
def harness_off(run_cpus: list[int], allowed: list[int]) -> Iterator[list[int] | None]:
    """Move this thread (the harness; threads it starts inherit it) to the allowed CPUs the
    run does not use, for the duration; yields them, or None when none is free."""
    free = sorted(set(allowed) - set(run_cpus))
    old = None
    if free:
        try:
            old = os.sched_getaffinity(0)
            os.sched_setaffinity(0, free)
        except (OSError, AttributeError):
            old = None
    try:
        yield free if old is not None else None
    finally:
        if old is not None:
            with contextlib.suppress(OSError):
                os.sched_setaffinity(0, old)
