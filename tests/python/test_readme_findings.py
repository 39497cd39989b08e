"""README's findings blocks (analysis/reporting/readme.py): the quick sweeps' verdicts grouped
in the shared vocabulary, each claim with its whole sentence, a not-testable group naming its
reason, the scope of the no-flip sentence, and the claims where the quick sweeps and the
paper's scale disagree."""

from __future__ import annotations

import json

import pandas as pd

from serverbench import protocol
from serverbench.analysis.claims import replication, scale
from serverbench.analysis.reporting import readme


def _sweep(root, name, cpu, started, verdicts, why=None, profile="quick"):
    f = root / name
    f.mkdir(parents=True)
    info = {"profile": {"name": profile}, "host": {"cpu_model": cpu, "logical_cpus": 2}, "first_started_utc": started}
    (f / "sweep.json").write_text(json.dumps(info), encoding="utf-8")
    why = why or {}
    pd.DataFrame(
        {
            "id": list(verdicts),
            "verdict": list(verdicts.values()),
            "why": [why.get(k, "") for k in verdicts],
            "protocol": protocol.version(),
        }
    ).to_csv(f / "claims.csv", index=False)


def test_the_readme_groups_claims_by_the_verdict_most_sweeps_give(tmp_path):
    frozen = protocol.load()["frozen_utc"]
    for i in range(4):
        when = "2026-01-01T00:00:00Z" if i < 3 else "2099-01-01T00:00:00Z"
        cpu = "AMD EPYC" if i % 2 else "Intel(R) Xeon(R) Processor"
        _sweep(tmp_path, f"quick-2026010{i}T000000Z", cpu, when,
               {"C3": "supported", "T1": "contradicted", "C1": "supported" if i % 2 else "inconclusive",
                "C9": "not testable on this machine", "E2": "not testable on this machine"},
               why={"C9": "needs Go throughput on more than 4 cores (this machine: 2 CPUs)",
                    "E2": "the largest N every source server ran at 512 KiB is 1,024"})  # fmt: skip
    assert "2099" > frozen
    text = readme.findings_block(replication.record("quick", tmp_path), tmp_path)
    lines = {ln.split(":")[0]: ln for ln in text.splitlines() if ln.startswith("* ")}
    # grouped by the one sweep run after the freeze (the confirmation design), the earlier ones beside
    assert (
        "**C3** “Scala/Akka supports the most dormant processes” (1/1; exploratory: 3/3 supported)"
        in lines["* Supported"]
    )
    assert "**T1**" in lines["* Contradicted"] and "exploratory: 3/3 contradicted" in lines["* Contradicted"]
    # a claim's whole sentence, never cut
    assert protocol.claim("T1")["sentence"].rstrip(".") in lines["* Contradicted"]
    # the exploratory sweeps split on C1: beside the confirmation sweep's verdict, their count
    assert "**C1**" in lines["* Supported"] and "exploratory: 1/3 supported" in lines["* Supported"]
    # a not-testable claim names its reason
    nt = lines["* Not testable (the reason in brackets)"]
    assert "**C9** “Go's throughput does not scale beyond 4 cores” (machine too small;" in nt
    assert "(the profile did not run it;" in nt
    assert "4 committed `quick` sweeps" in text and "1 confirmation" in text
    assert "No claim was supported in one sweep and contradicted in another" in text
    # the words of the old vocabulary are gone
    for old in ("Hold", "Do not hold", "Undecided", "Differ between sweeps"):
        assert f"* {old}:" not in text


def test_a_claim_supported_in_quick_sweeps_and_contradicted_at_the_paper_scale_is_listed(tmp_path, monkeypatch):
    for i in range(3):
        _sweep(tmp_path, f"quick-2026010{i}T000000Z", "AMD EPYC", "2026-01-01T00:00:00Z",
               {"C1": "supported" if i else "inconclusive", "C3": "supported"})  # fmt: skip
    paper = [scale.ClaimAtScale("C1", "contradicted", [], []), scale.ClaimAtScale("C3", "supported", [], [])]
    monkeypatch.setattr(readme.paperscale, "at_scale", lambda processed_dir=None: paper)
    text = readme.findings_block(replication.record("quick", tmp_path), tmp_path)
    assert "C1: supported in 2 of 3 quick sweeps, contradicted at the paper's scale" in text
    assert "C3:" not in text.split("Where the quick sweeps")[1]
    assert "docs/dimensioning.md" in text


def test_the_disagreement_quotes_the_dimension_sweeps_ratios():
    """The numbers given for a PingPing claim are the committed dimension sweep's
    ratio_to_akka at the quick sweeps' largest R and the dimension sweep's largest."""
    import re
    from pathlib import Path

    import pytest

    from serverbench.analysis.reporting import dimension

    processed = Path(__file__).resolve().parents[2] / "data" / "processed"
    folder = dimension.latest(processed)
    if folder is None or not replication.sweeps("quick", processed):
        pytest.skip("no dimension or quick sweep committed")
    text = readme._scale_numbers("C1", processed)
    scale = pd.read_csv(folder / "dimension_scaling.csv")
    scale = scale[(scale.benchmark == "pingping")].set_index(["language", "size"])["ratio_to_akka"]
    found = re.findall(r"(\w+)/Akka per message ([\d.]+) at R = ([\d,]+), ([\d.]+) at R = ([\d,]+)", text)
    assert found, text
    for label, a, r1, b, r2 in found:
        lang = {"Erlang": "erlang", "Go": "go"}[label]
        assert float(a) == pytest.approx(scale[(lang, int(r1.replace(",", "")))], rel=0.05)
        assert float(b) == pytest.approx(scale[(lang, int(r2.replace(",", "")))], rel=0.05)
    assert folder.name in text
