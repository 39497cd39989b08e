"""The audit's steps (from spec/cli.json's knobs) and its ratio table."""

import pandas as pd
import pytest

from serverbench.analysis.auditing import audit
from serverbench.harness.planning import audit_steps


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


def test_the_audit_figure_is_the_reports_whatever_was_imported_first():
    # in a fresh interpreter, nothing registers by import order: the report's registry has the
    # audit figure, the benchmark packages' (registry.load()) does not
    import subprocess
    import sys

    code = (
        "from serverbench.analysis.plotting import figures\n"
        "from serverbench.analysis.reporting import sections\n"
        "print(sorted(f.name for f in figures.ordered()))\n"
        "print(sorted(f.name for f in figures.ordered(sections.analysis())))"
    )
    plugins, report = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.splitlines()
    assert "'audit'" not in plugins and "'audit'" in report


def test_a_report_of_another_sweep_names_the_audits_report_instead():
    from serverbench.analysis.auditing import audit_report

    class P:
        info = {"profile": "quick", "sweep_id": "quick-x"}

    (only,) = audit_report.language_or_code(P)
    assert "paper/audit/report.html" in only


def _throughput_rows(step: str, value, true_value: float, printed: bool, n: int = 5) -> list[dict]:
    return [
        {
            "benchmark": "throughput",
            "language": "scala_akka",
            "step": step,
            "cores": 2,
            "payload": "copy",
            "message_bytes": 500,
            "duration_s": 1.0,
            "pairs": 8,
            "value": value,
            "true_value": true_value * (1 + t / 100),
            "printed": printed,
            "trial": t,
        }
        for t in range(n)
    ]


def test_a_step_that_printed_nothing_gets_the_ratio_of_what_it_measured():
    """Akka's paper variant loses the exit race in every run: no reported value, so the
    ratio of reported values is nan; the row then gives the measured values' ratio, says so,
    and a step with some printed values keeps the reported ratio."""
    import numpy as np

    runs = pd.DataFrame(
        _throughput_rows("fair", 100.0, 100.0, True)
        + _throughput_rows("paper", np.nan, 50.0, False)
        + _throughput_rows("dispatcher", 70.0, 70.0, True)
    )
    R = audit.ratios(runs).set_index("step")
    assert R.loc["paper", "basis"] == "measured: printed nothing in 5 of 5"
    assert abs(R.loc["paper", "ratio"] - 0.5) < 0.02
    assert R.loc["paper", "ci_lo"] <= R.loc["paper", "ratio"] <= R.loc["paper", "ci_hi"]
    assert R.loc["paper", "ci_level"] >= 0.95 and R.loc["paper", "not_printed"] == 5
    assert R.loc["dispatcher", "basis"] == "reported"
    D = audit.decomposition(audit.ratios(runs)).iloc[0]
    assert abs(D["paper_ratio"] - 0.5) < 0.02 and D["paper_basis"].startswith("measured")


def test_the_committed_audits_akka_throughput_row_prints_a_ratio():
    """The committed audit sweep's Scala/Akka throughput row printed 'nan [nan, nan] @0%'."""
    from serverbench import paths
    from serverbench.analysis.auditing import audit_report
    from serverbench.analysis.reading import process

    sweep = "audit-20261125T062105Z"
    raw, folder = paths.raw_dir() / sweep, paths.processed_dir() / sweep
    if not (raw / "runs.jsonl").exists() or not (folder / "runs.csv").exists():
        pytest.skip("the committed audit sweep is not here")
    D = audit.decomposition(audit.ratios(audit.load_runs(raw)))
    row = D[(D["benchmark"] == "throughput") & (D["language"] == "scala_akka")].iloc[0]
    assert row["paper_lo"] <= row["paper_ratio"] <= row["paper_hi"] and row["paper_level"] > 0.9
    assert (
        row["paper_basis"] == "measured: printed nothing in 5 of 5"
    )  # 5 rounds; a re-run interfered attempt does not count
    blocks = audit_report.language_or_code(process.Processed(folder))
    table = next(b for b in blocks if isinstance(b, pd.DataFrame) and "paper_fair" in b.columns)
    akka = table[(table["benchmark"] == "throughput") & (table["language"] == "scala_akka")].iloc[0]
    assert "nan" not in akka["paper_fair"]
    assert "printed nothing in 5 of 5" in akka["paper_fair"]  # a re-run interfered attempt does not count


