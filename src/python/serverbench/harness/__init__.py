"""The sweep harness: fresh, pinned, capped native runs -> append-only raw logs.

Its wings, lowest first (none imports a later one; tests/python/test_import_graph.py):

- planning/: profile -> plan (Tasks, Searches, their order); nothing runs.
- running/: one run on this machine: pinned start, limits, classification, the Launcher.
- sockets/: the socket family: a server and a client per run, and `serve`.
- recording/: the sweep folder (raw log, sessions, manifest, shards) and run_sweep.

Over them: cli (the `run` and `profiles` commands). Public API (used by the notebooks and
run_all.sh): run_sweep, load_profile, latest_sweep, host_info. See docs/harness.md."""

from serverbench.harness.planning.plan import make_plan
from serverbench.harness.planning.profiles import ProfileError, available_profiles, load_profile
from serverbench.harness.planning.task import Task
from serverbench.harness.recording.sweep import last_session, latest_sweep, run_sweep
from serverbench.harness.running.environment import host_info

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
