"""Report section: socket benchmarks, the echo flood."""

from __future__ import annotations

from serverbench.analysis.reading import registry
from serverbench.benchmarks.echo_flood.figures import (
    LOADGEN_LIMIT,
    per_server,
    reference_saturation,
    runs,
    saturation_table,
)

INTRO = """\
**Echo flood.** N concurrent loopback connections each send D bytes in 32 KiB chunks to an
echo server and verify every byte that comes back (a position- and connection-dependent
pattern: loss, reordering, duplication and cross-talk all fail the run, `invalid`). The time
is from the first connect to the last verified byte. One load generator for every server:
the `c` client (epoll, one thread per CPU it is given: every CPU the server does not get),
and its own CPU share is in every record. Where that share reached {limit:.0%}, the load
generator rather than the server may have set the pace, so the time is only an upper bound
on the server's: such points are drawn hollow (`loadgen_bound` in the table), and a claim
decides on them only when its decision holds for any shorter time on that side.
Servers: `c` (one thread, epoll; standing in for the original's C++ framework), `go`
(a goroutine per connection), `erlang` (`gen_tcp`, a process per connection, 100
acceptors), `scala_akka`
(Akka IO TCP, an actor per connection), `nodejs` (`net`), `twisted` (epoll reactor),
`eventlet` (a green thread per connection), `python_threads` (a thread per connection,
256 KiB stacks).
On this machine the open-files hard limit is 20,000, so the largest N is 16,384 (the
harness refuses 32,768 in one line naming RLIMIT_NOFILE).
"""
SATURATION_TEXT = """\
Saturation (N connections sending without end for duration_s; median over trials). The
harness samples the server from /proc over a window inside the sending window (from
min(0.2 x duration_s, 1 s) after the load generator starts until min(0.1 x duration_s,
0.25 s) before duration_s after it): `user_pct`/`system_pct` = the server process tree's
CPU over the window, % of one CPU (utime/stime deltas); `ctx_switches_per_s` = voluntary
+ nonvoluntary context switches summed over the server's threads (`threads`, at the
window's end), `host_ctx_switches_per_s` = the whole machine's (/proc/stat `ctxt`);
`rss_peak_MiB` = the server tree's largest sampled RSS; `tcp_mem_peak_MiB` and
`sockets_used_peak` = /proc/net/sockstat (the whole network namespace: both sides'
sockets, and any other process's; ~2 x N when the run was alone). `client_delay_s` = one
more connection's 32 KiB echo half way through; `no_delay_echo` = trials in which it got
no echo at all (30 s past the window). `cpu_over` = `lifetime` marks runs recorded before
the window was sampled (CPU over the server's whole life incl. start-up: a lower bound):
"""


@registry.report_section("Socket benchmarks: echo flood", order=65)
def echo_flood_section(P) -> list:
    d, sat = runs(P), saturation_table(P)
    if d.empty and sat.empty:
        return []  # left out of a report of a sweep without it (reporting/sections.py)
    blocks: list = [INTRO.format(limit=LOADGEN_LIMIT)]
    if not d.empty:
        blocks.append(registry.FigureRef("fig_echo_flood"))
        blocks += ["Seconds to echo N x D per server (median and min of trials):", per_server(d).round(4)]
    if not sat.empty:
        blocks += [SATURATION_TEXT, sat.round(3)]
    ref = reference_saturation()
    if not ref.empty:
        blocks += ["The original's saturation table (32,768 connections, 2010, vmstat):", ref]
    blocks.append("The write-ups' four findings are claims E1-E4 in the claims table.")
    return blocks
