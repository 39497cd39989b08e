"""Report section: socket benchmarks, the echo flood (issue 19)."""

from __future__ import annotations

from serverbench.analysis import registry
from serverbench.analysis.echo_figures import per_server, reference_saturation, runs, saturation_table

INTRO = """\
**Echo flood.** N concurrent loopback connections each send D bytes in 32 KiB chunks to an
echo server and verify every byte that comes back (a position- and connection-dependent
pattern: loss, reordering, duplication and cross-talk all fail the run, `invalid`). The time
is from the first connect to the last verified byte. One load generator for every server:
the `c` client (one thread, epoll), pinned to the other CPU; its own CPU share is in every
record. Servers: `c` (one thread, epoll; standing in for the original's C++ framework), `go`
(a goroutine per connection), `nodejs` (`net`), `twisted` (epoll reactor), `eventlet` (a
green thread per connection), `python_threads` (a thread per connection, 256 KiB stacks).
On this machine the open-files hard limit is 20,000, so the largest N is 16,384 (the
harness refuses 32,768 in one line naming RLIMIT_NOFILE).
"""


@registry.report_section("Socket benchmarks: echo flood", order=65)
def echo_flood_section(P) -> list:
    d = runs(P)
    if d.empty:
        return ["No echo_flood runs in this sweep (profile `servers` or `quick` runs them)."]
    blocks: list = [INTRO, registry.FigureRef("fig_echo_flood")]
    t = per_server(d)
    blocks += ["Seconds to echo N x D per server (median and min of trials):", t.round(4)]
    sat = saturation_table(P)
    if not sat.empty:
        blocks += [
            "Saturation (N connections sending without end; server CPU % = its CPU seconds over its "
            "lifetime, peak RSS; client delay = one more connection's 32 KiB echo during saturation). "
            "Context switches/s and kernel socket memory are not recorded yet:",
            sat.round(3),
        ]
    ref = reference_saturation()
    if not ref.empty:
        blocks += ["The original's saturation table (32,768 connections, 2010, vmstat):", ref]
    blocks.append("The write-ups' four findings are claims E1-E4 in the claims table.")
    return blocks
