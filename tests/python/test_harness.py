"""Harness tests of one run (every status, limits, affinity) and of the raw log, with small
fake executables (harness_fakes); the native-binary test is skipped when the Go build is missing."""

from __future__ import annotations

import dataclasses
import os
import signal
import time

import pytest

from harness_fakes import MODE, SMALL, fakes, launcher, lines, spec
from serverbench import contract
from serverbench.harness import host_info, last_session, run_sweep
from serverbench.harness.planning import task as task_mod
from serverbench.harness.recording import rawlog, sweep
from serverbench.harness.running import limits
from serverbench.harness.running.launch import Launcher
from serverbench.rawdata import records


# --- one run: every status ----------------------------------------------------------------
@pytest.mark.parametrize(
    "mode,status,reason",
    [
        ("ok", "ok", None),
        ("crash", "crashed", "signal 11"),
        ("exit3", "crashed", "exit code 3"),
        ("garbage", "invalid", "not JSON"),
        ("twolines", "invalid", "2 lines"),
        ("wrong_sched", "invalid", "schedulers"),
        ("wrong_params", "invalid", "params.repetitions"),
        ("fail", "invalid", "validation failed"),
        ("jvm_oom", "over_memory_budget", "java.lang.OutOfMemoryError"),
        ("go_oom", "over_memory_budget", "fatal error: out of memory"),
    ],
)
def test_each_status(mode, status, reason):
    rec, _ = launcher(mode).run(spec())
    assert records.raw_errors(rec) is None
    assert rec["status"] == status, rec
    if reason:
        assert reason in rec["status_reason"]
    else:
        assert rec["status_reason"] is None and rec["stdout_tail"] is None
        assert rec["metrics"]["messages"] == 20 and rec["runtime"]["schedulers"] == 1
    if status != "ok":
        assert rec["stdout_tail"] is not None or mode in ("wrong_sched", "fail")
    if mode == "crash":
        assert rec["signal"] == signal.SIGSEGV and rec["exit_code"] is None
        assert "about to crash" in rec["stderr_tail"]
    assert rec["user_cpu_s"] is not None and rec["wall_s"] > 0


def test_timeout_kills_the_child():
    t0 = time.monotonic()
    rec, _ = launcher("sleep").run(spec(timeout=0.5))
    assert rec["status"] == "timeout" and rec["signal"] == signal.SIGKILL
    assert 0.5 <= rec["wall_s"] < 3 and time.monotonic() - t0 < 5
    assert records.raw_errors(rec) is None


def test_failed_to_start(tmp_path):
    notexec = tmp_path / "not-executable"
    notexec.write_text("#!/bin/sh\n")
    lau = launcher("ok")
    lau.commands = {"go": [str(notexec)]}
    rec, _ = lau.run(spec())
    assert rec["status"] == "failed_to_start" and "could not start" in rec["status_reason"]
    assert records.raw_errors(rec) is None


@pytest.mark.parametrize("enforcement", ["watchdog", "cgroup"])
def test_over_memory_budget(enforcement):
    if enforcement == "cgroup" and MODE != "cgroup":
        pytest.skip("no memory cgroup on this machine")
    mode, cg, _ = limits.detect_enforcement(enforcement)
    lau = launcher("alloc", enforcement=mode, cg=cg)
    rec, _ = lau.run(spec(budget=150 * 2**20, enforcement=enforcement))
    assert rec["status"] == "over_memory_budget", rec
    assert rec["memory_enforcement"] == enforcement
    assert rec["signal"] == signal.SIGKILL
    assert records.raw_errors(rec) is None
    if enforcement == "cgroup":
        assert not [d for d in os.listdir(cg) if d.startswith(f"serverbench-{os.getpid()}-")]


def test_affinity_and_env_reach_the_child():
    lau = launcher("affinity")
    rec, _ = lau.run(spec(cores=1))
    first = sorted(os.sched_getaffinity(0))[0]
    assert rec["pinned_cpus"] == [first]
    assert f"affinity={first}" in rec["stderr_tail"]
    assert rec["env"]["GOMAXPROCS"] == "1" and rec["env"]["SERVERBENCH_CORES"] == "1"
    assert rec["status"] == "ok"


def test_real_commands_follow_spec_cli_json():
    lau = Launcher(sweep_id="t", host=host_info(), allowed_cpus=[0, 1])
    sp = spec("spawn", "erlang", {"processes": 2_000_000}, cores=2)
    sp = dataclasses.replace(sp, process_limit=task_mod.process_limit("spawn", sp.params, 1_048_576))
    argv, env = lau.command(sp)
    assert env["ERL_FLAGS"] == f"+S 2:2 +P {sp.process_limit}" and sp.process_limit > 2_000_000
    assert argv[-4:] == ["--processes", "2000000", "--variant", "fair"]
    argv, env = lau.command(spec("pingping", "scala_akka", cores=2))
    assert "-XX:ActiveProcessorCount=2" in argv and "-Xmx256m" in argv
    assert "-Dakka.actor.default-dispatcher.fork-join-executor.parallelism-max=2" in argv and env == {}


