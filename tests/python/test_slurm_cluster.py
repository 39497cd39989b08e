"""A real one-node SLURM cluster (scripts/slurm-local.sh): the smoke profile submitted
as a 2-shard job array plus the dependent render job; one shard cancelled mid-run and
resubmitted; nothing lost, nothing duplicated. The cluster is stopped whatever happens.

About two minutes: the smoke sweep runs once and the notebooks once (the first render job is
cancelled as soon as it has started). A job that ends with an error fails the test at once,
with its state, exit code and log.

The sweep runs Go and Erlang only (`--set languages=...`, which the shards and the
resubmission carry): what is tested is the scheduling, the same whatever the languages, and
Scala/Akka's JVM start-ups were most of the sweep's CPU time. The JVM program through the
harness and the report of all three languages are test_notebooks_e2e.py's."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from serverbench import paths

REPO = paths.repo_root()
SCRIPT = REPO / "scripts" / "slurm-local.sh"
LANGUAGES = ["go", "erlang"]  # the sweep's (see the docstring)
WAIT_S = 900  # the whole flow's bound; a hang fails the test instead of the CI run

pytestmark = [pytest.mark.slurm, pytest.mark.timeout(WAIT_S + 300)]


def _can_run_cluster() -> str | None:
    if shutil.which("slurmctld") and shutil.which("sbatch"):
        return None
    if os.geteuid() == 0 and shutil.which("apt-get"):
        return None  # the script installs slurm-wlm
    return "SLURM is not installed and this user cannot install it (apt-get install slurm-wlm as root)"


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    why = _can_run_cluster()
    if why:
        pytest.skip(why)
    state = tmp_path_factory.mktemp("slurm")
    env = dict(os.environ, SLURM_LOCAL_DIR=str(state), SLURM_LOCAL_PORT_BASE=str(17000 + 2 * (os.getpid() % 400)))
    try:
        subprocess.run([str(SCRIPT), "start"], env=env, check=True, timeout=600)
        env["SLURM_CONF"] = str(state / "slurm.conf")
        yield env
    finally:
        subprocess.run([str(SCRIPT), "stop"], env=env, timeout=120)
        for name in ("slurmctld", "slurmd"):
            assert not (state / f"{name}.pid").exists(), f"{name} was not stopped"


def _cli(env, *argv, check=True):
    p = subprocess.run(
        [sys.executable, "-m", "serverbench", *argv], env=env, capture_output=True, text=True, timeout=120
    )
    if check and p.returncode != 0:
        raise AssertionError(f"serverbench {' '.join(argv)} exited {p.returncode}: {p.stderr}")
    return p


def _ids(out: str) -> tuple[str, str]:
    a = re.search(r"^array_job_id=(\d+)$", out, re.M)
    r = re.search(r"^render_job_id=(\d+)$", out, re.M)
    assert a and r, out
    return a.group(1), r.group(1)


def _queue(env) -> list[str]:
    p = subprocess.run(["squeue", "-h", "-r", "-o", "%i %T"], env=env, capture_output=True, text=True, timeout=30)
    return [line for line in p.stdout.splitlines() if line.strip()]


def _in_queue(env, *jobs: str) -> bool:
    return any(line.split()[0].split("_")[0] in jobs for line in _queue(env))


def _states(env, *jobs: str) -> dict[str, tuple[str, str]]:
    """{"<job>" or "<array job>_<task>": (JobState, ExitCode)} of the jobs slurmctld still
    knows: queued, running, or ended less than MinJobAge (300 s) ago."""
    out = {}
    for job in jobs:
        p = subprocess.run(["scontrol", "-o", "show", "job", job], env=env, capture_output=True, text=True, timeout=30)
        for line in p.stdout.splitlines():
            f = dict(w.split("=", 1) for w in line.split() if "=" in w)
            task = f.get("ArrayTaskId", "")
            key = f"{f['ArrayJobId']}_{task}" if task.isdigit() else f.get("JobId", "?")
            out[key] = (f.get("JobState", "?"), f.get("ExitCode", "?"))
    return out


ENDED_BADLY = {"FAILED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY", "BOOT_FAIL", "DEADLINE", "PREEMPTED"}


def _logs(sweep: Path) -> str:
    return "\n".join(
        f"--- {f.name}:\n" + "\n".join(f.read_text(errors="replace").splitlines()[-15:])
        for f in sorted((sweep / "slurm").glob("*.out"))
    )


def _wait(cond, env, what: str, deadline: float, jobs: tuple[str, ...], sweep: Path, cancelled: set[str]):
    """Poll cond every 0.2 s (shard 0 is cancelled within a fraction of a second of its first
    run: its Go and Erlang runs take about a second each); every second, fail at once when one
    of the jobs ended with an error (a shard that exits non-zero, e.g. a `run` that refuses to
    start) or was cancelled by someone else, naming its state and exit code and showing the job
    logs, instead of waiting for the deadline."""
    checked = 0.0
    while time.monotonic() < deadline:
        if cond():
            return
        if time.monotonic() - checked >= 1:
            checked = time.monotonic()
            bad = {
                k: v
                for k, v in _states(env, *jobs).items()
                if k not in cancelled and (v[0] in ENDED_BADLY | {"CANCELLED"} or v[1] not in ("0:0", "?"))
            }
            if bad:
                raise AssertionError(f"waiting for {what}: job(s) ended badly: {bad}\n{_logs(sweep)}")
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}; queue: {_queue(env)}\n{_logs(sweep)}")


def _records(sweep: Path) -> list[dict]:
    out = []
    for f in sorted(sweep.glob("runs*.jsonl")):
        out += [json.loads(line) for line in f.read_text().splitlines() if line.strip()]
    return out


def test_sharded_smoke_sweep_on_slurm(cluster, tmp_path):
    root = tmp_path / "root"
    env = dict(cluster, SERVERBENCH_ROOT=str(root), SERVERBENCH_CODE=str(REPO), SERVERBENCH_PYTHON=sys.executable)
    deadline = time.monotonic() + WAIT_S
    sweep_id = "smoke-slurm-test"
    sweep = root / "data" / "raw" / sweep_id
    cancelled: set[str] = set()

    # --allow-dirty: what is tested here is the scheduling, whatever state this checkout is
    # in (a clean tree is not needed for it; test_slurm.py shows a dirty one refused at submit)
    first = _cli(
        env,
        "slurm",
        "submit",
        "--profile",
        "smoke",
        "--sweep-id",
        sweep_id,
        "--shards",
        "2",
        "--time",
        "00:20:00",
        "--allow-dirty",
        "--no-pdf",  # the PDF is printed and checked by test_notebooks_e2e.py; here: the scheduling
        "--set",
        f"languages={json.dumps(LANGUAGES)}",  # a TOML array: see the module's docstring
        "--set",
        "defaults.trials=3",  # a shard of one trial (4 runs) once finished before its cancel took effect
    )
    array_id, render_id = _ids(first.stdout)
    jobs = (array_id, render_id)

    # Cancel shard 0 once it has recorded a run: a shard killed mid-sweep.
    shard0 = sweep / "runs.0.jsonl"
    _wait(
        lambda: shard0.exists() and shard0.read_text().count("\n") >= 1,
        env,
        "shard 0's first run",
        deadline,
        jobs,
        sweep,
        cancelled,
    )
    cancelled.add(f"{array_id}_0")
    subprocess.run(["scancel", f"{array_id}_0"], env=env, check=True, timeout=30)
    # The render job starts once the array has ended, a cancelled shard included (afterany).
    # Its report would be of half a sweep and is redrawn below: it is cancelled once started.
    _wait(
        lambda: _states(env, render_id).get(render_id, ("?",))[0] in ("RUNNING", "COMPLETING", "COMPLETED"),
        env,
        "the render job to start after the array",
        deadline,
        jobs,
        sweep,
        cancelled,
    )
    assert not _in_queue(env, array_id), _queue(env)
    cancelled.add(render_id)
    subprocess.run(["scancel", render_id], env=env, check=True, timeout=30)
    _wait(lambda: not _in_queue(env, *jobs), env, "the first render job to end", deadline, jobs, sweep, cancelled)

    status = _cli(env, "slurm", "status", sweep_id)
    assert re.search(r"shard 0: \d+/\d+ runs done, unfinished", status.stdout), status.stdout
    assert re.search(r"shard 1: (\d+)/\1 runs done, complete", status.stdout), status.stdout

    again = _cli(env, "slurm", "submit", "--sweep-id", sweep_id, "--allow-dirty")
    assert "shards 0 of 2" in again.stdout, again.stdout
    jobs = _ids(again.stdout)
    _wait(
        lambda: not _in_queue(env, *jobs),
        env,
        "the resubmitted shard and its render job",
        deadline,
        jobs,
        sweep,
        cancelled,
    )
    ended = _states(env, *jobs)
    assert all(state == ("COMPLETED", "0:0") for state in ended.values()), f"{ended}\n{_logs(sweep)}"

    # Every shard complete, as the harness counts it.
    status = _cli(env, "slurm", "status", sweep_id)
    assert status.stdout.count("complete") >= 2 and "unfinished" not in status.stdout, status.stdout

    # Both shards ran as SLURM jobs (their job logs), shard 0 twice.
    logs = sorted(p.name for p in (sweep / "slurm").glob("shard-*.out"))
    assert [n.split(".")[0] for n in logs] == ["shard-0", "shard-0", "shard-1"], logs

    # Nothing lost, nothing duplicated: every planned run is recorded ok exactly once.
    recs = _records(sweep)
    # the override reached every shard, the resubmitted one included
    assert {r["language"] for r in recs} == set(LANGUAGES), {r["language"] for r in recs}
    ok = Counter((r["config_id"], r["trial"], r["warmup"]) for r in recs if r["status"] == "ok" and not r.get("search"))
    assert ok and max(ok.values()) == 1, [k for k, v in ok.items() if v > 1]
    planned = sum(int(m) for m in re.findall(r"\d+/(\d+) runs done", status.stdout))
    done = sum(int(m) for m in re.findall(r"(\d+)/\d+ runs done", status.stdout))
    assert done == planned > 0

    # The dependent job rendered the figures and the report from the whole sweep.
    report = root / "paper" / "report.html"
    assert report.exists()
    assert len(list((sweep / "slurm").glob("render.job-*.out"))) == 2  # the cancelled one and this one
    assert sweep_id in report.read_text(encoding="utf-8")
