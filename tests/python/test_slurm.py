"""`python -m serverbench slurm`: the scripts it writes, and bad input refused before
anything is written or submitted. The real-cluster test is in test_slurm_cluster.py."""

from __future__ import annotations

import io
import json
import os
import re

import pytest

from serverbench import cli
from serverbench.slurm import batch, submit


def run_cli(*argv, env=None):
    out, err = io.StringIO(), io.StringIO()
    code = cli.run(list(argv), out, err)
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize(
    "shards, expect",
    [
        ([0], "0"),
        ([0, 1, 2], "0-2"),
        ([3, 0, 1, 5, 6], "0-1,3,5-6"),
        ([2, 2, 4], "2,4"),
    ],
)
def test_array_spec_folds_ranges(shards, expect):
    assert batch.array_spec(shards) == expect


def test_array_spec_refuses_nothing():
    with pytest.raises(ValueError):
        batch.array_spec([])


JOB = batch.SweepJob("paper-x", "paper", 4, "data/raw/paper-x", ("throughput.duration_s=60",))
RES = batch.Resources(cpus=16, mem_mb=10240, time="12:00:00", partition="big16")


def test_shard_script_asks_for_whole_nodes_and_runs_its_shard():
    text = batch.shards_script(JOB, RES, [0, 1, 3])
    lines = text.splitlines()
    assert lines[0] == "#!/bin/bash"
    for want in (
        "--array=0-1,3",
        "--exclusive",
        "--nodes=1",
        "--cpus-per-task=16",
        "--mem=10240M",
        "--partition=big16",
        "--time=12:00:00",
    ):
        assert f"#SBATCH {want}" in lines
    assert "set -euo pipefail" in lines
    run = [line for line in lines if line.startswith("exec ")]
    assert len(run) == 1
    assert '--shard "${SLURM_ARRAY_TASK_ID}/4"' in run[0]
    assert "--sweep-id paper-x" in run[0] and "--profile paper" in run[0]
    assert "--set throughput.duration_s=60" in run[0]


def test_allow_dirty_reaches_the_shards_run_only_when_asked():
    assert "--allow-dirty" not in batch.shards_script(JOB, RES, [0])
    dirty = batch.SweepJob("paper-x", "paper", 4, "data/raw/paper-x", allow_dirty=True)
    run = [line for line in batch.shards_script(dirty, RES, [0]).splitlines() if line.startswith("exec ")]
    assert run[0].endswith('--allow-dirty --shard "${SLURM_ARRAY_TASK_ID}/4" --no-progress'), run
    assert "--allow-dirty" not in batch.render_script(dirty, RES)  # rendering records nothing


def test_no_pdf_reaches_the_render_job_only_when_asked():
    assert "--no-pdf" not in batch.render_script(JOB, RES)
    job = batch.SweepJob("paper-x", "paper", 4, "data/raw/paper-x", no_pdf=True)
    assert batch.render_script(job, RES).rstrip().endswith("--sweep-id paper-x --no-pdf")
    assert "--no-pdf" not in batch.shards_script(job, RES, [0])


def test_scripts_hold_no_machine_path():
    for text in (batch.shards_script(JOB, RES, [0]), batch.render_script(JOB, RES)):
        assert not re.search(r"(^|[\s=\"'])/(work|home|root|tmp)\b", text), text


def test_render_script_renders_the_sweep_without_running():
    text = batch.render_script(JOB, RES)
    assert 'run_all.sh" --no-run --profile paper --sweep-id paper-x' in text
    assert "--exclusive" not in text  # rendering needs no whole node


def test_needed_resources_come_from_the_profile():
    prof = {
        "name": "p",
        "pingping": {"cores": [1, 2], "memory_budget_bytes": 1 << 30},
        "spawn_max": {"cores": ["max"], "budget_bytes": 8 << 30},
        "seed": 1,
    }
    cores, mem_mb = submit.needed_resources(prof)
    assert cores == 2
    assert mem_mb == 8 * 1024 + submit.HEADROOM_MB


