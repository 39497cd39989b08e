"""Byte accounting across a socket run's two records (sockets.run's overall status):
what the client says it sent and got back against what the server says it read and
wrote. A mismatch makes the run `invalid`, the reason naming both numbers. Each socket
benchmark's own rule is its package's (serverbench/benchmarks/<id>/sockets.py, mismatch)."""

from __future__ import annotations

from collections.abc import Mapping

from serverbench import catalog


def mismatch(bench: str, params: Mapping, client: dict, server: dict) -> str | None:
    """Why the client's and the server's metrics disagree, or None (None also for a
    benchmark whose package has no byte rule)."""
    hook = catalog.benchmark(bench).sockets
    return hook.mismatch(params, client, server) if hook is not None else None
