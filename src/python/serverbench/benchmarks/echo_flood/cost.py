"""What an echo-flood run costs, for the plan's estimates and shard balance only (measured on
a 2-core VM; docs/sockets.md): per connection and per byte relative to the c
server's (~1 GB/s and ~30 us per connection; each server's factor is its spec/cli.json
`cost_factor.echo_flood`, 4 without one); a guard-stopped 512 KiB flood takes ~10 s."""

from serverbench import catalog
from serverbench.benchmarks.echo_flood.columns import Col

GUARD_BYTES = 4 * 2**30  # N x D past this: the kernel-memory guard stops the run (~10 s)


def socket_run_s(task, server: str) -> float:
    """Seconds beyond the server's start-up."""
    p = task.params
    if p.get(Col.mode) == "saturate":
        return float(p[Col.duration_s]) + 1.0
    n, d = int(p[Col.connections]), int(p[Col.bytes_per_connection])
    if n * d > GUARD_BYTES:
        return 10.0
    return catalog.language(server).cost_factor("echo_flood", default=4) * (n * 30e-6 + n * d / 1e9)
