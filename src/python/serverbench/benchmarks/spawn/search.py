"""Spawn's search (Fig. 4a): the largest number of processes a language starts under a
memory budget. The harness runs it as any declared search (harness.planning.search: the
plan item and its settings; harness.running.searching: growth, then bisection); what is
spawn's is here. Plain data: the harness loads it with catalog.benchmark("spawn").search."""

from serverbench import plugins

GiB = 1024**3
HOOKS = plugins.SearchHooks()  # doubling then bisection, the harness's own step judgement

TABLE = "spawn_max"  # the profile table ([spawn_max]) and the first part of a step's config_id
NAME = "max_processes"  # the raw record's search.name
PARAM = "processes"  # the parameter the search grows
# Settings of [spawn_max] that are spawn's own; the others are the harness's search defaults.
DEFAULTS = {"start": 100_000, "budget_bytes": 8 * GiB}
BYTES_PER_STEP_UNIT = 1024  # ~1 KiB per process: where the progress estimate expects the failure
