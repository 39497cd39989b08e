"""Replication measured across committed sweeps (analysis/claims/replication.py, record.py,
effects.py): each claim's verdicts over the sweeps of a profile, by design and protocol
version, by kind of machine, every committed sweep accounted for, the deciding ratios'
spread between sweeps."""

from __future__ import annotations

import io
import json

import pandas as pd

from serverbench import cli, protocol
from serverbench.analysis.claims import record as record_module
from serverbench.analysis.claims import replication


def _sweep(root, name, cpu, started, verdicts, profile="quick", evidence=None):
    f = root / name
    f.mkdir(parents=True)
    info = {"profile": {"name": profile}, "host": {"cpu_model": cpu, "logical_cpus": 2}, "first_started_utc": started}
    (f / "sweep.json").write_text(json.dumps(info), encoding="utf-8")
    version = protocol.version_for(started)
    pd.DataFrame({"id": list(verdicts), "verdict": list(verdicts.values()), "protocol": version}).to_csv(
        f / "claims.csv", index=False
    )
    if evidence:
        pd.DataFrame(evidence).to_csv(f / "claims_evidence.csv", index=False)


V1_FROZEN = "2026-11-27T03:20:00Z"
BEFORE, AFTER_V1, AFTER_V2 = "2026-01-01T00:00:00Z", "2026-11-28T00:00:00Z", "2026-11-29T02:00:00Z"
AFTER_V3, AFTER_V4, AFTER_V5 = "2026-11-30T00:00:00Z", "2026-12-02T05:00:00Z", "2099-01-01T00:00:00Z"


def _three(root):
    _sweep(root, "quick-a", "AMD EPYC", BEFORE, {"C1": "supported", "C2": "contradicted"})
    _sweep(root, "quick-b", "Intel(R) Xeon(R) Processor", BEFORE, {"C1": "supported", "C2": "supported"})
    _sweep(root, "quick-c", "AMD EPYC", AFTER_V2, {"C1": "inconclusive", "C2": "supported"})
    _sweep(root, "paper-x", "AMD EPYC", AFTER_V2, {"C1": "contradicted"}, profile="paper")


def test_the_record_counts_verdicts_by_design_and_version_by_machine(tmp_path):
    _three(tmp_path)
    rec = replication.record("quick", tmp_path)
    assert sorted(rec["sweep"].unique()) == ["quick-a", "quick-b", "quick-c"]  # not the paper sweep
    per = rec.drop_duplicates("sweep").set_index("sweep")
    assert per["design"].to_dict() == {"quick-a": "exploratory", "quick-b": "exploratory", "quick-c": "confirmation"}
    assert per["protocol"].to_dict() == {"quick-a": 1, "quick-b": 1, "quick-c": 2}  # the version in force
    assert set(rec.loc[rec["after_freeze"], "sweep"]) == {"quick-c"}
    c = replication.counts(rec).set_index("id")
    assert list(c.columns) == ["exploratory, protocol 1", "confirmation, protocol 2"]
    assert c.loc["C1", "exploratory, protocol 1"] == "supported in 2 of 2 (1/1 AMD EPYC, 1/1 Intel Xeon)"
    assert c.loc["C1", "confirmation, protocol 2"] == "inconclusive in 1 of 1 (1/1 AMD EPYC)"
    assert replication.flips(rec) == [("C2", "quick-a", "quick-b"), ("C2", "quick-a", "quick-c")]


def test_the_record_says_not_testable_without_blaming_the_machine(tmp_path):
    """A claim a piece did not run is "not testable on this machine" in its claims table; the
    count over sweeps says "not testable" (the reason is most often the piece)."""
    _sweep(tmp_path, "quick-a", "AMD EPYC", AFTER_V2, {"C1": "not testable on this machine", "C2": "supported"})
    _sweep(tmp_path, "quick-b", "AMD EPYC", AFTER_V2, {"C1": "supported", "C2": "supported"})
    c = replication.counts(replication.record("quick", tmp_path)).set_index("id")
    got = c.loc["C1", "confirmation, protocol 2"]
    assert got == "not testable in 1 of 2 (1/2 AMD EPYC); supported in 1 of 2 (1/2 AMD EPYC)", got


