"""What a TCP ping-pong run costs, for the plan's estimates (the 2-core VM, docs/sockets.md):
seconds per round trip, aggregate over the connections, by placement; across CPUs a Scala
side (one thread per CPU) pays a cross-CPU wake-up per round trip."""

from serverbench.rawdata.columns import Col

RTT_S = {"shared": 26e-6, "split": 90e-6, "split_scala": 240e-6}


def socket_run_s(task, server: str) -> float:
    """Seconds beyond the server's start-up."""
    placement = task.options.placement if task.options else "split"
    key = "split_scala" if placement == "split" and "scala" in (server, task.language) else placement
    return int(task.params[Col.connections]) * int(task.params[Col.round_trips]) * RTT_S.get(key, RTT_S["split"])
