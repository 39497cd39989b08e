"""The sweep harness: fresh, pinned, capped native runs -> append-only raw logs.

Modules, in pipeline order: profiles (TOML -> resolved profile), task (the Task
dataclass), plan (profile -> Tasks + Searches, round-robin order), shards (--shard i/N),
launch (one run: family dispatch, process start, limits, classify), limits (pinning,
deadline, memory budget, host floor), classify (status of a run), rawlog (append-only
JSONL, resume, lock), environment (host, manifest, load/steal, versions), search
(Fig. 4a max-processes), sweep (orchestration, progress, interrupts), stability
(independent repeats -> verdict agreement), cli (run, profiles, stability).

Public API (used by the notebooks and run_all.sh):
run_sweep, load_profile, latest_sweep, host_info. See docs/harness.md."""

from serverbench.harness.environment import host_info
from serverbench.harness.plan import make_plan
from serverbench.harness.profiles import ProfileError, available_profiles, load_profile
from serverbench.harness.sweep import last_session, latest_sweep, run_sweep
from serverbench.harness.task import Task

__all__ = [
    "run_sweep",
    "load_profile",
    "latest_sweep",
    "host_info",
    "ProfileError",
    "available_profiles",
    "last_session",
    "make_plan",
    "Task",
]