# --- real binaries --------------------------------------------------------------------------
BUILT = [lang for lang in ("go", "erlang") if contract.executable(lang).exists()]


@pytest.mark.native
@pytest.mark.skipif(not BUILT, reason="no native build (scripts/build.sh go|erlang)")
def test_real_binaries_affinity_and_schedulers(tmp_path):
    """On the real Go/Erlang programs: pinned to C CPUs, C schedulers reported, record valid."""
    ov = {
        "pingping.cores": [1, "max"],
        "spawn.enabled": False,
        "throughput.enabled": False,
        "spawn_max.enabled": False,
        "pingping.repetitions": [100],
    }
    d = run_sweep("smoke", sweep_id="real", raw_root=tmp_path, progress=False, overrides=ov, languages=BUILT)
    recs = lines(d)
    assert len(recs) == 2 * len(BUILT)
    for r in recs:
        assert r["status"] == "ok", (r["status_reason"], r["stderr_tail"])
        assert r["runtime"]["schedulers"] == r["cores"] == len(r["pinned_cpus"])
        assert r["pinned_cpus"] == sorted(os.sched_getaffinity(0))[: r["cores"]]
        if r["language"] == "go":
            assert r["env"]["GOMAXPROCS"] == str(r["cores"])
        else:
            assert r["env"]["ERL_FLAGS"].startswith(f"+S {r['cores']}:{r['cores']} +P ")
    assert last_session(d)["affinity_mismatch"] == 0


def test_raw_log_never_writes_a_bad_line(tmp_path):
    rec, _ = launcher("ok").run(spec())
    log = rawlog.RawLog(tmp_path / "runs.jsonl")
    bad = dict(rec, metrics={"elapsed_s": -1})  # a native part that breaks the schema
    written = log.append(bad)
    assert written["status"] == "invalid" and written["metrics"] is None
    assert "could not form a valid record" in written["status_reason"]
    with pytest.raises(RuntimeError, match="harness bug"):
        log.append(dict(rec, cores=0))
    log.close()
    recs, skipped = records.load_records([tmp_path / "runs.jsonl"])
    assert len(recs) == 1 and not skipped


@pytest.mark.slow
def test_torn_last_line_is_ended_not_glued(tmp_path):
    d = run_sweep(
        "smoke",
        sweep_id="t",
        raw_root=tmp_path,
        progress=False,
        overrides={**SMALL, "spawn.enabled": False},
        commands=fakes(),
        languages=["go"],
    )
    with open(d / "runs.jsonl", "ab") as f:
        f.write(b'{"schema_version":1,"swe')  # a write cut short by a crash
    torn = (d / "runs.jsonl").read_bytes()
    run_sweep(
        "smoke",
        sweep_id="t",
        raw_root=tmp_path,
        progress=False,
        overrides={**SMALL, "spawn.enabled": False, "pingping.repetitions": [10, 11]},
        commands=fakes(),
        languages=["go"],
    )
    data = (d / "runs.jsonl").read_bytes()
    assert data.startswith(torn + b"\n")
    with pytest.warns(UserWarning, match="skipped 1 bad raw line"):
        recs, skipped = records.load_records([d / "runs.jsonl"], skip_bad=True)
    assert len(recs) == 2 and len(skipped) == 1 and skipped[0][1] == 2
    assert sweep.read_lines(d / "sessions.jsonl")[-2]["repaired_torn_line"] == 2


@pytest.mark.slow
def test_unreadable_line_is_reported_and_kept(tmp_path, capsys):
    ov = {**SMALL, "spawn.enabled": False}
    d = run_sweep(
        "smoke", sweep_id="c", raw_root=tmp_path, progress=False, overrides=ov, commands=fakes(), languages="go"
    )
    runs = d / "runs.jsonl"
    good = runs.read_bytes()
    runs.write_bytes(b'{"not": "closed"\n' + good)  # corrupt line 1 (e.g. edited by hand)
    before = runs.read_bytes()
    capsys.readouterr()
    run_sweep("smoke", sweep_id="c", raw_root=tmp_path, progress=False, overrides=ov, commands=fakes(), languages="go")
    err = capsys.readouterr().err
    assert "1 unreadable line(s) (line 1)" in err
    assert runs.read_bytes() == before  # the ok run on line 2 still counts: nothing appended
    bad: list[int] = []
    assert len(sweep.read_lines(runs, bad)) == 1 and bad == [1]
