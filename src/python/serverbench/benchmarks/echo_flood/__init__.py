"""Echo flood (docs/sockets.md): N connections each send D bytes to an echo server over loopback."""

ORDER = 4  # where its tables come among the benchmarks' (processed tables keep this order)
# its headline metric, and True: a time (lower is better): the flood's time
METRIC = ("elapsed_s", True)
ANALYSIS = ("figures", "claims", "report")  # the modules that register its parts, in import order