def test_the_committed_audits_claims_under_both_variants_carry_their_numbers():
    """The claims side by side judge each variant's runs paired by round, as every claim is
    judged: the view of one variant dropped the round, so every comparison was unclear with
    no ratio (C1 read "2 unclear" under fair and paper), which the report's audit section
    printed."""
    from serverbench import paths
    from serverbench.analysis.reading import process

    folder = paths.processed_dir() / "audit-20261125T062105Z"
    if not (folder / "runs.csv").exists():
        pytest.skip("the committed audit sweep is not here")
    C = audit.claims_side_by_side(process.Processed(folder)).set_index("id")
    for variant in ("fair", "paper"):
        numbers = C.loc["C1", f"{variant}_numbers"]
        assert "Go/Scala/Akka time" in numbers and " [" in numbers and "%" in numbers, (variant, numbers)


def test_the_audit_figure_names_the_sweep_it_shows():
    """A quick report draws the newest audit sweep's figure (audit.audit_runs), so the figure
    itself names that sweep."""
    import matplotlib.pyplot as plt

    from serverbench import paths
    from serverbench.analysis.auditing import audit_figures
    from serverbench.analysis.reading import process

    sweep = "audit-20261125T062105Z"
    folder = paths.processed_dir() / sweep
    if not (paths.raw_dir() / sweep / "runs.jsonl").exists() or not (folder / "runs.csv").exists():
        pytest.skip("the committed audit sweep is not here")
    fig = audit_figures.audit_figure(process.Processed(folder))
    try:
        assert fig._suptitle.get_text().endswith(f"sweep {sweep}")
    finally:
        plt.close(fig)


def test_an_interfered_run_and_its_rerun_count_once_as_the_rerun(tmp_path):
    """The harness re-runs an ok run flagged `interfered`; the later attempt is the one every
    table uses (docs/protocol.md). Kept twice, a round appears twice and a paired ratio
    (the gap's attribution) cannot pair it: the spawn gap piece printed n/a there."""
    from serverbench.analysis.reading import synthetic

    def rec(trial, value, started, interfered=False):
        r = synthetic.raw_record(
            "spawn", "go", {"processes": 10000}, {"all_ready_s": value}, cores=2, trial=trial, started_utc=started
        )
        r["interfered"] = interfered
        return r

    lines = [
        rec(1, 1.0, "2026-11-29T10:00:00Z"),
        rec(2, 9.0, "2026-11-29T10:01:00Z", interfered=True),
        rec(2, 2.0, "2026-11-29T10:01:10Z"),
        rec(3, 3.0, "2026-11-29T10:02:00Z"),
    ]
    synthetic.write_sweep(tmp_path, lines)
    runs = audit.load_runs(tmp_path)
    assert sorted(runs["trial"]) == [1, 2, 3]
    assert runs.set_index("trial").loc[2, "value"] == pytest.approx(2.0)


def test_a_corrupt_raw_line_is_named_not_skipped(tmp_path):
    """The audit reads a sweep as the processed tables do: a half-written or hand-edited
    line stops it with the file and line named, instead of leaving a run out unseen (which
    would change a paired ratio without a word)."""
    from serverbench.analysis.reading import synthetic
    from serverbench.rawdata import records

    recs = [
        synthetic.raw_record("spawn", "go", {"processes": 10000}, {"all_ready_s": 1.0 + t}, trial=t) for t in range(3)
    ]
    synthetic.write_sweep(tmp_path, recs)
    assert len(audit.load_runs(tmp_path)) == 3
    with open(tmp_path / "runs.jsonl", "a", encoding="utf-8") as f:
        f.write('{"benchmark": "spawn", "status": "ok", "metr\n')
    with pytest.raises(records.RawLogError, match=r"runs\.jsonl:4:"):
        audit.load_runs(tmp_path)
