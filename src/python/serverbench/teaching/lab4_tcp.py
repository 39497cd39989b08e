"""Lab 4's optional part, second half: the TCP pitfall (a 1-byte read buffer that made a
ping-pong look faster while it moved only part of the bytes), and the extra small sweeps
lab 4 makes (TCP, paper variant).

How much faster the 1-byte run looks has one producer, `tcp_looks_faster`: lab 4's
self-check uses it on the student's runs, and the instructor guide's generated table
(teaching/guide.py) on the runs recorded with the package (`recorded_tcp`), which lab 4
also shows when it studies an existing sweep instead of running. Lab 4 runs the recorded
configuration (each client with a server of its own language on separate CPUs, the same
connections and round trips), so the two numbers measure the same thing."""

from __future__ import annotations

from datetime import UTC, datetime

import pandas as pd

from serverbench import contract, paths
from serverbench.analysis.explorer import explore
from serverbench.rawdata.columns import Col
from serverbench.teaching import common
from serverbench.teaching.common import LabData

# committed: a quick sweep whose tcp_pingpong slice ran Go against Go with 1- and 4-byte buffers
RECORDED_TCP = "quick-20261127T073029Z"
CONNECTIONS = 4  # the quick profile's tcp_pingpong slice, which lab 4 runs too
ROUND_TRIPS = 250


def tcp_buffer_flag() -> tuple[str | None, str | None]:
    """(param name of --read-buffer-bytes, None) or (None, why it is not available)."""
    if "tcp_pingpong" not in contract.benchmarks():
        return None, "the tcp_pingpong benchmark is not in this checkout yet (spec/cli.json)"
    f = contract.flags("tcp_pingpong").get("--read-buffer-bytes")  # every role's flags
    if f and f.param:
        return f.param, None
    return None, "tcp_pingpong has no --read-buffer-bytes flag yet"


def _run_extra(tag: str, benchmarks, overrides, languages):
    from serverbench import harness

    sid = f"lab4{tag}-{datetime.now(UTC).strftime('%Y%m%dT%H%M%SZ')}"
    folder = harness.run_sweep(
        common.PROFILE, sweep_id=sid, benchmarks=benchmarks, languages=languages, overrides=overrides, progress=False
    )
    return explore.load_sweep(folder)


def lab_runs(runs: pd.DataFrame) -> pd.DataFrame:
    """The TCP runs lab 4 studies: measured (not warm-up) tcp_pingpong runs of a client
    against a server of its own language on separate CPUs (the harness's default for a
    socket benchmark); columns a sweep does not have are not filtered on."""
    d = runs
    if Col.table in d:
        d = d[d[Col.table] == "tcp_pingpong"]
    if Col.warmup in d:
        d = d[~d[Col.warmup].fillna(False).astype(bool)]
    if Col.server_language in d:
        d = d[d[Col.server_language].isna() | (d[Col.server_language] == d[Col.language])]
    if Col.placement in d:
        d = d[d[Col.placement].isna() | (d[Col.placement] == "split")]
    return d


def recorded_tcp() -> explore.SweepView | None:
    """The committed TCP runs at lab 4's configuration (sweep RECORDED_TCP), None if this
    checkout does not have them."""
    try:
        s = explore.load_sweep(paths.repo_root() / "data" / "raw" / RECORDED_TCP)
    except explore.SweepInputError:
        return None
    d = lab_runs(s.runs)
    for col, v in (("connections", CONNECTIONS), ("round_trips", ROUND_TRIPS)):
        if col in d:
            d = d[d[col] == v]
    if Col.read_buffer_bytes not in d or not {1, 4} <= set(d[Col.read_buffer_bytes].dropna().astype(int)):
        return None
    return explore.SweepView(s.folder, d.reset_index(drop=True), s.manifest, s.skipped_lines)


def tcp_buffer(data: LabData, run: bool = True):
    param, why = tcp_buffer_flag()
    if why:
        return common.md(
            f"**Not available yet:** {why}. The story: one TCP ping-pong read its socket one byte at "
            "a time and, counting reads instead of whole messages, looked several times faster while "
            "moving a fraction of the bytes. Once the benchmark lands, this cell runs it with "
            "`--read-buffer-bytes 1` next to the default (4 bytes, one whole message)."
        )
    if not run or data.source != "ran":
        rec = recorded_tcp()
        if rec is None:
            return common.md(
                "**Skipped:** this lab is studying an existing sweep (run=False or raw_folder), so no TCP "
                f"runs were made, and the recorded ones (sweep {RECORDED_TCP}) are not in this checkout."
            )
        print(
            f"This lab is studying an existing sweep, so no TCP runs were made: these are the TCP runs "
            f"recorded in {RECORDED_TCP} at the configuration lab 4 runs "
            f"({common.provenance(rec.manifest)})."
        )
        data.extra["tcp"] = rec
        return tcp_table(rec.runs)
    langs = [x for x in ("go", "erlang") if x in contract.languages() and contract.implements(x, "tcp_pingpong")]
    if not langs:
        return common.md("**Not available yet:** neither go nor erlang implements tcp_pingpong in this checkout.")
    try:
        s = _run_extra(
            "tcp",
            ["tcp_pingpong"],
            {
                f"tcp_pingpong.{param}": [1, 4],
                "tcp_pingpong.trials": 1,
                "tcp_pingpong.connections": [CONNECTIONS],
                "tcp_pingpong.round_trips": [ROUND_TRIPS],
                "tcp_pingpong.cores": [1],
            },
            langs,
        )
    except Exception as e:  # an optional demo: say why and go on
        return common.md(f"**The TCP runs could not be made:** {e}")
    data.extra["tcp"] = s
    return tcp_table(s.runs)


def tcp_table(runs: pd.DataFrame) -> pd.DataFrame:
    cols = [
        "language",
        "trial",
        "read_buffer_bytes",
        "status",
        "round_trips_counted",
        "round_trips_completed",
        "bytes_read",
        "expected_bytes_each_way",
        "reported_us_per_round_trip",
        "true_us_per_round_trip",
    ]
    runs = lab_runs(runs)
    return runs[[c for c in cols if c in runs]].sort_values(["language", "read_buffer_bytes"]).reset_index(drop=True)


def tcp_looks_faster(data, lang="go"):
    """How many times faster lang's 1-byte run looks: median reported us per round trip with
    4-byte reads / with 1-byte reads, over lab 4's TCP runs in data.extra["tcp"]."""
    s = data.extra.get("tcp")
    if s is None or "reported_us_per_round_trip" not in s.runs:
        return None
    d = lab_runs(s.runs)
    d = d[d[Col.language] == lang] if (d[Col.language] == lang).any() else d
    one = d.loc[d[Col.read_buffer_bytes] == 1, "reported_us_per_round_trip"].median()
    four = d.loc[d[Col.read_buffer_bytes] == 4, "reported_us_per_round_trip"].median()
    return float(four / one) if one and one == one and four == four else None
