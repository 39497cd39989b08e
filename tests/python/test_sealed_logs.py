"""A finished sweep's raw log sealed as runs.jsonl.gz (sweepfiles.seal, `validate --seal`):
lossless, read by every reader as the plain log was, never appended to, and a damaged or
half-sealed folder refused by name rather than read twice or in part."""

from __future__ import annotations

import gzip
import io
import json

import pytest

from harness_fakes import SMALL, fakes
from serverbench import cli
from serverbench.analysis.explorer import explore
from serverbench.analysis.reading import synthetic
from serverbench.harness import run_sweep
from serverbench.harness.planning.values import ProfileError
from serverbench.harness.recording import rawlog
from serverbench.rawdata import checksums, records, sweepfiles
from test_sharded_readers import _recs  # ten PingPing records of one sweep

MANIFEST = {"profile": {"name": "lab"}, "created_utc": "2026-11-28T00:00:00Z"}


def _validate(*argv) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = cli.run(["validate", *map(str, argv)], out, err)
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("shards", [0, 3])
def test_sealing_keeps_every_byte_and_every_reader_reads_it_alike(tmp_path, shards):
    d = synthetic.write_sweep(tmp_path / "s", _recs("s"), MANIFEST, shards=shards)
    plain = {f.name: f.read_bytes() for f in sweepfiles.sweep_logs(d)}
    before, _ = records.load_records([d])
    listed_before = explore.list_sweeps(tmp_path)
    code, out, _ = _validate("--seal", d)
    assert code == 0 and "sealed" in out
    logs = sweepfiles.sweep_logs(d)
    assert [f.name for f in logs] == [n + ".gz" for n in plain] and all(sweepfiles.is_sealed(f) for f in logs)
    assert not any((d / n).exists() for n in plain)
    assert {f.name.removesuffix(".gz"): gzip.decompress(f.read_bytes()) for f in logs} == plain
    after, _ = records.load_records([d])
    assert after == before
    assert explore.list_sweeps(tmp_path).equals(listed_before)
    assert set(checksums.read_sums(d / checksums.SUMS_NAME)) == {"manifest.json", *(f.name for f in logs)}
    assert _validate(d)[0] == 0
    # sealing again changes nothing, byte for byte
    sealed = {f.name: f.read_bytes() for f in logs}
    assert _validate("--seal", d)[0] == 0 and {f.name: f.read_bytes() for f in sweepfiles.sweep_logs(d)} == sealed


def test_a_damaged_sealed_log_is_named_not_read_in_part(tmp_path):
    d = synthetic.write_sweep(tmp_path / "s", _recs("s"), MANIFEST)
    [gz] = sweepfiles.seal(d)
    gz.write_bytes(gz.read_bytes()[: len(gz.read_bytes()) // 2])  # cut, as a broken copy would be
    with pytest.raises(records.RawLogError, match="sealed log cannot be decompressed"):
        records.load_records([d], skip_bad=True)
    code, _, err = _validate(d)
    assert code != 0 and "runs.jsonl.gz" in err and "cannot be decompressed" in err and "Traceback" not in err
    # the harness's reader (status, resume checks) names it too, and the explorer's list still
    # shows the sweep, with a warning that names it
    with pytest.raises(records.RawLogError, match="runs.jsonl.gz.*cannot be decompressed"):
        rawlog.read_lines(d / "runs.jsonl")
    with pytest.warns(UserWarning, match="s: .*runs.jsonl.gz.*cannot be decompressed"):
        listed = explore.list_sweeps(tmp_path)
    assert list(listed["sweep_id"]) == ["s"]


def test_a_half_finished_seal_is_refused_until_sealed_again(tmp_path):
    d = synthetic.write_sweep(tmp_path / "s", _recs("s"), MANIFEST)
    data = (d / "runs.jsonl").read_bytes()
    (d / "runs.jsonl.gz").write_bytes(gzip.compress(data))  # the .gz written, the plain file not yet removed
    with pytest.raises(FileExistsError, match="interrupted"):
        sweepfiles.raw_files(d)
    code, _, err = _validate(d)
    assert code == 2 and "--seal" in err
    err = io.StringIO()  # every command that reads the sweep says so, without a traceback
    assert cli.run(["process", str(d), "--out", str(tmp_path / "out")], io.StringIO(), err) == 2
    assert "a seal was interrupted" in err.getvalue() and not (tmp_path / "out").exists()
    assert _validate("--seal", d)[0] == 0
    assert [f.name for f in sweepfiles.sweep_logs(d)] == ["runs.jsonl.gz"] and len(records.load_records([d])[0]) == 10


def test_no_seal_while_a_harness_holds_the_sweep(tmp_path):
    d = synthetic.write_sweep(tmp_path / "s", _recs("s"), MANIFEST)
    held = rawlog.lock(d / ".lock")
    try:
        code, _, err = _validate("--seal", d)
        assert code == 2 and "a harness is running this sweep" in err
        assert (d / "runs.jsonl").exists() and not (d / "runs.jsonl.gz").exists()
    finally:
        held.close()


@pytest.mark.slow
def test_the_harness_refuses_to_resume_a_sealed_sweep(tmp_path):
    kw = dict(raw_root=tmp_path, progress=False, overrides={**SMALL, "spawn.enabled": False}, commands=fakes())
    d = run_sweep("smoke", sweep_id="done", **kw)
    n = len(records.load_records([d])[0])
    sweepfiles.seal(d)
    with pytest.raises(ProfileError, match="'done' is sealed .*new --sweep-id"):
        run_sweep("smoke", sweep_id="done", **kw)
    assert not (d / "runs.jsonl").exists() and len(records.load_records([d])[0]) == n
    assert [json.loads(x)["event"] for x in (d / "sessions.jsonl").read_text().splitlines()] == ["start", "end"]