def test_a_sweep_between_the_two_freezes_is_a_confirmation_sweep_of_protocol_1():
    assert replication.design_of(BEFORE) == (1, "exploratory")
    assert replication.design_of(AFTER_V1) == (1, "confirmation")
    assert replication.design_of(AFTER_V2) == (2, "confirmation")
    assert replication.design_of(AFTER_V3) == (3, "confirmation")  # protocol 3 (IM added; no rule changed)
    assert replication.design_of(AFTER_V4) == (4, "confirmation")  # protocol 4 (a rule at a scale only)
    assert replication.design_of(AFTER_V5) == (5, "confirmation")  # protocol 5 (the IM design only)


def test_every_committed_quick_sweep_is_in_the_record_or_named_with_its_reason():
    from serverbench import paths

    left = replication.unaccounted(
        "quick", paths.repo_root() / "data" / "processed", paths.repo_root() / "data" / "raw"
    )
    assert all(why == record_module.EXCLUDED.get(sweep) for sweep, why in left), left


def test_the_command_writes_the_record_and_prints_the_table(tmp_path, monkeypatch):
    _three(tmp_path)
    monkeypatch.setattr("serverbench.paths.processed_dir", lambda: tmp_path)
    monkeypatch.setattr("serverbench.paths.figures_dir", lambda: tmp_path / "figures")
    monkeypatch.setattr("serverbench.paths.raw_dir", lambda: tmp_path / "raw")
    out = io.StringIO()
    assert cli.run(["replication", "--profile", "quick"], stdout=out, stderr=io.StringIO()) == 0
    assert (tmp_path / "figures" / "replication.png").stat().st_size > 5_000  # README's picture of the record
    text = out.getvalue()
    assert "3 sweeps: 2 exploratory, protocol 1 (1 on AMD EPYC, 1 on Intel Xeon); 1 confirmation, protocol 2" in text
    assert "supported <-> contradicted flips: 2" in text
    written = pd.read_csv(tmp_path / replication.FOLDER / "quick.csv")
    assert len(written) == 6 and list(written.columns) == replication.COLUMNS


def test_a_profile_without_sweeps_is_a_usage_error(tmp_path, monkeypatch):
    monkeypatch.setattr("serverbench.paths.processed_dir", lambda: tmp_path)
    err = io.StringIO()
    assert cli.run(["replication", "--profile", "nope"], stdout=io.StringIO(), stderr=err) == 2
    assert "no processed sweep of profile 'nope'" in err.getvalue()


def _ev(ratio, result):
    return [{"claim": "C2", "comparison": "Go/Erlang time", "config": "5 kB", "ratio": ratio, "result": result}]


def test_the_readme_groups_claims_by_the_confirmation_sweeps_with_their_effect(tmp_path):
    """C2 contradicted in every confirmation sweep is 'Contradicted', whatever the earlier
    design's sweeps said; its deciding ratio's spread over the sweeps is shown."""
    for i in range(3):  # exploratory: split
        _sweep(tmp_path, f"quick-e{i}", "Intel(R) Xeon(R) Processor", f"2026-01-0{i + 1}T00:00:00Z",
               {"C2": "inconclusive" if i else "contradicted", "C3": "supported"},
               evidence=_ev(0.5, "unclear"))  # fmt: skip
    for i, r in enumerate((0.30, 0.33, 0.36, 0.34)):  # confirmation (protocol 1): all contradicted
        _sweep(tmp_path, f"quick-c{i}", "AMD EPYC", f"2026-11-28T0{i}:00:00Z",
               {"C2": "contradicted", "C3": "supported" if i else "inconclusive"}, evidence=_ev(r, "no"))  # fmt: skip
    rec = replication.record("quick", tmp_path)
    eff = replication.effects_table("quick", tmp_path, rec)
    text = replication.readme_findings(rec, eff)
    lines = {ln.split(":")[0]: ln for ln in text.splitlines() if ln.startswith("* ")}
    assert "**C2**" in lines["* Contradicted"]
    assert "(4/4; exploratory: 1/3 contradicted; Go/Erlang time, 5 kB: median 0.335, 0.3-0.36 over 4 sweeps)" in text
    assert (
        "**C3** “Scala/Akka supports the most dormant processes” (3/4; exploratory: 3/3 supported)"
        in lines["* Supported"]
    )
    assert "Grouped by the verdict of the 4 confirmation, protocol 1 sweeps" in text
    assert "every Intel Xeon sweep is exploratory" in text  # machine confounded with design, said
    s = replication.effects.spread(eff)
    amd = s[(s["design"] == "confirmation")].iloc[0]
    assert (amd["sweeps"], amd["min"], amd["max"]) == (4, 0.30, 0.36)
    assert replication.effects_figure(eff) is not None
