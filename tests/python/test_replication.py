"""Replication measured across committed sweeps (analysis/claims/replication.py): each claim's
verdicts over the sweeps of a profile, by kind of machine, with the sweeps after the
protocol's freeze counted apart."""

from __future__ import annotations

import io
import json

import pandas as pd

from serverbench import cli, protocol
from serverbench.analysis.claims import replication


def _sweep(root, name, cpu, started, verdicts, profile="quick"):
    f = root / name
    f.mkdir(parents=True)
    info = {"profile": {"name": profile}, "host": {"cpu_model": cpu, "logical_cpus": 2}, "first_started_utc": started}
    (f / "sweep.json").write_text(json.dumps(info), encoding="utf-8")
    pd.DataFrame({"id": list(verdicts), "verdict": list(verdicts.values()), "protocol": protocol.version()}).to_csv(
        f / "claims.csv", index=False
    )


def _three(root):
    frozen = protocol.load()["frozen_utc"]
    before, after = "2026-01-01T00:00:00Z", "2099-01-01T00:00:00Z"
    assert before < frozen < after
    _sweep(root, "quick-a", "AMD EPYC", before, {"C1": "supported", "C2": "contradicted"})
    _sweep(root, "quick-b", "Intel(R) Xeon(R) Processor", before, {"C1": "supported", "C2": "supported"})
    _sweep(root, "quick-c", "AMD EPYC", after, {"C1": "inconclusive", "C2": "supported"})
    _sweep(root, "paper-x", "AMD EPYC", after, {"C1": "contradicted"}, profile="paper")


def test_the_record_counts_verdicts_by_machine_and_marks_the_sweeps_after_the_freeze(tmp_path):
    _three(tmp_path)
    rec = replication.record("quick", tmp_path)
    assert sorted(rec["sweep"].unique()) == ["quick-a", "quick-b", "quick-c"]  # not the paper sweep
    assert set(rec.loc[rec["after_freeze"], "sweep"]) == {"quick-c"}
    c = replication.counts(rec).set_index("id")
    assert c.loc["C1", "all sweeps"] == (
        "supported in 2 of 3 (1/2 AMD EPYC, 1/1 Intel Xeon); inconclusive in 1 of 3 (1/2 AMD EPYC, 0/1 Intel Xeon)"
    )
    assert c.loc["C1", "after the freeze"] == "inconclusive in 1 of 1 (1/1 AMD EPYC)"
    assert replication.flips(rec) == [("C2", "quick-a", "quick-b"), ("C2", "quick-a", "quick-c")]


def test_the_command_writes_the_record_and_prints_the_table(tmp_path, monkeypatch):
    _three(tmp_path)
    monkeypatch.setattr("serverbench.paths.processed_dir", lambda: tmp_path)
    monkeypatch.setattr("serverbench.paths.figures_dir", lambda: tmp_path / "figures")
    out = io.StringIO()
    assert cli.run(["replication", "--profile", "quick"], stdout=out, stderr=io.StringIO()) == 0
    assert (tmp_path / "figures" / "replication.png").stat().st_size > 5_000  # README's picture of the record
    text = out.getvalue()
    assert "3 sweeps (2 on AMD EPYC, 1 on Intel Xeon); 1 after protocol" in text
    assert "supported <-> contradicted flips: 2" in text
    written = pd.read_csv(tmp_path / replication.FOLDER / "quick.csv")
    assert len(written) == 6 and list(written.columns) == replication.COLUMNS


def test_a_profile_without_sweeps_is_a_usage_error(tmp_path, monkeypatch):
    monkeypatch.setattr("serverbench.paths.processed_dir", lambda: tmp_path)
    err = io.StringIO()
    assert cli.run(["replication", "--profile", "nope"], stdout=io.StringIO(), stderr=err) == 2
    assert "no processed sweep of profile 'nope'" in err.getvalue()
