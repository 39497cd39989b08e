"""Recovery (the paper's future work): throughput while workers crash and are restarted."""

ORDER = 5  # where its tables come among the benchmarks' (processed tables keep this order)
# its headline metric, and True: a time (lower is better): exchanges per second kept under crashes: a rate
METRIC = ("exchanges_per_s", False)
ANALYSIS = ("figures", "report")  # the modules that register its parts, in import order
