"""PingPing (Fig. 3): two processes pass one message back and forth R times."""

ORDER = 1  # where its tables come among the benchmarks' (processed tables keep this order)
# its headline metric, and True: a time (lower is better): the R exchanges' time
METRIC = ("elapsed_s", True)
ANALYSIS = ("tables", "figures", "claims", "c10")  # the modules that register its parts, in import order
FIGURES = {"fig3": "fig3_pingping"}  # the paper's figure, by its short name
# the raw fields runs.csv has a column for even in a sweep without PingPing runs
COLUMNS = (
    "params.message_bytes",
    "params.repetitions",
    "params.payload",
    "metrics.elapsed_s",
    "metrics.ns_per_message",
)
