"""IM's hook in the socket harness (harness/sockets*.py asks for it by name,
serverbench.plugins.part): the message accounting between the generator's record and one
of our servers' (ngircd and InspIRCd print no record, so the harness never asks then)."""

from __future__ import annotations


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
    got, asked, passed = client["messages_delivered"], client["deliveries_expected"], server[field]
    if passed < got:
        return f"message accounting: the generator received {got} messages but the server says {field} = {passed}"
    if passed > asked:
        return f"message accounting: the server says {field} = {passed}, more than the {asked} the generator sent"
    return None
