"""Every reader of a raw sweep folder accepts what sweepfiles.raw_files accepts: a sharded
sweep (runs.<i>.jsonl, no runs.jsonl) is listed, loaded and counted by the explorer, found
by the teaching labs, and read by the audit, record for record as the whole one."""

from __future__ import annotations

import pytest

from serverbench.analysis.auditing import audit
from serverbench.analysis.explorer import explore
from serverbench.analysis.reading import synthetic
from serverbench.rawdata import sweepfiles
from serverbench.teaching import common


def _recs(sweep_id: str) -> list[dict]:
    return [
        synthetic.raw_record(
            "pingping", lang, {"message_bytes": 5000, "repetitions": 100}, {"elapsed_s": e}, trial=k, sweep_id=sweep_id
        )  # fmt: skip
        for lang, e in (("go", 0.1), ("erlang", 0.2))
        for k in range(5)
    ]


@pytest.fixture
def raw_root(tmp_path, monkeypatch):
    monkeypatch.setenv("SERVERBENCH_DATA", str(tmp_path / "data"))
    root = tmp_path / "data" / "raw"
    manifest = {"profile": {"name": "lab"}, "created_utc": "2026-11-28T00:00:00Z"}
    synthetic.write_sweep(root / "lab1-sharded", _recs("lab1-sharded"), manifest, shards=3)
    synthetic.write_sweep(root / "whole", _recs("whole"), manifest)
    (root / "empty").mkdir()
    return root


def test_a_sharded_sweep_has_no_runs_jsonl_but_its_shards(raw_root):
    folder = raw_root / "lab1-sharded"
    assert not (folder / sweepfiles.RAW_LOG_NAME).exists()
    assert [f.name for f in sweepfiles.sweep_logs(folder)] == ["runs.0.jsonl", "runs.1.jsonl", "runs.2.jsonl"]
    assert sweepfiles.sweep_logs(folder) == sweepfiles.raw_files(folder)
    assert sweepfiles.is_sweep(folder) and not sweepfiles.is_sweep(raw_root / "empty")


def test_the_explorer_lists_loads_and_counts_a_sharded_sweep(raw_root):
    assert explore.sweep_ids(raw_root) == ["lab1-sharded", "whole"]
    sharded, whole = explore.load_sweep(raw_root / "lab1-sharded"), explore.load_sweep(raw_root / "whole")
    assert len(sharded.runs) == len(whole.runs) == 10
    key = ["language", "trial", "elapsed_s"]
    assert sorted(map(tuple, sharded.runs[key].values)) == sorted(map(tuple, whole.runs[key].values))
    listed = explore.list_sweeps(raw_root).set_index("sweep_id")
    assert listed.loc["lab1-sharded", "runs"] == 10 and listed.loc["lab1-sharded", "ok"] == 10
    with pytest.raises(explore.SweepInputError, match="not a sweep"):
        explore.load_sweep(raw_root / "empty")


def test_a_lab_finds_its_sharded_sweep(raw_root):
    data = common.get_runs(
        "lab1", run=False, raw_folder=None, languages=["go", "erlang"], benchmarks=["pingping"], overrides={}
    )
    assert data.sweep.folder.name == "lab1-sharded" and len(data.runs) == 10


def test_the_audit_reads_every_shard(raw_root):
    sharded = audit.load_runs(raw_root / "lab1-sharded")
    assert len(sharded) == len(audit.load_runs(raw_root / "whole")) == 10
