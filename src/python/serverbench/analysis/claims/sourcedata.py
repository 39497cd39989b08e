"""The two TCP write-ups' own published numbers run through their claims' checks (E1-E4,
T1-T3), judged as points, as paperdata.py does for the paper's C claims: a check that
cannot recognise its source's finding on the source's own data is a bad reading of the
source (docs/statistics.md, "The checks on their sources' own data").

Records are made in the raw-log shape from data/reference/servers_echo_flood.csv (the 2010
sweep table and its 6 Aug update: best of 3 per point; `scale_stack_cpp` is the C++ server
our `c` stands in for, `go_v2` the update's Go server, which replaced `go_v1`) and
servers_tcp_pingpong.csv (best of 3 per pair: the original code's 1-byte Scala buffer, and
with buffers fixed). The shape of a raw
record (the server's record, the load generator's fields) is copied from an ok run of that
benchmark in a committed sweep under data/raw, with the source's values put in.
"""

from __future__ import annotations

import copy
import json
import tempfile
from pathlib import Path

import pandas as pd

from serverbench import paths
from serverbench.analysis import claims
from serverbench.analysis.reading import cache, reference, synthetic
from serverbench.rawdata import records, sweepfiles
from serverbench.rawdata.columns import Col

SWEEP_ID = "sources-reference"
ECHO, TCP = "echo_flood", "tcp_pingpong"  # the benchmarks whose records carry the write-ups' numbers


def _template(benchmark: str) -> dict | None:
    """An ok flood/ping-pong record of `benchmark` from a committed sweep (newest first)."""
    for d in sorted(paths.raw_dir().glob("*/"), key=lambda p: p.name, reverse=True):
        for f in sweepfiles.sweep_logs(d):
            for _, line in records.iter_raw_lines(f):
                if benchmark.encode() not in line:
                    continue
                r = json.loads(line)
                if r.get(Col.benchmark) != benchmark or r.get(Col.status) != "ok" or r.get(Col.warmup):
                    continue
                if benchmark == ECHO and r[Col.params].get(Col.mode, "flood") != "flood":
                    continue
                return r
    return None


def _mark(r: dict) -> dict:
    r.update(sweep_id=SWEEP_ID, host={**synthetic.HOST, "hostname": "source", "cpu_model": "the source's machine"})
    return r


def echo_records() -> list[dict]:
    t = _template(ECHO)
    if t is None:
        return []
    ref = pd.read_csv(reference.reference_dir() / "servers_echo_flood.csv")
    ref = ref.drop_duplicates(["server", "connections", "bytes_per_connection"], keep="last")  # the update's value
    out = []
    for r in ref.itertuples():
        server = reference.echo_server_language(r.server)
        if server == "go_v1":  # the update's go_v2 replaced it (data/reference/README.md)
            continue
        x = _mark(copy.deepcopy(t))
        n, d = int(r.connections), int(r.bytes_per_connection)
        x.update(trial=1, server_language=server, placement="split")
        x[Col.params].update(connections=n, bytes_per_connection=d, mode="flood")
        x[Col.config_id] = f"echo_flood/source/bytes_per_connection={d},connections={n}/server_language={server}"
        x[Col.metrics].update(
            elapsed_s=float(r.seconds_best_of_3),
            connections_completed=n,
            connections_failed=0,
            bytes_written=n * d,
            bytes_read=n * d,
            bytes_verified=n * d,
        )
        # the source did not measure its load generator; 0 (a field the schema requires) keeps the
        # load-generator check (benchmarks/echo_flood/claims.py, _loadgen_checked) out of these records only
        x[Col.metrics][Col.client_cpu_share] = 0.0
        x[Col.server][Col.language] = server
        out.append(x)
    return out


