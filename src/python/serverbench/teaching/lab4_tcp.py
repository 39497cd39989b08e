"""Lab 4's TCP pitfall (a 1-byte read buffer that made a ping-pong look ~6x faster while
moving a quarter of the bytes) and the extra small sweeps lab 4 makes (TCP, paper variant)."""

from __future__ import annotations

from datetime import UTC, datetime

import pandas as pd

from serverbench import contract
from serverbench.analysis import explore
from serverbench.teaching import common
from serverbench.teaching.common import LabData


def tcp_buffer_flag() -> tuple[str | None, str | None]:
    """(param name of --read-buffer-bytes, None) or (None, why it is not available)."""
    b = contract.cli_contract().get("benchmarks", {}).get("tcp_pingpong")
    if not b:
        return None, "the tcp_pingpong benchmark is not in this checkout yet (spec/cli.json)"
    flag_sets = [b.get("flags", {})] + [r.get("flags", {}) for r in (b.get("roles") or {}).values()]
    for flags in flag_sets:
        spec = flags.get("--read-buffer-bytes")
        if spec and spec.get("param"):
            return spec["param"], None
    return None, "tcp_pingpong has no --read-buffer-bytes flag yet"


def _run_extra(tag: str, benchmarks, overrides, languages):
    from serverbench import harness

    sid = f"lab4{tag}-{datetime.now(UTC).strftime('%Y%m%dT%H%M%SZ')}"
    folder = harness.run_sweep(
        common.PROFILE, sweep_id=sid, benchmarks=benchmarks, languages=languages, overrides=overrides, progress=False
    )
    return explore.load_sweep(folder)


def tcp_buffer(data: LabData, run: bool = True):
    param, why = tcp_buffer_flag()
    if why:
        return common.md(
            f"**Not available yet:** {why}. The story: one TCP ping-pong read its socket one byte at "
            "a time and, counting reads instead of whole messages, looked ~6x faster while moving a "
            "fraction of the bytes. Once the benchmark lands, this cell runs it with "
            "`--read-buffer-bytes 1` next to the default (4 bytes, one whole message)."
        )
    if not run or data.source != "ran":
        return common.md(
            "**Skipped:** this lab is studying an existing sweep (run=False or raw_folder), so no TCP runs were made."
        )
    cli = contract.cli_contract()["languages"]
    langs = [x for x in ("go", "erlang") if "tcp_pingpong" in cli.get(x, {}).get("benchmarks", [])]
    if not langs:
        return common.md("**Not available yet:** neither go nor erlang implements tcp_pingpong in this checkout.")
    try:
        s = _run_extra(
            "tcp",
            ["tcp_pingpong"],
            {
                f"tcp_pingpong.{param}": [1, 4],
                "tcp_pingpong.trials": 1,
                "tcp_pingpong.connections": [2],
                "tcp_pingpong.round_trips": [2000],
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
        "read_buffer_bytes",
        "status",
        "round_trips_counted",
        "round_trips_completed",
        "bytes_read",
        "expected_bytes_each_way",
        "reported_us_per_round_trip",
        "true_us_per_round_trip",
    ]
    return runs[[c for c in cols if c in runs]].sort_values(["language", "read_buffer_bytes"]).reset_index(drop=True)


def _tcp_looks_faster(data, lang="go"):
    s = data.extra.get("tcp")
    if s is None or "reported_us_per_round_trip" not in s.runs:
        return None
    d = s.runs[s.runs["language"] == lang] if (s.runs["language"] == lang).any() else s.runs
    one = d.loc[d["read_buffer_bytes"] == 1, "reported_us_per_round_trip"].median()
    four = d.loc[d["read_buffer_bytes"] == 4, "reported_us_per_round_trip"].median()
    return float(four / one) if one and one == one and four == four else None
