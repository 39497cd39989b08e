"""Interference measured per run (harness/running/interference.py): other processes' CPU time on
the run's CPUs, preemptions, the interfered flag and its one re-run, the harness moved
off the benchmark's CPUs."""

from __future__ import annotations

import os

import pytest

from harness_fakes import SMALL, fakes, lines
from serverbench.harness.recording.sweep import run_sweep
from serverbench.harness.running import interference
from serverbench.harness.running.environment import CLK_TCK
from serverbench.rawdata import records


def test_other_cpu_time_is_the_cpus_busy_time_minus_the_runs_own():
    rec = {"wall_s": 2.0, "user_cpu_s": 0.6, "system_cpu_s": 0.2, "steal_share": 0.0}
    quiet = interference.fields(0, int(0.9 * CLK_TCK), [1], rec)  # 0.9 s busy, 0.8 s its own
    assert quiet["other_cpu_s"] == pytest.approx(0.1, abs=1.0 / CLK_TCK)
    assert quiet["other_cpu_share"] == pytest.approx(0.05, abs=0.01) and quiet["interfered"] is False
    busy = interference.fields(0, int(1.4 * CLK_TCK), [1], rec)  # another process took 0.6 s of 2 s
    assert busy["other_cpu_share"] == pytest.approx(0.3, abs=0.01) and busy["interfered"] is True
    stolen = interference.fields(0, int(0.8 * CLK_TCK), [1], {**rec, "steal_share": 0.2})
    assert stolen["interfered"] is True
    assert interference.fields(None, None, [1], {**rec, "steal_share": None})["interfered"] is None


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="needs a second CPU to move the harness to")
def test_the_harness_leaves_the_benchmarks_cpu_during_a_run():
    allowed = sorted(os.sched_getaffinity(0))
    before = os.sched_getaffinity(0)
    with interference.harness_off([allowed[0]], allowed) as off:
        assert off == allowed[1:] and sorted(os.sched_getaffinity(0)) == allowed[1:]
    assert os.sched_getaffinity(0) == before
    with interference.harness_off(allowed, allowed) as off:  # the run uses every CPU: stay
        assert off is None and os.sched_getaffinity(0) == before


def test_every_process_run_records_its_interference(tmp_path):
    d = run_sweep(
        "smoke",
        sweep_id="i",
        raw_root=tmp_path,
        progress=False,
        overrides={**SMALL, "spawn.enabled": False},
        commands=fakes(),
        languages=["go"],
    )
    (r,) = lines(d)  # smoke: one record per task, even when it was interfered
    assert r["involuntary_context_switches"] >= 0 and r["other_cpu_s"] >= 0 and 0 <= r["other_cpu_share"] <= 1
    assert isinstance(r["interfered"], bool) and records.raw_errors(r) is None


def test_an_interfered_run_is_run_once_more_and_the_later_one_counts(tmp_path, monkeypatch):
    calls = []

    def always(busy_before, busy_after, cpus, rec):
        calls.append(1)
        return {"other_cpu_s": 1.0, "other_cpu_share": 0.5, "interfered": True}

    monkeypatch.setattr(interference, "fields", always)
    d = run_sweep(
        "smoke",
        sweep_id="j",
        raw_root=tmp_path,
        progress=False,
        overrides={**SMALL, "spawn.enabled": False, "rerun_interfered": True},  # smoke itself does not
        commands=fakes(),
        languages=["go"],
    )
    rs = lines(d)
    assert len(rs) == 2 and len(calls) == 2  # once more, not again and again
    assert rs[1]["rerun_of_interfered"] is True and rs[1]["trial"] == rs[0]["trial"]
    assert records.duplicate_runs(rs) == []  # a deliberate re-run is not a duplicate


def test_smoke_keeps_one_record_per_task_and_a_bad_setting_is_named(monkeypatch):
    from serverbench.harness import load_profile
    from serverbench.harness.planning.profiles import ProfileError

    assert load_profile("smoke")["rerun_interfered"] is False
    assert load_profile("quick")["rerun_interfered"] is True
    with pytest.raises(ProfileError, match="rerun_interfered must be true or false"):
        load_profile("smoke", {"rerun_interfered": "sometimes"})


def test_the_report_names_each_cause_of_contention_and_the_repeats():
    import pandas as pd

    from serverbench.analysis.reporting import contention

    class P:
        info = {"logical_cpus": 2}
        runs = pd.DataFrame(
            {
                "table": ["pingping"] * 5,
                "language": ["go"] * 5,
                "warmup": [False] * 5,
                "is_ok": [True] * 5,
                "load_avg_1m_before": [0.1] * 5,
                "steal_share": [0.0, 0.2, 0.3, 0.0, 0.0],
                "other_cpu_share": [0.5, 0.0, 0.0, 0.0, 0.0],
                "interfered": [True, True, True, False, False],
                "selected": [False, True, False, True, True],  # two flagged runs were repeated
            }
        )

    note = contention.contention_note(P)
    assert "**3 of 5 runs were taken under contention**" in note
    assert "1 because other processes on this machine" in note and "2 only because the hypervisor" in note
    assert "2 flagged run(s) were run once more" in note
