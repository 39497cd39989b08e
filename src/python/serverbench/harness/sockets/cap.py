"""A memory-cap run of a socket benchmark (task.options.server_cap: IM2's memory-cap
search, benchmarks/im/search.py): the SERVER is held in a memory cgroup of the task's
budget (the cap; a JVM's -Xmx is heap_fraction x the cap through {heap_mb}), where this
machine allows one; a server the kernel killed at its cap, or whose sampled peak RSS passed
it where no cgroup held it, makes the run over_memory_budget. The client is not capped."""

from __future__ import annotations

import os

from serverbench.harness.planning.task import Task
from serverbench.harness.running import cgroups
from serverbench.rawdata.columns import Col


def server_cap(lau, task: Task, rec: dict, tag: str):
    """A memory-cap run (task.options.server_cap: IM2's search) holds the SERVER in a memory
    cgroup of task.memory_budget_bytes where this machine allows one (else the cap is
    judged from the probe's peak RSS: over_cap); the record's memory_enforcement says which."""
    if not (task.options and task.options.server_cap) or not task.memory_budget_bytes:
        return None
    cg = None
    if lau.enforcement == "cgroup":
        cg = cgroups.create(lau.cgroup_parent, f"{cgroups.PREFIX}{os.getpid()}-server-{tag}", task.memory_budget_bytes)
    rec[Col.memory_enforcement] = "cgroup" if cg else "watchdog"
    return cg


def over_cap(rec: dict, task: Task, oom_kills: int) -> None:
    """A memory-cap run whose server the kernel killed for its cap (or whose sampled peak
    RSS passed the cap where no cgroup held it) is over_memory_budget."""
    if not (task.options and task.options.server_cap) or not task.memory_budget_bytes:
        return
    peak = rec.get(Col.server_rss_peak_bytes)
    if oom_kills:
        why = f"the server was killed by the kernel at its memory cap of {task.memory_budget_bytes} bytes"
    elif rec.get(Col.memory_enforcement) == "watchdog" and peak and peak > task.memory_budget_bytes:
        why = f"the server's peak RSS {peak} bytes passed its cap of {task.memory_budget_bytes} bytes"
    else:
        return
    rec[Col.status], rec[Col.status_reason] = "over_memory_budget", why
