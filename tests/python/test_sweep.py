"""One raw sweep folder read once (analysis/reading/sweep.py): its manifest, runs and
sessions, a shard's files included, bad lines set aside or refused."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from serverbench.analysis.reading.sweep import Sweep
from serverbench.rawdata import records, sweepfiles

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "raw" / "golden-smoke"


def test_the_golden_sweep_is_read_whole():
    s = Sweep(GOLDEN)
    lines = (GOLDEN / "runs.jsonl").read_text(encoding="utf-8").splitlines()
    assert s.id == "golden-smoke" == s.manifest["sweep_id"]
    assert len(s.records) == len(lines) == len(s.raw) and s.skipped == []
    assert [x["event"] for x in s.sessions] == ["start", "end"]
    assert s.raw.attrs["skipped"] == [] and list(s.raw.attrs["cpu_models"])  # as records.load_raw gives them
    assert s.records is s.records  # read once


def test_a_shards_sessions_count_and_a_bad_session_line_is_left_out(tmp_path):
    shutil.copytree(GOLDEN, tmp_path / "s")
    shard = tmp_path / "s" / "sessions.2.jsonl"
    shard.write_text(json.dumps({"event": "start", "session": 1}) + "\n{torn\n", encoding="utf-8")
    events = [x["event"] for x in sweepfiles.read_sessions(tmp_path / "s")]
    assert events == ["start", "end", "start"]
    assert sweepfiles.read_sessions(tmp_path / "nothing") == []


def test_a_corrupt_run_line_is_refused_or_set_aside(tmp_path):
    shutil.copytree(GOLDEN, tmp_path / "s")
    with open(tmp_path / "s" / "runs.jsonl", "a", encoding="utf-8") as f:
        f.write('{"not": "a record"}\n')
    with pytest.raises(records.RawLogError, match="runs.jsonl:19"):
        _ = Sweep(tmp_path / "s").records
    s = Sweep(tmp_path / "s", skip_bad=True, quiet=True)
    assert len(s.records) == 18 and [line for _, line, _ in s.skipped] == [19]
    assert s.raw.attrs["skipped"] == s.skipped
