"""Long sample arrays in sidecars (serverbench/sidecars.py): a recovery run with 10,000
crashes is written with its arrays beside the raw line, every sample comes back, a
lost or changed sidecar makes its line bad, and runs.csv stays small."""

from __future__ import annotations

import gzip
import hashlib
import json

import pytest

from harness_fakes import launcher, spec
from serverbench.analysis.reading import process
from serverbench.benchmarks.recovery import figures as R
from serverbench.harness.recording import rawlog
from serverbench.rawdata import records, sidecars, sweepfiles


def _flip_middle_byte(data: bytes) -> bytes:
    i = len(data) // 2
    return data[:i] + bytes([data[i] ^ 0xFF]) + data[i + 1 :]


RECOVERY = {"pairs": 2, "duration_s": 10.0, "crashes_per_s": 1000}  # 10,000 crashes


def _sweep(tmp_path, params=RECOVERY):
    folder = tmp_path / "raw" / "t"
    folder.mkdir(parents=True)
    rec, _ = launcher("ok").run(spec("recovery", params=params, cores=1))
    assert rec["status"] == "ok", rec["status_reason"]
    log = rawlog.RawLog(folder / sweepfiles.RAW_LOG_NAME)
    written = log.append(rec)
    log.close()
    return folder, rec, written


def test_long_arrays_go_to_one_sidecar_and_come_back_number_for_number(tmp_path):
    folder, rec, written = _sweep(tmp_path)
    lat = written["metrics"]["restart_latency_s"]
    assert sidecars.is_ref(lat) and lat["n"] == 10_000
    assert written["metrics"]["crash_times_s"]["sidecar"] == lat["sidecar"]  # one file a run
    line = (folder / sweepfiles.RAW_LOG_NAME).read_bytes()
    assert len(line) < 5_000  # the line itself stays short
    for field in ("restart_latency_s", "crash_times_s"):
        assert sidecars.read_array(folder, lat, field) == rec["metrics"][field]
    # short arrays (the samples) and scalars stay in the line
    assert written["metrics"]["samples"] == rec["metrics"]["samples"]
    recs, skipped = records.load_records([folder])
    assert len(recs) == 1 and not skipped


def test_a_short_run_keeps_its_arrays_in_the_line(tmp_path):
    folder, rec, written = _sweep(tmp_path, {**RECOVERY, "crashes_per_s": 100})  # 1,000 crashes
    assert written["metrics"]["restart_latency_s"] == rec["metrics"]["restart_latency_s"]
    assert not (folder / sidecars.FOLDER).exists()


@pytest.mark.parametrize(
    "damage, says",
    [
        (lambda p: p.unlink(), "is missing"),
        (lambda p: p.write_bytes(_flip_middle_byte(p.read_bytes())), "sha256 differs"),
    ],
)
def test_a_lost_or_changed_sidecar_makes_its_line_bad(tmp_path, damage, says):
    folder, _, written = _sweep(tmp_path)
    damage(folder / written["metrics"]["restart_latency_s"]["sidecar"])
    with pytest.raises(records.RawLogError, match=says):
        records.load_records([folder])
    recs, skipped = records.load_records([folder], skip_bad=True)
    assert recs == [] and len(skipped) == 1 and says in skipped[0][2]


def test_a_reference_whose_count_is_wrong_is_bad(tmp_path):
    folder, _, written = _sweep(tmp_path)
    ref = written["metrics"]["restart_latency_s"]
    path = folder / ref["sidecar"]
    arrays = json.loads(gzip.decompress(path.read_bytes()))
    arrays["restart_latency_s"] = arrays["restart_latency_s"][:-1]
    path.write_bytes(gzip.compress(json.dumps(arrays).encode(), mtime=0))
    # a forged checksum to match: the count is still checked
    line = json.loads((folder / sweepfiles.RAW_LOG_NAME).read_text())
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    for f in ("restart_latency_s", "crash_times_s"):
        line["metrics"][f]["sha256"] = digest
    (folder / sweepfiles.RAW_LOG_NAME).write_text(json.dumps(line) + "\n")
    with pytest.raises(records.RawLogError, match="does not hold the 10000 values"):
        records.load_records([folder])


def test_processed_runs_csv_holds_the_reference_and_the_figure_every_sample(tmp_path, monkeypatch):
    folder, rec, _ = _sweep(tmp_path)
    monkeypatch.setenv("SERVERBENCH_DATA", str(tmp_path))
    out = process.process_sweep(folder, tmp_path / "processed" / "t")
    assert out["runs"].stat().st_size < 20_000
    P = process.Processed(tmp_path / "processed" / "t")
    cell = P.runs["restart_latency_s"].iloc[0]
    assert json.loads(cell)["n"] == 10_000
    lat = R.latencies(P.runs.assign(table="recovery", fault="worker"))
    assert len(lat) == 10_000
    assert sorted(lat["latency_s"]) == sorted(rec["metrics"]["restart_latency_s"])


def test_the_threshold_is_the_schemas_number():
    ref = records.load_schema(records.NATIVE_SCHEMA)["$defs"]["samples_s"]["oneOf"][1]
    assert sidecars.min_items() == ref["properties"]["n"]["minimum"] - 1 == 4096
