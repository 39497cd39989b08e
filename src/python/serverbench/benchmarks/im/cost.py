"""What an IM run costs, for the plan's estimates and shard balance only: registering the
clients (login_concurrency at a time, ~0.2 ms each on the 2-core VM against ngircd), the
schedule (its warm-up included) or the idle hold, and the drain."""

REGISTER_S = 2e-4  # seconds per client registered (connect, NICK/USER, 001), measured loosely
# A login storm against a server with a short listen backlog: ngircd listens with a backlog
# of 10 (not configurable), so most of login_concurrency's SYNs are dropped and retried after
# the kernel's back-off; 1,000 clients took 55 s on the shared 2-core VM (quick, 29 Nov 2026).
# The plan caps a run at its timeout.
STORM_REGISTER_S = {"ngircd": 0.055}


def socket_run_s(task, server: str) -> float:
    """Seconds beyond the server's start-up."""
    p = task.params
    setup = int(p["clients"]) * REGISTER_S
    mode = p.get("mode", "latency")
    if mode == "login":
        return int(p["clients"]) * STORM_REGISTER_S.get(server, REGISTER_S)
    if mode == "idle":
        return setup + float(p.get("duration_s", 10))
    return setup + float(p.get("warmup_s", 0)) + float(p.get("duration_s", 10)) + float(p.get("drain_s", 2))
