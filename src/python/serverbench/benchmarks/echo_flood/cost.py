"""What an echo-flood run costs, for the plan's estimates and shard balance only (measured on
a 2-core VM; docs/sockets.md): per connection and per byte relative to the c
server's (~1 GB/s and ~30 us per connection); a guard-stopped 512 KiB flood takes ~10 s."""

SLOWER = {
    "c": 1,
    "go": 1.2,
    "erlang": 6,
    "scala_akka": 5.5,
    "nodejs": 2,
    "twisted": 2,
    "eventlet": 3.5,
    "rust_tokio": 1.2,
}
GUARD_BYTES = 4 * 2**30  # N x D past this: the kernel-memory guard stops the run (~10 s)


def socket_run_s(task, server: str) -> float:
    """Seconds beyond the server's start-up."""
    p = task.params
    if p.get("mode") == "saturate":
        return float(p["duration_s"]) + 1.0
    n, d = int(p["connections"]), int(p["bytes_per_connection"])
    if n * d > GUARD_BYTES:
        return 10.0
    return SLOWER.get(server, 4) * (n * 30e-6 + n * d / 1e9)
