"""TCP ping-pong's hooks in the socket harness (harness/sockets*.py asks for them by name,
serverbench.plugins.part): its byte accounting and the original's 1-byte read buffer."""

from __future__ import annotations

from collections.abc import Mapping

from serverbench import plugins
from serverbench.rawdata.columns import Col


def runs_the_original_bug(params: Mapping) -> bool:
    """A read buffer under 4 bytes is the original's bug, run on purpose (variant paper)."""
    return int(params.get(Col.read_buffer_bytes, 4)) < 4


def mismatch(params: dict, client: dict, server: dict) -> str | None:
    """Why the client's and the server's byte counts disagree, or None (no exact check of
    the original's bug)."""
    if runs_the_original_bug(params):
        return None
    if server[Col.bytes_read] != client[Col.bytes_written] or server[Col.bytes_written] != client[Col.bytes_read]:
        return (
            f"byte accounting: client wrote {client[Col.bytes_written]} and read {client[Col.bytes_read]}, "
            f"server read {server[Col.bytes_read]} and wrote {server[Col.bytes_written]}"
        )
    return None


HOOKS = plugins.SocketHooks(runs_the_original_bug=runs_the_original_bug)
