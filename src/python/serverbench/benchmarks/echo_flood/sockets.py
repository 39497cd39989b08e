"""The echo flood's hooks in the socket harness (harness/sockets*.py asks for them by name,
serverbench.plugins.part): its byte accounting, the CPUs its load generator gets, and
the saturation probe's fields in its records."""

from __future__ import annotations

from serverbench import plugins
from serverbench.benchmarks.echo_flood.columns import Col

# split placement: the client is the load generator, not a language under test, and must not
# be the bottleneck: it gets every allowed CPU the server does not use (harness.sockets.limits);
# every record has the saturation probe's fields (null unless measured), sampled over the
# client's window in saturate mode
HOOKS = plugins.SocketHooks(client_takes_spare_cpus=True, probe_fields=True, probe_mode="saturate")

CHUNK_BYTES = 32768  # the echo_flood load generator's chunk (spec: --bytes-per-connection multiples)
# saturate mode: the load generator writes a chunk only while at most 4 chunks of that
# connection are unverified (src/c/client.c, pump), so a connection has at most 5 chunks in
# flight when the client stops; the client-delay probe adds one chunk.
IN_FLIGHT_CHUNKS = 5


def in_flight_window(connections: int) -> int:
    """The most bytes an echo_flood saturate client can have written but not yet verified."""
    return (IN_FLIGHT_CHUNKS * connections + 1) * CHUNK_BYTES


def mismatch(params: dict, client: dict, server: dict) -> str | None:
    """Why the client's and the server's byte counts disagree, or None."""
    sent, verified = client[Col.bytes_written], client[Col.bytes_verified]
    s_read, s_wrote = server[Col.bytes_read], server[Col.bytes_written]
    if params.get(Col.mode, "flood") != "saturate":
        # flood: every connection finished, so every byte sent was read, echoed and verified
        if s_read != sent or s_wrote != verified:
            return (
                f"byte accounting: the client wrote {sent} and verified {verified} bytes; "
                f"the server says it read {s_read} and wrote {s_wrote}"
            )
        return None
    # saturate: the client stops while bytes are in flight. The server cannot have read
    # more than the client wrote, nor echoed more than it read, and must have echoed at
    # least what the client verified; so it may be ahead of the client's verified count by
    # at most the in-flight window (5 chunks per connection + the probe's chunk).
    window = in_flight_window(int(params.get(Col.connections, 1)))
    if s_wrote < verified:
        return f"byte accounting: the client verified {verified} bytes but the server says it wrote only {s_wrote}"
    if s_read > sent:
        return f"byte accounting: the server says it read {s_read} bytes but the client wrote only {sent}"
    if s_wrote > s_read:
        return f"byte accounting: the server says it wrote {s_wrote} bytes but read only {s_read}"
    if s_read - verified > window:
        return (
            f"byte accounting: the server says it read {s_read} bytes, more than the {verified} the client "
            f"verified plus the in-flight window of {window}"
        )
    return None
