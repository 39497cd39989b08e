"""Spawn (Fig. 4): create N processes until all are ready; the max-processes search under a memory budget."""

from serverbench import plugins

# what the package declares, once (the fields: serverbench.plugins.Declared)
DECLARED = plugins.Declared(
    order=2,
    analysis=("tables", "figures", "claims"),
    parts=("cost", "search", "limits"),
    metric=("all_ready_s", True),
    figures={"fig4": "fig4_spawn"},
    columns=(
        "params.processes",
        "metrics.spawn_call_s",
        "metrics.all_ready_s",
        "metrics.bytes_per_process",
        "metrics.rss_bytes_after",
        "metrics.rss_bytes_before",
        "metrics.runtime_memory_bytes",
    ),
    options={
        "spawn_metric": {
            "default": "all_ready_s",
            "choices": ["all_ready_s", "spawn_call_s"],
            "doc": "spawn time: all_ready_s (default) or spawn_call_s (what the original programs timed)",
        }
    },
)
