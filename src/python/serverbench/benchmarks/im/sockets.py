"""IM's hook in the socket harness (harness/sockets*.py asks for it by name,
serverbench.plugins.part): the probe it wants, the parameter that takes the round, and
the message accounting between the generator's record and one of our servers' (ngircd's
and InspIRCd's records have null counters: nothing to check)."""

from __future__ import annotations

# Every IM record has the probe's fields (harness.sockets.probe), and the probe samples the
# server's process tree's RSS over the generator's whole run (server_rss_peak_bytes): bytes
# per idle client are the difference of two runs' peaks.
PROBE_FIELDS = True
PROBE_PEAK_RSS = True
# The parameter that takes the round (the trial number) in every run: "seed = the round"
# (IM_PROTOCOL.md), so one configuration's rounds pair up under one config_id.
ROUND_PARAM = "seed"


def mismatch(params: dict, client: dict, server: dict) -> str | None:
    """Why the generator's and the server's message counts disagree, or None.

    A delivered message passed through the server, so the server forwarded at least what
    the generator received and at most what the generator could have asked for: one-to-one
    (latency) messages are the sessions' messages_routed, channel copies (fanout) are
    channel_deliveries. Lost messages are not a mismatch (they are the server's result)."""
    mode = params.get("mode", "latency")
    if mode not in ("latency", "fanout"):
        return None
    field = "messages_routed" if mode == "latency" else "channel_deliveries"
    # the warm-up's messages (--warmup-s) passed through the server too
    got = client["messages_delivered"] + client.get("warmup_messages_delivered", 0)
    asked = client["deliveries_expected"] + client.get("warmup_deliveries_expected", 0)
    passed = server.get(field)
    if passed is None:  # a production server keeps no counters (src/ircd/launcher.py)
        return None
    if passed < got:
        return f"message accounting: the generator received {got} messages but the server says {field} = {passed}"
    if passed > asked:
        return f"message accounting: the server says {field} = {passed}, more than the {asked} the generator sent"
    return None
