"""TCP ping-pong (docs/sockets.md): a client and a server exchange round trips over loopback."""

ORDER = 6  # where its tables come among the benchmarks' (processed tables keep this order)
# its headline metric, and True: a time (lower is better): microseconds per round trip, counted from the bytes
METRIC = ("true_us_per_round_trip", True)
ANALYSIS = ("figures", "claims", "report")  # the modules that register its parts, in import order
