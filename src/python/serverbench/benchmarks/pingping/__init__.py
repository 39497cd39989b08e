"""PingPing (Fig. 3): two processes pass one message back and forth R times."""

ORDER = 1  # where its tables come among the benchmarks' (processed tables keep this order)
ANALYSIS = ("tables", "figures", "claims", "c10")  # the modules that register its parts, in import order
