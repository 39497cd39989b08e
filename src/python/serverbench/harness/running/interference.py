"""Interference measured per run, instead of guessing it from the load average:
how much CPU time other processes took on the run's own CPUs while it ran, how often the
kernel preempted the benchmark (involuntary context switches), and the hypervisor's steal
(environment.contention_fields). A run over a limit fixed in advance is flagged
`interfered` and run once more; the later ok attempt is the one the analysis selects.

The harness itself is moved off the benchmark's CPUs for the run when the machine leaves
one free (`harness_off`), so its watchdog and bookkeeping do not count as interference
(on 2 CPUs: every 1-core run).

other_cpu_s = busy ticks of the run's CPUs during it (user, nice, system, irq, softirq of
/proc/stat) / CLK_TCK - the run's own user + system CPU seconds (`own_cpu_s`), floored at
0; other_cpu_share = other_cpu_s / (wall seconds x the run's CPUs).

* A process run ('process' family): its CPUs are the ones it is pinned to, its wall
  seconds its wall_s, its own CPU time its wait4 rusage.
* A socket run ('socket' family, harness.sockets): its CPUs are every CPU its
  server and client are pinned to (sockets.run_cpus), the window is the whole run, server
  start-up to the server's reaping, and its own CPU time is the client's plus the server's
  wait4 rusage (each includes the threads and the reaped children of that process) plus,
  when the harness could not leave those CPUs, the harness's own (it reads the server and
  samples /proc for the run). The client and server ARE the benchmark: the 1-minute load
  average (the fallback for records without this measure) counts the sweep's own previous
  socket run as interference.

The rule (`interfered`), one place for every family: other_cpu_share > OTHER_CPU_LIMIT or
steal_share > STEAL_LIMIT, each only when it also amounts to at least MIN_TICKS ticks of
/proc/stat. /proc/stat counts whole ticks (1 / CLK_TCK s, 10 ms at USER_HZ 100) and its
busy ticks are a tick-by-tick sample, while rusage is exact: on a 30-400 ms socket run
one or two ticks alone exceed 5 % (a previous session measured about a third of the short
socket runs flagged by steal alone), so a share is believed only from MIN_TICKS on.
"""

from __future__ import annotations

import contextlib
import os
import resource
from collections.abc import Iterator

from serverbench import protocol
from serverbench.harness.running import environment
from serverbench.harness.running.environment import CLK_TCK
from serverbench.rawdata.columns import Col

# The limits are the protocol's (spec/protocol.json "reruns"): other processes took more than
# 10 % of the run's CPU time, or the hypervisor stole more than 5 % of it (steal alone re-runs a
# run: the protocol says on what evidence), each only when that is at least 3 /proc/stat ticks
# (30 ms at USER_HZ 100): one or two ticks are the counters' granularity, not interference.
_RULE = protocol.rerun_rule()
OTHER_CPU_LIMIT = float(_RULE["other_cpu_share_limit"])
STEAL_LIMIT = float(_RULE["steal_share_limit"])
MIN_TICKS = int(_RULE["min_ticks"])
RULE = (
    f"other processes took > {OTHER_CPU_LIMIT:.0%} of the run's CPU time on its CPUs or the hypervisor "
    f"stole > {STEAL_LIMIT:.0%} of it, and at least {MIN_TICKS} ticks of /proc/stat "
    f"({MIN_TICKS / CLK_TCK * 1000:g} ms), as measured per run"
)


def busy_ticks(cpus: list[int]) -> int | None:
    """user + nice + system + irq + softirq ticks of the given CPUs (/proc/stat)."""
    lines = environment.cpu_stat_lines(cpus)
    if lines is None:
        return None
    return sum(n[0] + n[1] + n[2] + sum(n[5:7]) for n in lines)


def over_limit(seconds: float | None, share: float | None, limit: float) -> bool:
    """THE rule: a share over its limit that is also at least MIN_TICKS ticks of /proc/stat."""
    if share is None or seconds is None:
        return False
    return share > limit and round(seconds * CLK_TCK, 6) >= MIN_TICKS


def own_cpu_s(rec: dict) -> float | None:
    """User + system CPU seconds of the run's own processes (wait4 rusage, which includes
    their threads and reaped children): the process; for a socket run its client plus its
    server (rec['server']). None when nothing of the run was measured."""
    parts = [rec] + ([rec[Col.server]] if isinstance(rec.get(Col.server), dict) else [])
    times = [p.get(k) for p in parts for k in ("user_cpu_s", "system_cpu_s")]
    if all(t is None for t in times):
        return None
    return sum(t for t in times if t is not None)


def harness_cpu_s() -> float:
    """This process's (the harness's: every thread, no children) user + system CPU seconds."""
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime


def fields(
    busy_before: int | None,
    busy_after: int | None,
    cpus: list[int],
    rec: dict,
    *,
    window_s: float | None = None,
    harness_s: float = 0.0,
) -> dict:
    """The raw record's interference fields for a finished run. window_s: the measured
    window's wall seconds (default rec['wall_s'], a process run's); harness_s: the harness's
    own CPU seconds on the run's CPUs during it (a socket run's, when it could not leave them)."""
    wall = window_s if window_s is not None else rec.get(Col.wall_s)
    own = own_cpu_s(rec)
    other = share = None
    if busy_before is not None and busy_after is not None and wall and own is not None:
        other = max(0.0, (busy_after - busy_before) / CLK_TCK - own - harness_s)
        share = min(1.0, other / (wall * max(len(cpus), 1)))
    steal, steal_s = rec.get(Col.steal_share), rec.get(Col.cpu_steal_s)
    if steal is not None and steal_s is None and wall:  # not given: its share of the window
        steal_s = steal * wall * max(len(cpus), 1)
    flagged = None
    if share is not None or steal is not None:
        flagged = over_limit(other, share, OTHER_CPU_LIMIT) or over_limit(steal_s, steal, STEAL_LIMIT)
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
