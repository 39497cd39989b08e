"""Throughput (Fig. 5): P pairs exchange messages for a fixed time on C cores."""

ORDER = 3  # where its tables come among the benchmarks' (processed tables keep this order)
ANALYSIS = ("tables", "figures", "claims", "warmup")  # the modules that register its parts, in import order
