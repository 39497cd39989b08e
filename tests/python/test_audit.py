"""The audit's steps (from spec/cli.json's knobs) and its ratio table."""

import pandas as pd
import pytest

from serverbench import audit_steps
from serverbench.analysis.auditing import audit


def test_steps_are_fair_paper_and_each_knob_alone():
    s = audit_steps.steps("throughput", "go")
    assert [x.name for x in s[:2]] == ["fair", "paper"]
    singles = {x.name: x for x in s[2:]}
    assert set(singles) == {"mailbox", "server_buffer", "counting", "window"}  # send: the original copies too
    assert all(x.variant == "mixed" and len(x.knobs) == 1 for x in singles.values())
    assert singles["mailbox"].knobs == {"mailbox": "0"}
    erlang = {x.name: x for x in audit_steps.steps("pingping", "erlang")[2:]}
    assert set(erlang) == {"send", "match", "payload_build", "message_shape"}
    assert erlang["message_shape"].knobs == {"message_shape": "original"}  # the original's 4-tuples
    akka = {x.name: x for x in audit_steps.steps("spawn", "scala_akka")[2:]}
    assert set(akka) == {"timer", "dispatcher", "props"}
    assert akka["props"].knobs == {"props": "per_spawn"}  # a Props per actorOf
    assert audit_steps.step_of("mixed", {"props": "per_spawn"}, "spawn", "scala_akka") == "props"


def test_step_of_a_record():
    assert audit_steps.step_of("paper", {}, "pingping", "go") == "paper"
    assert audit_steps.step_of("mixed", {"mailbox": "100", "send": "payload"}, "pingping", "go") == "mailbox"
    assert audit_steps.step_of("mixed", {"mailbox": "1"}, "pingping", "go") == "fair"


def test_ratios_and_decomposition():
    rows = []
    for step, v in (("fair", 1.0), ("paper", 3.0), ("mailbox", 1.5), ("send", 2.0)):
        for t in range(5):
            rows.append(
                {
                    "benchmark": "pingping",
                    "language": "go",
                    "step": step,
                    "cores": 2,
                    "payload": "copy",
                    "message_bytes": 5000,
                    "repetitions": 1000,
                    "value": v * (1 + t / 100),
                    "true_value": 1.0,
                    "printed": True,
                    "trial": t,
                }
            )
    R = audit.ratios(pd.DataFrame(rows))
    paper = R[R["step"] == "paper"].iloc[0]
    assert abs(paper["ratio"] - 3.0) < 0.1 and paper["ci_lo"] <= 3.0 <= paper["ci_hi"] and paper["ci_level"] >= 0.95
    D = audit.decomposition(R).iloc[0]
    assert D["dominant_quirk"] == "send"
    assert abs(D["interaction"] - 1.0) < 0.05  # 1.5 x 2.0 = 3.0


def test_the_audit_section_names_its_sweep_and_machine():
    from serverbench import paths
    from serverbench.analysis.auditing import audit_report
    from serverbench.analysis.reading import process

    folder = paths.processed_dir() / "audit-20261123T145602Z"
    if not (folder / "runs.csv").exists():
        pytest.skip("the committed audit sweep is not processed here")
    first = audit_report.language_or_code(process.Processed(folder))[0]
    assert first.startswith("From sweep audit-20261123T145602Z (profile audit) on AMD EPYC, 2 logical CPUs")


def test_a_knob_of_one_benchmark_leaves_the_others_fair():
    """Erlang's message_shape exists for pingping only: in its step, Erlang's throughput is
    its fair throughput (before, it had none, and the throughput claims read 'not testable',
    which the audit then named as the quirk that gives the paper verdict)."""
    rows = [
        {"benchmark": b, "language": lang, "step": step, "value": 1.0}
        for b, lang, step in [
            ("pingping", "erlang", "fair"),
            ("pingping", "erlang", "message_shape"),
            ("throughput", "erlang", "fair"),
            ("throughput", "go", "fair"),
        ]
    ]
    out = audit._with_fair_as(pd.DataFrame(rows), "message_shape")
    step = out[out["step"] == "message_shape"]
    assert sorted(map(tuple, step[["benchmark", "language"]].to_numpy())) == [
        ("pingping", "erlang"),
        ("throughput", "erlang"),
        ("throughput", "go"),
    ]
    assert len(step[step["benchmark"] == "pingping"]) == 1  # its own runs, not the fair ones too


def test_the_audit_notebooks_imports_register_its_figure():
    # in a fresh interpreter, as papermill runs notebooks/audit.ipynb: no other test's import helps
    import subprocess
    import sys

    code = (
        "from serverbench.analysis.auditing import audit, audit_report\n"
        "from serverbench.analysis.plotting import figures\n"
        "from serverbench.analysis.reading import registry\nfrom serverbench.analysis.reporting import notebook\n"
        "print(sorted(f.name for f in registry.figures()))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "'audit'" in out


def test_a_report_of_another_sweep_names_the_audits_report_instead():
    from serverbench.analysis.auditing import audit_report

    class P:
        info = {"profile": "quick", "sweep_id": "quick-x"}

    (only,) = audit_report.language_or_code(P)
    assert "paper/audit/report.html" in only
