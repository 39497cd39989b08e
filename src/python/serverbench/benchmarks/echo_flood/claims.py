"""The echo-flood write-ups' four findings as claims E1-E4 (issue 19), through the same
engine and statistics as the paper's claims. Source: blog posts of 28 July and 6 August
2010 (data/reference/README.md, servers_echo_*.csv). Every comparison is a
Hodges-Lehmann ratio of flood times (seconds to echo N x D; median-type, exact interval
at its achieved confidence) between two SERVERS at the same N and D, split placement.

A flood time measured while the load generator was at its own CPU limit
(echo_figures.LOADGEN_LIMIT) is an upper bound on the server's: the server may be faster
than the client let it show. A decided comparison stands only if it would hold for any
smaller time on that side (`_loadgen_checked`); otherwise it is unclear, and says why."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from serverbench.analysis.claims import Claim, Needs, NotTestable, register
from serverbench.analysis.claims.compare import (
    Expectation,
    RatioBelow,
    RatioWithin,
    by_round,
    judged,
    order_above,
    rows_where,
    values_where,
)
from serverbench.analysis.claims.decision import ZONE_TEXT
from serverbench.analysis.claims.engine import NO, UNCLEAR, YES, Comparison, Data
from serverbench.analysis.claims.regime import Scale, SourceRegime, define
from serverbench.benchmarks.echo_flood.figures import LOADGEN_LIMIT, TABLE

# where the 2010 comparison measured E1-E4 (claims.regime)
define(
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

SOURCE = "Echo-flood blog posts, 28 Jul and 6 Aug 2010 (data/reference/README.md)"
METRIC = "elapsed_s"
KIB32, KIB512 = 32768, 524288
ALIKE = (0.5, 2.0)  # E1: every server within 2x of the C server
NEARLY = 1.3  # E4: Go at most 30 % slower than C
SLIGHTLY = (0.7, 1.0)  # E3: Eventlet faster than Twisted, by at most 30 %


def _flood(d):
    if "mode" in d:
        d = d[d["mode"].fillna("flood") == "flood"]
    if "placement" in d and (d["placement"] == "split").any():
        d = d[d["placement"] == "split"]
    return d


def _largest_n(d, D, servers) -> int:
    """The largest N at which every server in `servers` has runs with this D."""
    g = d[d["bytes_per_connection"] == D]
    common = None
    for s in servers:
        ns = set(g.loc[g["server_language"] == s, "connections"])
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


def _loadgen_checked(c: Comparison, expect: Expectation, num: float | None, den: float | None) -> Comparison:
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
    if expect.judge(wider)[0] == c.result:
        return c  # holds whatever the bounded side's true time
    sides = [f"{x:.0%}" for x, b in ((num, num_bound), (den, den_bound)) if b]
    whose = "that server's time is only an upper bound" if len(sides) == 1 else "both times are only upper bounds"
    c.result = UNCLEAR
    c.why = (
        f"the load generator ran at {' and '.join(sides)} of its CPU (limit {LOADGEN_LIMIT:.0%}): "
        f"{whose}, and the decision depends on it"
    )
    return c


def _judged_servers(data: Data, d, a: str, b: str, N: int, D: int, what: str, expect: Expectation) -> Comparison:
    """a / b flood time at (N, D) (paired by round where it holds), judged against expect
    and checked for a saturated load generator, at 95 % and at any stricter level (Holm)."""
    ci, at_level, note = by_round(
        *(rows_where(d, server_language=s, connections=N, bytes_per_connection=D) for s in (a, b))
    )
    c = judged(what, f"N={N:,}, D={D // 1024} KiB", ci, expect, at_level, **note)
    shares = _loadgen_share(data, a, N, D), _loadgen_share(data, b, N, D)
    base = c.rejudge

    def rejudge(level: float, choose_at: float):
        assert base is not None
        r, why, ci2 = base(level, choose_at)
        again = _loadgen_checked(Comparison(c.label, c.config, c.expected, r, ci2, why), expect, *shares)
        return again.result, again.why, again.ci

    c = _loadgen_checked(c, expect, *shares)
    c.rejudge = rejudge
    return c


def _servers(d):
    return sorted(set(d["server_language"]))


def _alike(data) -> list[Comparison]:
    d = _flood(data.values)
    ss = [s for s in _servers(d[d["bytes_per_connection"] == KIB32]) if s != "c"]
    if not ss or "c" not in set(d["server_language"]):
        raise NotTestable("needs echo_flood runs of the c server and another server at D = 32 KiB")
    N = _largest_n(d, KIB32, ["c", *ss])
    return [
        _judged_servers(data, d, s, "c", N, KIB32, f"{s} / c, seconds to echo N x 32 KiB", RatioWithin(*ALIKE))
        for s in ss
    ]


def _c_fastest_node_slowest(data) -> list[Comparison]:
    d = _flood(data.values)
    ss = _servers(d[d["bytes_per_connection"] == KIB512])
    if "c" not in ss or "nodejs" not in ss or len(ss) < 3:
        raise NotTestable("needs c, nodejs and another server at D = 512 KiB")
    N = _largest_n(d, KIB512, ss)
    out = []
    for s in ss:
        if s != "c":
            out.append(_judged_servers(data, d, s, "c", N, KIB512, f"{s} / c", order_above()))
        if s not in ("nodejs", "c"):  # nodejs / c is the row above
            out.append(_judged_servers(data, d, "nodejs", s, N, KIB512, f"nodejs / {s}", order_above()))
    return out


def _eventlet_twisted(data) -> list[Comparison]:
    d = _flood(data.values)
    out = []
    for D in (KIB32, KIB512):
        try:
            N = _largest_n(d, D, ["eventlet", "twisted"])
        except NotTestable:
            continue
        out.append(_judged_servers(data, d, "eventlet", "twisted", N, D, "eventlet / twisted", RatioWithin(*SLIGHTLY)))
    if not out:
        raise NotTestable("needs eventlet and twisted runs at a common N and D")
    return out


def _go_near_c(data) -> list[Comparison]:
    d = _flood(data.values)
    N = _largest_n(d, KIB512, ["go", "c"])
    c = _judged_servers(data, d, "go", "c", N, KIB512, "go / c", RatioBelow(NEARLY))
    if N < 32768:
        c.extra["note"] = f"largest N this sweep holds is {N:,}, not the claim's 32,768 (open-files limit)"
    return [c]


NEEDS = Needs(table=TABLE, metric=METRIC, languages=("c",))
register(
    Claim(
        id="E1",
        sentence="Below 32 KiB per connection every runtime scales alike.",
        source=SOURCE,
        needs=NEEDS,
        compare=_alike,
        definition="D = 32 KiB, at the largest N every server ran: each server's flood time ÷ the c server's "
        "(Hodges-Lehmann ratio, exact interval); tolerance: 'yes' if every interval lies "
        f"within [{ALIKE[0]}, {ALIKE[1]}] "
        "(no server more than 2x off the native floor; the original's spread was 1.54x), 'no' if one lies outside.",
    )
)
register(
    Claim(
        id="E2",
        sentence="At 512 KiB per connection the C server is fastest and node.js slowest.",
        source=SOURCE,
        needs=NEEDS,
        compare=_c_fastest_node_slowest,
        definition="D = 512 KiB, largest N every server ran: every other server ÷ c and nodejs ÷ every other server; "
        f"'yes' if every ratio's interval lies above 1, 'no' if one lies below (an ordering: each by more than "
        f"{ZONE_TEXT}).",
    )
)
register(
    Claim(
        id="E3",
        sentence="Eventlet is slightly faster than Twisted.",
        source=SOURCE,
        needs=NEEDS,
        compare=_eventlet_twisted,
        definition="Per D, at the largest N both ran: eventlet ÷ twisted flood time; 'slightly faster' = the interval "
        f"lies within [{SLIGHTLY[0]}, {SLIGHTLY[1]}] "
        "(faster, by at most 30 %; the original: 0.87 at 32,768 x 512 KiB).",
    )
)
register(
    Claim(
        id="E4",
        sentence="Go is nearly as fast as C at 32,768 connections x 512 KiB.",
        source=SOURCE,
        needs=NEEDS,
        compare=_go_near_c,
        definition="D = 512 KiB at the largest N both ran (32,768 where the open-files limit allows): "
        f"go ÷ c flood time; 'nearly as fast' = the interval lies below {NEARLY} "
        "(at most 30 % slower; the original: 59.73 / 50.25 = 1.19).",
    )
)
