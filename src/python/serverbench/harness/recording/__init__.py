"""The harness's fourth wing: the sweep folder and the loop that fills it.

rawlog (the append-only raw log, sessions, manifest, lock), shards (`run --shard i/N`: whole
comparison groups per shard, the layout, progress), checks (what is checked before anything
runs), sweep (run_sweep: the families' runners, the run loop, progress, interrupts).
Imports every lower wing."""
