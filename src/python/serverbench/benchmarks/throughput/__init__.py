"""Throughput (Fig. 5): P pairs exchange messages for a fixed time on C cores."""

ORDER = 3  # where its tables come among the benchmarks' (processed tables keep this order)
# its headline metric, and True: a time (lower is better): messages per second: a rate
METRIC = ("exchanges_per_s", False)
ANALYSIS = ("tables", "figures", "claims", "warmup")  # the modules that register its parts, in import order
FIGURES = {"fig5": "fig5_throughput"}  # the paper's figure, by its short name
# the raw fields runs.csv has a column for even in a sweep without throughput runs
COLUMNS = (
    "params.pairs",
    "params.duration_s",
    "params.report_every",
    "metrics.exchanges",
    "metrics.exchanges_per_s",
    "metrics.paper_msgs_per_min",
)
