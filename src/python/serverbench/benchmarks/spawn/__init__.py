"""Spawn (Fig. 4): create N processes until all are ready; the max-processes search under a memory budget."""

ORDER = 2  # where its tables come among the benchmarks' (processed tables keep this order)
# its headline metric, and True: a time (lower is better): the time until every process has run
METRIC = ("all_ready_s", True)
ANALYSIS = ("tables", "figures", "claims")  # the modules that register its parts, in import order
FIGURES = {"fig4": "fig4_spawn"}  # the paper's figure, by its short name
# the raw fields runs.csv has a column for even in a sweep without spawn runs
COLUMNS = (
    "params.processes",
    "metrics.spawn_call_s",
    "metrics.all_ready_s",
    "metrics.bytes_per_process",
    "metrics.rss_bytes_after",
    "metrics.rss_bytes_before",
    "metrics.runtime_memory_bytes",
)
# The analysis's option: which of a run's two times Fig. 4 (b) and the spawn claims read
OPTIONS = {
    "spawn_metric": {
        "default": "all_ready_s",
        "choices": ["all_ready_s", "spawn_call_s"],
        "doc": "spawn time: all_ready_s (default) or spawn_call_s (what the original programs timed)",
    }
}
