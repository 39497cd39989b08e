"""The encodings of T1-T3, the TCP ping-pong write-up's statements (blog post of 18 January
2016, data/reference/README.md, servers_tcp_*.csv; T1 is the article's claim, T1b the
write-up's finding). Their words and regions are spec/protocol.json's. Each ratio is paired
by round between client-server pairs at the write-up's placement (client and server
sharing one CPU) where the sweep has it; other placements are shown beside it."""

from __future__ import annotations

from serverbench import protocol
from serverbench.analysis.claims import Claim, Needs, NotTestable
from serverbench.analysis.claims.compare import judged, rows_where
from serverbench.analysis.claims.engine import EVIDENCE_ONLY, Comparison
from serverbench.analysis.claims.regime import Scale, SourceRegime, define
from serverbench.benchmarks.tcp_pingpong.figures import TABLE, runs
from serverbench.rawdata.columns import Col

# where the 2016 write-up measured T1-T3 (claims.regime)
REGIME_T1 = define(
    SourceRegime(
        "the 2016 TCP ping-pong: 100 connections x 10,000 round trips, client and server sharing a laptop's CPUs",
        ("tcp_pingpong",),
        (Scale("connections", 100, "connections"), Scale("round_trips", 10_000, "round trips")),
        placement="shared",
    ),
    "T1",
    "T1b",
    "T2",
    "T3",
)

METRIC = "reported_us_per_round_trip"


def _placements(d):
    ps = [p for p in ("split", "shared") if p in set(d[Col.placement])]
    if not ps:
        raise NotTestable("no tcp_pingpong runs with a placement")
    return ps


def _rows(d, client, server, K, placement):
    return rows_where(d, language=client, server_language=server, read_buffer_bytes=K, placement=placement)


def _ratio(cid: str, what: str, num: tuple, den: tuple):
    """make(data, rows, placement): num / den client-server pairs ((client, server, K)), or None."""

    def make(data, d, pl):
        a, b = _rows(d, *num, pl), _rows(d, *den, pl)
        if a.empty or b.empty:
            return None
        return judged(what, f"placement={pl}", data.region(cid), a, b)

    return make


def _deciding(d) -> list[str]:
    """The placements that decide: the write-up's (client and server sharing one CPU) where
    the sweep has it; the others are shown beside it for context."""
    ps = _placements(d)
    return ["shared"] if "shared" in ps else ps


def _at_source_placement(make, needs: str, rows=lambda data: data.values):
    """A compare function: make(data, rows, placement) at every placement; rows off the
    write-up's placement (when the sweep has it) are shown for context only."""

    def compare(data) -> list[Comparison]:
        d = rows(data)
        out, deciding = [], _deciding(d)
        for pl in _placements(d):
            c = make(data, d, pl)
            if c is None:
                continue
            if pl not in deciding:
                c.extra["note"] = f"not the write-up's placement, shown for context (would decide: {c.result})"
                c.result, c.rejudge = EVIDENCE_ONLY, None
            out.append(c)
        if not any(c.result != EVIDENCE_ONLY for c in out):
            raise NotTestable(f"needs {needs}")
        return out

    return compare


def _quarter(data, d, pl):
    """T3: the scala server's own count of bytes read / the bytes its client wrote, per run
    (one sample against 1, by round)."""
    r = d[(d[Col.placement] == pl)] if Col.placement in d else d
    if r.empty or (not data.options.point_values and r[Col.trial].nunique() <= protocol.rounds_figure_only()):
        # a figure-only point never decides (a source's own value is judged as a point)
        return None
    return judged(
        "bytes the scala server read / 4 x C x R (K=1)",
        f"placement={pl}",
        data.region("T3"),
        r.assign(value=r["server_read_fraction"])[["trial", "value"]].dropna(),
    )


def _scala_k1_runs(data):
    d = runs(data.P)
    if d.empty or "server_read_fraction" not in d:
        raise NotTestable("no tcp_pingpong runs with the server's record")
    return d[(d["K"] == 1) & (d[Col.server_language] == "scala") & (d[Col.language] == "scala")]


NEEDS = Needs(table=TABLE, metric=METRIC, languages=("go", "scala"))
GO4, SCALA4, SCALA1 = ("go", "go", 4), ("scala", "scala", 4), ("scala", "scala", 1)
CLAIMS = tuple(
    Claim(id=cid, needs=NEEDS if cid != "T3" else Needs(TABLE, METRIC, languages=("scala",)), compare=compare)
    for cid, compare in (
        (
            "T1",
            _at_source_placement(
                _ratio("T1", "go/go (K=4) / scala/scala (K=1, the article's program, time as it printed)", GO4, SCALA1),
                "go/go runs with 4-byte reads and scala/scala runs with the original 1-byte buffer",
            ),
        ),
        (
            "T1b",
            _at_source_placement(
                _ratio("T1b", "go/go (K=4) / scala/scala (K=4), µs per round trip", GO4, SCALA4),
                "go/go and scala/scala runs with 4-byte reads",
            ),
        ),
        (
            "T2",
            _at_source_placement(
                _ratio("T2", "scala/scala (K=4) / go/go (K=4), µs per round trip", SCALA4, GO4),
                "go/go and scala/scala runs with 4-byte reads",
            ),
        ),
        (
            "T3",
            _at_source_placement(_quarter, "scala/scala runs with the 1-byte buffer (variant paper)", _scala_k1_runs),
        ),
    )
)
