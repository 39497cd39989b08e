"""The spawn tables: fixed N (Fig. 4 (b)) and the max-processes search's steps (Fig. 4 (a),
runs of spawn under a memory budget, table spawn_max)."""

from serverbench.analysis import registry

registry.table(
    registry.TableSpec(
        "spawn",
        "spawn",
        ("variant", "cores", "processes"),
        ("all_ready_s", "spawn_call_s", "bytes_per_process"),
        "all_ready_s",
    )
)
registry.table(
    registry.TableSpec(
        "spawn_max",
        "spawn",
        ("variant", "cores", "budget_bytes", "processes"),
        ("all_ready_s", "spawn_call_s", "bytes_per_process"),
        explore_metric="bytes_per_process",
        search_steps=True,
    )
)
