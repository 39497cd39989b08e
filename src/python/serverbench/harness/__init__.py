"""The sweep harness: fresh, pinned, capped native runs -> append-only raw logs.

Public API (used by the notebooks and run_all.sh):
run_sweep, load_profile, latest_sweep, host_info. See docs/harness.md."""

from serverbench.harness.profiles import ProfileError, available_profiles, load_profile
from serverbench.harness.sweep import host_info, last_session, latest_sweep, make_plan, run_sweep

__all__ = ["run_sweep", "load_profile", "latest_sweep", "host_info", "ProfileError", "available_profiles",
           "last_session", "make_plan"]
