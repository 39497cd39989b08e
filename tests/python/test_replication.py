"""`serverbench replication`: the verdict table over repeated sweeps, supported<->contradicted
flips, robust claims that changed, and the Brier score of the stated P(verdict)."""

from __future__ import annotations

import io

import pandas as pd
import pytest

from serverbench import cli
from serverbench.analysis import replication


def _sweep(folder, verdicts, probs=None):
    folder.mkdir(parents=True)
    pd.DataFrame({"id": list(verdicts), "verdict": list(verdicts.values())}).to_csv(folder / "claims.csv", index=False)
    if probs is not None:
        rows = []
        for cid, (ps, pi, pc, label) in probs.items():
            rows.append(
                dict(
                    id=cid,
                    p_supported=ps,
                    p_inconclusive=pi,
                    p_contradicted=pc,
                    p_not_testable=0.0,
                    p_error=0.0,
                    reliability=label,
                )
            )
        pd.DataFrame(rows).to_csv(folder / "claims_reliability.csv", index=False)
    return folder


def test_flips_robust_changes_and_brier(tmp_path):
    a = _sweep(
        tmp_path / "a",
        {"C1": "supported", "C2": "inconclusive", "C3": "supported"},
        {"C1": (1.0, 0, 0, "robust"), "C2": (0, 1.0, 0, "robust"), "C3": (0.5, 0.5, 0, "borderline")},
    )
    b = _sweep(tmp_path / "b", {"C1": "supported", "C2": "supported", "C3": "contradicted"})
    table, lines = replication.summary([a, b])
    assert replication.flips(table) == [("C3", "a", "b")]
    assert replication.robust_but_changed(table, [a, b]) == ["C2"]  # robust in a, yet changed
    br = replication.brier_scores(table, [a, b])
    # C1: stated 1.0 supported, observed 1.0 -> 0; C2: stated inconclusive 1.0, observed 0.5/0.5 -> 0.5;
    # C3: stated 0.5/0.5/0 (supported/inconclusive/contradicted), observed 0.5/0/0.5 -> 0 + 0.25 + 0.25
    assert br["a"] == pytest.approx((0 + 0.5 + (0 + 0.25 + 0.25)) / 3)
    assert pd.isna(br["b"])  # b states no probabilities
    assert "supported <-> contradicted flips: 1: C3 (a vs b)" in lines


def test_the_command_needs_two_sweeps_and_prints_the_summary(tmp_path):
    a = _sweep(tmp_path / "a", {"C1": "supported"})
    b = _sweep(tmp_path / "b", {"C1": "supported"})
    out, err = io.StringIO(), io.StringIO()
    assert cli.run(["replication", str(a)], out, err) == 2 and "at least two sweeps" in err.getvalue()
    out = io.StringIO()
    assert cli.run(["replication", str(a), str(b), "--out", str(tmp_path / "t.csv")], out, io.StringIO()) == 0
    assert "supported <-> contradicted flips: 0" in out.getvalue()
    assert pd.read_csv(tmp_path / "t.csv", index_col=0).loc["C1"].tolist() == ["supported", "supported"]


def test_the_summary_names_the_machines_the_sweeps_ran_on(tmp_path):
    """The criteria are about sweeps on one machine: the summary says which, and warns when
    the sweeps come from more than one."""
    import json

    folders = []
    for name, cpu, fp in (("a", "AMD EPYC", "f1"), ("b", "AMD EPYC", "f1"), ("c", "Intel Xeon", "f2")):
        _sweep(tmp_path / name, {"C1": "supported"})
        info = {"host": {"cpu_model": cpu, "logical_cpus": 2}, "manifest": {"machine": {"fingerprint": fp}}}
        (tmp_path / name / "sweep.json").write_text(json.dumps(info), encoding="utf-8")
        folders.append(tmp_path / name)
    one = replication.summary(folders[:2])[1]
    assert "machines: AMD EPYC, 2 CPUs (fingerprint f1)" in one and not any("more than one" in x for x in one)
    two = replication.summary(folders)[1]
    line = next(x for x in two if x.startswith("machines:"))
    assert "Intel Xeon, 2 CPUs (fingerprint f2)" in line and "more than one" in line
