"""IM's hook in the socket harness (harness/sockets*.py reads it as
catalog.benchmark("im").socket_hooks and .sockets): the probe it wants, the parameter that takes the round, and
the message accounting between the generator's record and one of our servers' (ngircd's
and InspIRCd's records have null counters: nothing to check)."""

from __future__ import annotations

from serverbench import plugins
from serverbench.benchmarks.im.columns import Col

# Registrations in flight before the clock (the generator's --setup-concurrency; not
# measured, so set per server, and left out of config_id): the flag's default (8) suits
# ngircd, whose listen backlog is 10 and which, with 32 registrations in flight, registered
# only 672 of 1,000 clients in 50 s (SYNs dropped and retried) against 1,000 in 1.4 s with 8.
# InspIRCd completes a registration only on its once-a-second tick: 8 in flight registered
# 904 of 19,000 clients in 116 s, login_concurrency (256) in flight 1,000 in 4.3 s.
# (Measured on the shared 2-core VM before any IM sweep.)
SETUP_CONCURRENCY = {"inspircd": "login_concurrency"}


def client_params(params: dict, server: str) -> dict:
    """The generator's params the harness sets for this server (harness.sockets.run)."""
    if "setup_concurrency" not in params or server not in SETUP_CONCURRENCY:
        return {}
    from serverbench import contract

    return {"setup_concurrency": int(contract.cli_contract()[Col.benchmarks]["im"][SETUP_CONCURRENCY[server]])}


def mismatch(params: dict, client: dict, server: dict) -> str | None:
    """Why the generator's and the server's message counts disagree, or None.

    A delivered message passed through the server, so the server forwarded at least what
    the generator received and at most what the generator could have asked for: one-to-one
    (latency) messages are the sessions' messages_routed, channel copies (fanout) are
    channel_deliveries. Lost messages are not a mismatch (they are the server's result)."""
    mode = params.get(Col.mode, "latency")
    if mode not in ("latency", "fanout"):
        return None
    field = "messages_routed" if mode == "latency" else "channel_deliveries"
    # the warm-up's messages (--warmup-s) passed through the server too
    got = client[Col.messages_delivered] + client.get(Col.warmup_messages_delivered, 0)
    asked = client[Col.deliveries_expected] + client.get(Col.warmup_deliveries_expected, 0)
    passed = server.get(field)
    if passed is None:  # a production server keeps no counters (src/ircd/launcher.py)
        return None
    if passed < got:
        return f"message accounting: the generator received {got} messages but the server says {field} = {passed}"
    if passed > asked:
        return f"message accounting: the server says {field} = {passed}, more than the {asked} the generator sent"
    return None


# Every IM record has the probe's fields (harness.sockets.probe), and the probe samples the
# server's process tree's RSS over the generator's whole run (server_rss_peak_bytes). The
# parameter that takes the round (the trial number) in every run is the seed, so one
# configuration's rounds pair up under one config_id; the setup concurrency is set per
# server (client_params).
HOOKS = plugins.SocketHooks(round_param="seed", probe_fields=True, probe_peak_rss=True, client_params=client_params)
