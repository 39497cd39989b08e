"""IM (the paper's case study, docs/im.md): an IRC-subset instant-messaging server in each
language, loaded by the one open-loop generator (language im_loadgen)."""

ORDER = 6  # where its tables come among the benchmarks' (processed tables keep this order)
# its headline metric, and True: a time (lower is better): the 99th percentile of delivery latency
METRIC = ("latency_p99_s", True)
ANALYSIS = ("tables", "claims", "figures", "report")  # the modules that register its parts, in import order
NOTEBOOK = "im"  # notebooks/im.ipynb: the report runs it for every sweep with IM runs
