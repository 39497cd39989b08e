"""Spawn (Fig. 4): create N processes until all are ready; the max-processes search under a memory budget."""

ORDER = 2  # where its tables come among the benchmarks' (processed tables keep this order)
ANALYSIS = ("tables", "figures", "claims")  # the modules that register its parts, in import order