def tcp_records() -> list[dict]:
    t = _template(TCP)
    if t is None:
        return []
    ref = pd.read_csv(reference.reference_dir() / "servers_tcp_pingpong.csv")
    ref = ref[ref["client"] == ref[Col.server]]  # the same-language pairs the claims compare
    # what the server read (T3): the write-up's count where it gave one, else every byte sent
    got = pd.read_csv(reference.reference_dir() / "servers_tcp_bytes_read.csv")
    got = {(r.client, r.server, int(r.read_buffer_bytes_server)): int(r.bytes_read_by_server) for r in got.itertuples()}
    out = []
    for r in ref.drop_duplicates(["client", "read_buffer_bytes_client"]).itertuples():
        x = _mark(copy.deepcopy(t))
        k = int(r.read_buffer_bytes_client)
        x.update(trial=1, language=r.client, server_language=r.server, placement="shared")
        x[Col.params].update(read_buffer_bytes=k, connections=100, round_trips=10_000)
        x[Col.config_id] = f"tcp_pingpong/source/read_buffer_bytes={k}/server_language={r.server}/placement=shared"
        us = float(r.us_per_round_trip_best_of_3)
        x[Col.metrics].update(reported_us_per_round_trip=us, elapsed_s=us * 10_000 / 1e6)
        x[Col.server][Col.language] = r.server
        sent = 4 * 100 * 10_000
        metrics = x[Col.server].setdefault("record", {}).setdefault("metrics", {})
        metrics[Col.bytes_read] = got.get((r.client, r.server, k), sent)
        out.append(x)
    return out


def _verdicts_on_sources(workdir) -> list:
    recs = echo_records() + tcp_records()
    if not recs:
        return []
    P = synthetic.processed_from(recs, Path(workdir), {"profile": {"name": "sources' own data"}})
    # E and T: the write-ups' claims; IM: predictions with no source numbers (not testable here)
    return [v for v in claims.check_all(P, point_values=True) if v.id[0] in "ET" or v.id.startswith("IM")]


def source_verdicts(workdir=None) -> pd.DataFrame:
    """id, verdict, numbers, why of E1-E4 and T1-T3 on the write-ups' own numbers.

    Without a workdir the table is kept in the user's cache (reading/cache.py) under the
    digest of what it is computed from (inputs()) and the code, and read from there when they
    are seen again: every report render asks for it, and computing it processes a sweep."""
    if workdir is None:

        def compute() -> dict:
            with tempfile.TemporaryDirectory() as d:
                return source_verdicts(d).to_dict(orient="split", index=False)

        t = cache.json_value(CACHE_KIND, inputs(), compute)
        return pd.DataFrame(t["data"], columns=t["columns"])
    V = _verdicts_on_sources(workdir)
    if not V:
        return pd.DataFrame(columns=["id", "verdict", "numbers", "why"])
    return claims.claims_table(V)[["id", "verdict", "numbers", "why"]]


CACHE_KIND = "source-verdicts"
REFERENCE_FILES = ("servers_echo_flood.csv", "servers_tcp_pingpong.csv", "servers_tcp_bytes_read.csv")


def inputs() -> list[tuple[str, bytes]]:
    """What source_verdicts() is computed from besides the code: the write-ups' reference
    tables and the template records taken from the committed sweeps."""
    out = [(f, (reference.reference_dir() / f).read_bytes()) for f in REFERENCE_FILES]
    return out + [(b, json.dumps(_template(b), sort_keys=True).encode()) for b in (ECHO, TCP)]


OWN = "on its source's own data"


def own_data_column(paper: pd.DataFrame, sources: pd.DataFrame) -> pd.DataFrame:
    """id and the verdict on the claim's source's own numbers (the paper's for C, the
    write-ups' for E and T), with the reason wherever it is not supported."""
    t = pd.concat([paper.assign(why=paper.get(Col.why, "")), sources], ignore_index=True)

    def reason(v, w) -> str:
        if v == claims.SUPPORTED or not isinstance(w, str) or not w:
            return v
        return f"{v}: {w}"

    text = [reason(v, w) for v, w in zip(t[Col.verdict], t[Col.why])]
    return pd.DataFrame({"id": t[Col.id], OWN: text})
