"""The encodings of E1-E4, the echo-flood write-ups' findings (blog posts of 28 July and 6
August 2010, data/reference/README.md, servers_echo_*.csv). Their words and regions are
spec/protocol.json's; E1 and E2 compare only the servers the 2010 sweep ran (C, node.js,
Twisted, Eventlet); the others are shown in the figures, never decide. Every comparison is
a ratio of flood times (seconds to echo N x D) paired by round, split placement.

A flood time measured while the load generator was at its own CPU limit
(echo_figures.LOADGEN_LIMIT) is an upper bound on the server's: the server may be faster
than the client let it show. A decided comparison stands only if it would hold for any
smaller time on that side (`_loadgen_checked`); otherwise it is unclear, and says why."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from serverbench import protocol
from serverbench.analysis.claims import Claim, Needs, NotTestable
from serverbench.analysis.claims.compare import judge, judged, per_round, rows_where, values_where
from serverbench.analysis.claims.engine import NO, UNCLEAR, YES, Comparison, Data
from serverbench.analysis.claims.regime import Scale, SourceRegime, define
from serverbench.benchmarks.echo_flood.columns import Col
from serverbench.benchmarks.echo_flood.figures import LOADGEN_LIMIT, TABLE

# where the 2010 comparison measured E1-E4 (claims.regime)
REGIME_E1 = define(
    SourceRegime(
        "the 2010 echo flood: 1 to 32,768 connections x 32 KiB and 512 KiB, best of 3, one machine",
        ("echo_flood",),
        (Scale("connections", 32_768, "connections"),),
    ),
    "E1",
    "E2",
    "E3",
    "E4",
)

METRIC = "elapsed_s"
KIB32, KIB512 = 32768, 524288
# the servers the 2010 sweep ran at every N (the protocol's population of E1 and E2)
SOURCE_SERVERS = tuple(protocol.claim("E1")["population"])


def _flood(d):
    if Col.mode in d:
        d = d[d[Col.mode].fillna("flood") == "flood"]
    if Col.placement in d and (d[Col.placement] == "split").any():
        d = d[d[Col.placement] == "split"]
    return d


def _largest_n(d, D, servers) -> int:
    """The largest N at which every server in `servers` has runs with this D."""
    g = d[d[Col.bytes_per_connection] == D]
    common = None
    for s in servers:
        ns = set(g.loc[g[Col.server_language] == s, "connections"])
        common = ns if common is None else common & ns
    if not common:
        raise NotTestable(f"no N at D = {D // 1024} KiB with runs of every one of {', '.join(servers)}")
    return int(max(common))


def _vals(d, s, N, D):
    return values_where(d, server_language=s, connections=N, bytes_per_connection=D)


def _loadgen_share(data: Data, s: str, N: int, D: int) -> float | None:
    """Median CPU share of the load generator over the runs against server s at (N, D)."""
    try:
        d = _flood(data.table(TABLE, "client_cpu_share"))
    except (KeyError, ValueError):
        return None
    v = _vals(d, s, N, D)
    v = v[~np.isnan(v)]
    return float(np.median(v)) if len(v) else None


def _loadgen_checked(c: Comparison, region: protocol.Region, num: float | None, den: float | None) -> Comparison:
    """c, or c made unclear when a side's time is only an upper bound (load generator at
    >= LOADGEN_LIMIT of its CPU) and the decision would not survive that side being faster.
    num bound: the true ratio may be lower; den bound: it may be higher."""
    num_bound = num is not None and num >= LOADGEN_LIMIT
    den_bound = den is not None and den >= LOADGEN_LIMIT
    c.extra.update(loadgen_cpu_share_num=num, loadgen_cpu_share_den=den)
    if c.result not in (YES, NO) or c.ci is None or not (num_bound or den_bound):
        return c
    ci = c.ci
    wider = replace(ci, lo=ci.lo * 1e-9 if num_bound else ci.lo, hi=ci.hi * 1e9 if den_bound else ci.hi)
    if judge(region, wider, ci.level)[0] == c.result:
        return c  # holds whatever the bounded side's true time
    sides = [f"{x:.0%}" for x, b in ((num, num_bound), (den, den_bound)) if b]
    whose = "that server's time is only an upper bound" if len(sides) == 1 else "both times are only upper bounds"
    c.result, c.rejudge = UNCLEAR, None
    c.why = (
        f"the load generator ran at {' and '.join(sides)} of its CPU (limit {LOADGEN_LIMIT:.0%}): "
        f"{whose}, and the decision depends on it"
    )
    return c


def _rows(d, s, N, D):
    return rows_where(d, server_language=s, connections=N, bytes_per_connection=D)


def _judged_servers(data: Data, d, a: str, b: str, N: int, D: int, what: str, cid: str) -> Comparison:
    """a / b flood time at (N, D), paired by round, judged against cid's region and checked
    for a saturated load generator."""
    region = data.region(cid)
    c = judged(what, f"N={N:,}, D={D // 1024} KiB", region, _rows(d, a, N, D), _rows(d, b, N, D))
    return _loadgen_checked(c, region, _loadgen_share(data, a, N, D), _loadgen_share(data, b, N, D))


def _alike(data) -> list[Comparison]:
    """E1: each source server's growth t(N2)/t(N1) at 32 KiB over the C server's."""
    c = protocol.claim("E1")
    n1, n2 = c[Col.connections]
    D = c[Col.bytes_per_connection]
    d = _flood(data.values)
    out = []
    for s in SOURCE_SERVERS:
        if s == "c":
            continue
        grow = per_round(_rows(d, s, n2, D), _rows(d, s, n1, D))
        base = per_round(_rows(d, "c", n2, D), _rows(d, "c", n1, D))
        if len(grow) and len(base):
            out.append(
                judged(f"{s} / c, growth t({n2:,}) / t({n1:,})", f"D={D // 1024} KiB", data.region("E1"), grow, base)
            )
    if not out:
        raise NotTestable(
            f"needs flood runs of the c server and another source server at N = {n1:,} and {n2:,}, D = 32 KiB"
        )
    return out


def _c_fastest_node_slowest(data) -> list[Comparison]:
    c = protocol.claim("E2")
    D, least = c[Col.bytes_per_connection], c["min_connections"]
    d = _flood(data.values)
    N = _largest_n(d, D, SOURCE_SERVERS)
    if N < least:
        raise NotTestable(
            f"the largest N every source server ran at 512 KiB is {N:,}; the source's own numbers show node.js "
            f"slowest only from {least:,} connections"
        )
    out = [_judged_servers(data, d, "c", s, N, D, f"c / {s}", "E2") for s in SOURCE_SERVERS if s != "c"]
    out += [
        _judged_servers(data, d, s, "nodejs", N, D, f"{s} / nodejs", "E2")
        for s in SOURCE_SERVERS
        if s not in ("c", "nodejs")
    ]
    return out


def _eventlet_twisted(data) -> list[Comparison]:
    d = _flood(data.values)
    out = []
    for D in (KIB32, KIB512):
        try:
            N = _largest_n(d, D, ["eventlet", "twisted"])
        except NotTestable:
            continue
        out.append(_judged_servers(data, d, "eventlet", "twisted", N, D, "eventlet / twisted", "E3"))
    if not out:
        raise NotTestable("needs eventlet and twisted runs at a common N and D")
    return out


def _go_near_c(data) -> list[Comparison]:
    d = _flood(data.values)
    D = protocol.claim("E4")[Col.bytes_per_connection]
    N = _largest_n(d, D, ["go", "c"])
    c = _judged_servers(data, d, "go", "c", N, D, "go / c", "E4")
    if N < 32768:
        c.extra["note"] = f"largest N this sweep holds is {N:,}, not the claim's 32,768 (open-files limit)"
    return [c]


NEEDS = Needs(table=TABLE, metric=METRIC, languages=("c",))
CLAIMS = tuple(
    Claim(id=cid, needs=NEEDS, compare=compare)
    for cid, compare in (("E1", _alike), ("E2", _c_fastest_node_slowest), ("E3", _eventlet_twisted), ("E4", _go_near_c))
)