@pytest.fixture
def no_slurm(monkeypatch, tmp_path):
    """A PATH without any SLURM client, and data in a temporary folder."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    monkeypatch.setenv("PATH", str(bindir))
    monkeypatch.setenv("SERVERBENCH_ROOT", str(tmp_path / "root"))
    return tmp_path / "root"


def test_missing_sbatch_names_the_package(no_slurm):
    code, out, err = run_cli("slurm", "submit", "--profile", "smoke")
    assert code == 2
    assert "sbatch not found" in err and "slurm-client" in err
    assert not (no_slurm / "data").exists()  # nothing written


@pytest.mark.parametrize(
    "argv, needle",
    [
        (["--shards", "0", "--dry-run", "--cores-per-node", "2"], "--shards must be at least 1"),
        (["--time", "soon", "--dry-run", "--cores-per-node", "2"], "--time 'soon'"),
        (["--dry-run"], "needs --cores-per-node"),
        (["--dry-run", "--cores-per-node", "0"], "--cores-per-node must be at least 1"),
        (["--profile", "nosuch", "--dry-run", "--cores-per-node", "2"], "nosuch"),
    ],
)
def test_bad_submit_input_exits_2_and_writes_nothing(no_slurm, argv, needle):
    code, out, err = run_cli("slurm", "submit", *argv)
    assert code == 2, (out, err)
    assert needle in err
    assert len(err.strip().splitlines()) == 1
    assert not (no_slurm / "data").exists()


def test_dry_run_prints_both_scripts_and_writes_nothing(no_slurm):
    code, out, err = run_cli(
        "slurm",
        "submit",
        "--profile",
        "paper",
        "--partition",
        "big16",
        "--cores-per-node",
        "16",
        "--time",
        "2-00:00:00",
        "--dry-run",
    )
    assert code == 0, err
    assert "#SBATCH --cpus-per-task=16" in out and "#SBATCH --partition=big16" in out
    assert "#SBATCH --time=2-00:00:00" in out
    assert "--dependency=afterany" in out
    assert not (no_slurm / "data").exists()


def test_submit_refuses_a_dirty_tree_before_submitting_anything(no_slurm, monkeypatch):
    """Each shard's `run` would refuse it (exit 2) once the job started: say so now instead."""
    from serverbench.harness.running import environment

    calls = no_slurm.parent / "calls"
    for client in ("sbatch", "squeue", "sinfo"):
        exe = no_slurm.parent / "bin" / client
        exe.write_text(f'#!/bin/sh\necho "{client} $*" >> "{calls}"\nexit 1\n')
        exe.chmod(0o755)
    monkeypatch.setattr(environment, "git_info", lambda: {"commit": "0" * 40, "dirty": True})
    code, out, err = run_cli("slurm", "submit", "--profile", "smoke")
    assert code == 2, (out, err)
    assert "--allow-dirty" in err and len(err.strip().splitlines()) == 1
    assert not calls.exists() and not (no_slurm / "data").exists()  # no client asked, nothing written
    # with --allow-dirty it goes on to ask the cluster (here: a client that fails)
    code, out, err = run_cli("slurm", "submit", "--profile", "smoke", "--allow-dirty")
    assert code == 2 and "sinfo failed" in err, err
    assert calls.read_text().startswith("sinfo")


def test_status_of_an_unknown_sweep_is_a_usage_error(no_slurm):
    code, out, err = run_cli("slurm", "status", "never-submitted")
    assert code == 2
    assert "no SLURM submission recorded" in err


def test_resubmission_keeps_the_first_profile(no_slurm):
    d = no_slurm / "data" / "raw" / "s1" / "slurm"
    d.mkdir(parents=True)
    (d / submit.SUBMISSIONS).write_text(
        json.dumps(
            {
                "sweep_id": "s1",
                "profile": "smoke",
                "shards": 2,
                "sets": [],
                "submitted_shards": [0, 1],
                "array_job_id": "7",
                "render_job_id": "8",
            }
        )
        + "\n"
    )
    before = sorted(os.listdir(d))
    code, out, err = run_cli(
        "slurm", "submit", "--sweep-id", "s1", "--profile", "quick", "--dry-run", "--cores-per-node", "2"
    )
    assert code == 2 and "profile 'smoke', not 'quick'" in err
    code, out, err = run_cli(
        "slurm", "submit", "--sweep-id", "s1", "--shards", "3", "--dry-run", "--cores-per-node", "2"
    )
    assert code == 2 and "re-split" in err
    assert sorted(os.listdir(d)) == before
