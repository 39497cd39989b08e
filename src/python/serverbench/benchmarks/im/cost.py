"""What an IM run costs, for the plan's estimates and shard balance only: registering the
clients before the clock, the schedule (its warm-up included) or the idle hold, and the
drain; a login storm is its registrations alone.

Registration times measured on the shared 2-core VM before any IM sweep:
our servers ~0.2 ms a client; ngircd's grow with N (1,000 in 0.4 s, 15,273 in 116 s at
8 in flight: about 5e-7 x N^2 s), and a storm against it is slower still (its listen backlog
of 10: 1,000 logins took 55 s); InspIRCd completes registrations on a once-a-second tick
(1,000 in 4.2 s, 19,000 in 107 s at 256 in flight: ~5.6 ms a client). The plan caps a run at
its timeout."""

from serverbench.benchmarks.im.columns import Col

REGISTER_S = 2e-4  # seconds per client registered (connect, NICK/USER, 001): our servers
REGISTER_S_BY_SERVER = {"inspircd": 5.6e-3}
REGISTER_S_PER_N = {"ngircd": 5e-7}  # seconds per client per client already there (grows with N)
STORM_REGISTER_S = {"ngircd": 0.055}  # a login storm at login_concurrency in flight


def setup_s(clients: int, server: str) -> float:
    """Seconds to register `clients` clients before the clock."""
    per = REGISTER_S_BY_SERVER.get(server, REGISTER_S) + REGISTER_S_PER_N.get(server, 0.0) * clients
    return clients * per


def socket_run_s(task, server: str) -> float:
    """Seconds beyond the server's start-up."""
    p = task.params
    n = int(p[Col.clients])
    mode = p.get(Col.mode, "latency")
    if mode == "login":
        return n * STORM_REGISTER_S.get(server, REGISTER_S_BY_SERVER.get(server, REGISTER_S))
    if mode == "idle":
        return setup_s(n, server) + float(p.get(Col.duration_s, 10))
    return (
        setup_s(n, server)
        + float(p.get(Col.warmup_s, 0))
        + float(p.get(Col.duration_s, 10))
        + float(p.get(Col.drain_s, 2))
    )
