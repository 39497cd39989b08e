"""Harness tests with small fake executables (tests/python/fakes/fake_serverbench.py).

Every test writes into tmp_path; fakes sleep briefly; the native-binary test at the end
is skipped when the Go build is missing."""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections import Counter
from pathlib import Path

import pytest

from serverbench import cli, contract, paths, records
from serverbench.harness import (
    ProfileError,
    host_info,
    last_session,
    latest_sweep,
    limits,
    load_profile,
    profiles,
    rawlog,
    run_sweep,
    sweep,
)
from serverbench.harness import task as task_mod
from serverbench.harness.launch import Launcher
from serverbench.harness.task import Task

FAKE = str(Path(__file__).parent / "fakes" / "fake_serverbench.py")
LANGS = ("erlang", "go", "scala_akka")
MODE, _, _ = limits.detect_enforcement("auto")


def fake(mode="ok", lang="go"):
    return [sys.executable, FAKE, f"mode={mode}", f"lang={lang}"]


def fakes(**modes):
    return {lang: fake(modes.get(lang, "ok"), lang) for lang in LANGS}


def lines(sweep_dir):
    return [json.loads(x) for x in (Path(sweep_dir) / records.RAW_LOG_NAME).read_text().splitlines()]


def spec(bench="pingping", lang="go", params=None, cores=1, timeout=10.0, budget=512 * 2**20, enforcement="auto"):
    params = {**contract.param_defaults(bench), **(params or {"message_bytes": 100, "repetitions": 10})}
    return Task(
        bench,
        lang,
        "fair",
        params,
        cores,
        task_mod.config_id(bench, lang, "fair", cores, params),
        task_mod.group_id(bench, "fair", cores, params),
        timeout_s=timeout,
        memory_budget_bytes=budget,
        heap_mb=256,
        memory_enforcement=enforcement,
    )


def launcher(mode, lang="go", enforcement=None, cg=None):
    if enforcement is None:
        enforcement, cg, _ = limits.detect_enforcement("auto")
    return Launcher(
        sweep_id="t",
        host=host_info(),
        allowed_cpus=sorted(os.sched_getaffinity(0)),
        commands={lang: fake(mode, lang)},
        enforcement=enforcement,
        cgroup_parent=cg,
    )


SMALL = {  # a tiny sweep: 3 languages x (1 pingping + 1 spawn) = 6 runs, 1 trial each
    "pingping.message_bytes": [100],
    "pingping.repetitions": [10],
    "spawn.processes": [10],
    "throughput.enabled": False,
    "spawn_max.enabled": False,
}


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


# --- sweeps ---------------------------------------------------------------------------------
def test_sweep_records_every_status_and_goes_on(tmp_path):
    d = run_sweep(
        "smoke",
        sweep_id="mix",
        raw_root=tmp_path,
        progress=False,
        overrides={**SMALL, "defaults.timeout_s": 1.0},
        commands=fakes(go="crash", scala_akka="sleep"),
    )
    recs = lines(d)
    assert len(recs) == 6
    by_lang = {lang: Counter(r["status"] for r in recs if r["language"] == lang) for lang in LANGS}
    assert by_lang == {"erlang": {"ok": 2}, "go": {"crashed": 2}, "scala_akka": {"timeout": 2}}
    assert all(records.raw_errors(r) is None for r in recs)
    man = json.loads((d / "manifest.json").read_text())
    assert man["profile"]["name"] == "smoke" and man["seed"] == 1
    assert man["resolved_profile"]["pingping"]["repetitions"] == [10]
    assert set(man["runtime_versions"]) == set(LANGS) and "commit" in man["git"]
    end = last_session(d)
    assert end["status_counts"] == {"ok": 2, "crashed": 2, "timeout": 2} and not end["interrupted"]
    assert end["harness_overhead_s"]["n"] == 6


def test_raw_log_manifest_and_sessions_hold_no_machine_paths(tmp_path):
    root = str(Path(paths.__file__).resolve().parents[3])
    d = run_sweep(
        "smoke",
        sweep_id="mp",
        raw_root=tmp_path,
        progress=False,
        overrides={**SMALL, "spawn.enabled": False},
        commands=fakes(),
    )
    for name in ("runs.jsonl", "manifest.json", "sessions.jsonl"):
        assert root + "/" not in (d / name).read_text(), name
    assert {r["command"][1] for r in lines(d)} == {"tests/python/fakes/fake_serverbench.py"}
    man = json.loads((d / "manifest.json").read_text())
    assert man["profile"]["source"] == "src/python/serverbench/profiles/smoke.toml"


def test_portable_paths():
    root = str(Path(paths.__file__).resolve().parents[3])
    assert paths.portable({"a": [root + "/src/go/bin/x", root]}) == {"a": ["src/go/bin/x", "."]}
    # another checkout of the package (a sweep run in a clone), inside a longer string too
    assert paths.portable("['/tmp/clone/src/c/bin/serverbench-c', 'x']") == "['src/c/bin/serverbench-c', 'x']"
    assert paths.portable("-Dconfig.file=/tmp/clone/src/scala/a.conf") == "-Dconfig.file=src/scala/a.conf"
    # paths that are not the package's stay as given
    for other in ("/usr/src/linux/Makefile", "/tmp/raw", "/usr/lib/jvm/java-17/bin/java", "1/8"):
        assert paths.portable(other) == other


def test_resume_retries_failures_and_skips_ok(tmp_path):
    state = tmp_path / "flaky-state"
    os.environ["FAKE_STATE"] = str(state)
    try:
        cmds = fakes(go="flaky")
        ov = {**SMALL, "spawn.enabled": False}
        d = run_sweep("smoke", sweep_id="r", raw_root=tmp_path, progress=False, overrides=ov, commands=cmds)
        first = (d / "runs.jsonl").read_bytes()
        assert Counter(r["status"] for r in lines(d)) == {"ok": 2, "crashed": 1}
        run_sweep("smoke", sweep_id="r", raw_root=tmp_path, progress=False, overrides=ov, commands=cmds)
        after = (d / "runs.jsonl").read_bytes()
        assert after.startswith(first)  # nothing already written changed
        recs = lines(d)
        assert len(recs) == 4 and recs[-1]["language"] == "go" and recs[-1]["status"] == "ok"
        run_sweep("smoke", sweep_id="r", raw_root=tmp_path, progress=False, overrides=ov, commands=cmds)
        assert (d / "runs.jsonl").read_bytes() == after  # all ok: nothing to do
        starts = [s for s in sweep.read_lines(d / "sessions.jsonl") if s["event"] == "start"]
        assert [s["session"] for s in starts] == [1, 2, 3]
    finally:
        del os.environ["FAKE_STATE"]


def test_benchmark_subsets_share_one_sweep(tmp_path):
    d = run_sweep(
        "smoke",
        sweep_id="nb",
        raw_root=tmp_path,
        progress=False,
        overrides=SMALL,
        commands=fakes(),
        benchmarks=["pingping"],
        languages="go,erlang",
    )
    manifest = (d / "manifest.json").read_bytes()
    run_sweep(
        "smoke",
        sweep_id="nb",
        raw_root=tmp_path,
        progress=False,
        overrides=SMALL,
        commands=fakes(),
        benchmarks=["spawn"],
    )
    recs = lines(d)
    assert Counter(r["benchmark"] for r in recs) == {"pingping": 2, "spawn": 3}
    assert (d / "manifest.json").read_bytes() == manifest
    assert latest_sweep(raw_root=tmp_path) == d and latest_sweep("quick", raw_root=tmp_path) is None


def test_warmup_trials_and_order(tmp_path):
    ov = {**SMALL, "spawn.enabled": False, "defaults.trials": 3, "defaults.warmup": True}
    d = run_sweep("smoke", sweep_id="w", raw_root=tmp_path, progress=False, overrides=ov, commands=fakes())
    recs = lines(d)
    assert len(recs) == 12
    for lang in LANGS:
        mine = [r for r in recs if r["language"] == lang]
        assert mine[0]["warmup"] is True and mine[0]["trial"] == 0  # warm-up first
        assert sorted(r["trial"] for r in mine if not r["warmup"]) == [1, 2, 3]
    # round-robin: trial k of every language before trial k+1, the first language rotating
    trials = [(r["trial"], r["language"]) for r in recs if not r["warmup"]]
    assert [t for t, _ in trials] == [1, 1, 1, 2, 2, 2, 3, 3, 3]
    firsts = [trials[i][1] for i in (0, 3, 6)]
    assert len(set(firsts)) == 3
    start = sweep.read_lines(d / "sessions.jsonl")[0]
    assert len(start["order"]) == 12 and start["seed"] == 1


def test_not_runnable_core_counts_in_manifest(tmp_path):
    ov = {**SMALL, "spawn.enabled": False, "pingping.cores": [1, 4096], "pingping.skip_unavailable_cores": True}
    d = run_sweep("smoke", sweep_id="nr", raw_root=tmp_path, progress=False, overrides=ov, commands=fakes())
    man = json.loads((d / "manifest.json").read_text())
    assert {"benchmark": "pingping", "cores": 4096} in [
        {k: x[k] for k in ("benchmark", "cores")} for x in man["not_runnable"]
    ]
    assert {r["cores"] for r in lines(d)} == {1}


def test_max_processes_search(tmp_path):
    os.environ["FAKE_LIMIT"] = "30000"
    try:
        ov = {
            "pingping.enabled": False,
            "spawn.enabled": False,
            "throughput.enabled": False,
            "spawn_max.start": 1000,
            "spawn_max.factor": 4.0,
            "spawn_max.max_steps": 10,
            "spawn_max.refine_steps": 2,
            "spawn_max.budget_bytes": "100MiB",
        }
        cmds = {"go": fake("system_limit", "go")}
        d = run_sweep(
            "smoke", sweep_id="s", raw_root=tmp_path, progress=False, overrides=ov, commands=cmds, languages=["go"]
        )
        recs = lines(d)
        ns = [r["params"]["processes"] for r in recs]
        assert ns == [1000, 4000, 16000, 64000, 40000, 28000]
        assert [r["search"]["step"] for r in recs] == list(range(6))
        assert all(
            r["search"] == {"name": "max_processes", "step": r["search"]["step"], "budget_bytes": 100 * 2**20}
            for r in recs
        )
        assert [r["status"] for r in recs] == ["ok", "ok", "ok", "crashed", "crashed", "ok"]
        assert "system_limit" in recs[3]["status_reason"]
        assert all(r["benchmark"] == "spawn" and r["memory_budget_bytes"] == 100 * 2**20 for r in recs)
        before = (d / "runs.jsonl").read_bytes()
        run_sweep(
            "smoke", sweep_id="s", raw_root=tmp_path, progress=False, overrides=ov, commands=cmds, languages=["go"]
        )
        assert (d / "runs.jsonl").read_bytes() == before  # a finished search is not run again
    finally:
        del os.environ["FAKE_LIMIT"]


def test_search_stops_at_memory_budget(tmp_path):
    os.environ["FAKE_BYTES_PER_PROCESS"] = "2000"
    try:
        ov = {
            "pingping.enabled": False,
            "spawn.enabled": False,
            "throughput.enabled": False,
            "spawn_max.start": 10000,
            "spawn_max.factor": 4.0,
            "spawn_max.budget_bytes": "150MiB",
            "spawn_max.max_steps": 5,
        }
        d = run_sweep(
            "smoke",
            sweep_id="sm",
            raw_root=tmp_path,
            progress=False,
            overrides=ov,
            commands={"go": fake("spawn_alloc", "go")},
            languages=["go"],
        )
        recs = lines(d)
        assert [r["params"]["processes"] for r in recs] == [10000, 40000, 160000]
        assert [r["status"] for r in recs] == ["ok", "ok", "over_memory_budget"]
    finally:
        del os.environ["FAKE_BYTES_PER_PROCESS"]


KILL_SCRIPT = textwrap.dedent("""
    import sys
    from serverbench.harness import run_sweep
    F, root, langs = sys.argv[1], sys.argv[2], sys.argv[3].split(",")
    cmds = {l: [sys.executable, F, "mode=slow", f"lang={l}"] for l in langs}
    ov = {"pingping.message_bytes": [100], "pingping.repetitions": [10, 20], "spawn.enabled": False,
          "throughput.enabled": False, "spawn_max.enabled": False, "defaults.trials": 2}
    try:
        run_sweep("smoke", sweep_id="k", raw_root=root, progress=False, overrides=ov, commands=cmds, languages=langs)
    except KeyboardInterrupt:
        sys.exit(130)
""")


def _start_killable(tmp_path, sleep="0.3", langs="go,erlang"):
    script = tmp_path / "k.py"
    script.write_text(KILL_SCRIPT)
    env = dict(os.environ, FAKE_SLEEP=sleep)
    return subprocess.Popen(
        [sys.executable, str(script), FAKE, str(tmp_path), langs],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        # a test run started in the background inherits SIGINT ignored (POSIX shells do that for `&`),
        # and Python then leaves it ignored: give the harness the disposition a terminal gives it
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )


def _wait_lines(path, n, timeout=30):
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        if path.exists() and path.read_bytes().count(b"\n") >= n:
            return
        time.sleep(0.02)
    raise AssertionError(f"{path} never reached {n} lines")


def test_killed_sweep_resumes_without_duplicates(tmp_path):
    p = _start_killable(tmp_path)
    runs = tmp_path / "k" / "runs.jsonl"
    _wait_lines(runs, 3)
    p.kill()  # SIGKILL: no clean-up at all
    p.wait()
    time.sleep(0.2)
    before = runs.read_bytes()
    n_before = before.count(b"\n")
    assert 3 <= n_before < 8
    p = _start_killable(tmp_path, sleep="0.01")
    assert p.wait(timeout=60) == 0, p.stderr.read()
    after = runs.read_bytes()
    assert after.startswith(before)
    recs = lines(tmp_path / "k")
    keys = [(r["config_id"], r["trial"]) for r in recs]
    assert len(keys) == len(set(keys)) == 8  # 2 languages x 2 R x 2 trials, none lost or doubled


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])  # Ctrl-C, and scancel's SIGTERM
def test_ctrl_c_stops_cleanly(tmp_path, sig):
    p = _start_killable(tmp_path, sleep="30", langs="go")
    runs = tmp_path / "k" / "runs.jsonl"
    t0 = time.monotonic()
    child = None
    while time.monotonic() - t0 < 90 and child is None:  # wait until the fake runs (slow when loaded)
        out = subprocess.run(["pgrep", "-P", str(p.pid)], capture_output=True, text=True).stdout.split()
        for pid in out:
            try:
                if (
                    b"mode=slow\x00" in Path(f"/proc/{pid}/cmdline").read_bytes()
                    and b"pingping" in Path(f"/proc/{pid}/cmdline").read_bytes()
                ):
                    child = int(pid)
            except OSError:
                pass
        time.sleep(0.05)
    assert child is not None
    p.send_signal(sig)
    assert p.wait(timeout=60) == 130  # generous: a loaded CI machine is slow to reap
    assert not runs.exists() or runs.read_bytes() == b""  # the interrupted run left no line
    time.sleep(0.1)
    assert not Path(f"/proc/{child}").exists() or "zombie" in Path(f"/proc/{child}/status").read_text()
    end = sweep.read_lines(tmp_path / "k" / "sessions.jsonl")[-1]
    assert end["event"] == "end" and end["interrupted"] is True


# --- profiles and bad input -----------------------------------------------------------------
def test_profiles_load_and_overrides():
    for name in ("smoke", "quick", "paper"):
        prof = load_profile(name)
        assert prof["name"] == name
        assert all(prof[b]["enabled"] for b in ("pingping", "spawn", "spawn_max", "throughput"))
    paper = load_profile("paper")
    assert paper["defaults"]["trials"] == 7 and paper["throughput"]["duration_s"] == [60.0]
    assert paper["pingping"]["repetitions"] == [1000, 10000, 100000, 500000, 1000000]
    assert paper["throughput"]["pairs"] == [1, 2, 4, 6, 8, 16, 32, 64, 128]
    assert paper["spawn_max"]["budget_bytes"] == 8 * 2**30
    quick = load_profile("quick")
    assert quick["spawn"]["processes"] == [1000, 10000, 20000, 25000, 50000, 75000, 100000]
    assert quick["pingping"]["message_bytes"] == [5000, 10000, 50000]
    ov = profiles.parse_set(
        [
            "pingping.repetitions=[1000,10000]",
            "defaults.trials=5",
            "throughput.payload=share",
            'spawn_max.budget_bytes="1GiB"',
        ]
    )
    prof = load_profile("quick", ov)
    assert prof["pingping"]["repetitions"] == [1000, 10000] and prof["pingping"]["trials"] == 5
    assert prof["throughput"]["payload"] == ["share"] and prof["spawn_max"]["budget_bytes"] == 2**30
    assert load_profile("quick", {"pingping": {"repetitions": 7}})["pingping"]["repetitions"] == [7]


def test_profile_from_a_path(tmp_path):
    p = tmp_path / "mine.toml"
    p.write_text((Path(paths.profiles_dir()) / "smoke.toml").read_text().replace('name = "smoke"', 'name = "mine"'))
    assert load_profile(str(p))["name"] == "mine"


@pytest.mark.parametrize(
    "kwargs,message",
    [
        ({"languages": ["cobol"]}, "unknown language 'cobol'"),
        ({"benchmarks": ["pong"]}, "unknown benchmark 'pong'"),
        ({"overrides": {"pingping.repetitions": [0]}}, "not a positive size"),
        ({"overrides": {"pingping.message_bytes": [-5]}}, "not a positive size"),
        ({"overrides": {"pingping.cores": [4096]}}, "--oversubscribe"),
        ({"overrides": {"pingping.nonsense": 1}}, "unknown setting"),
        ({"overrides": {"variant": "imaginary"}}, "not built"),
        ({"overrides": {"spawn_max.budget_bytes": 10**15}}, "MemAvailable"),
        ({"profile": "nosuch"}, "unknown profile"),
    ],
)
def test_bad_input_is_refused_before_running(tmp_path, kwargs, message):
    kwargs = dict(kwargs)
    prof = kwargs.pop("profile", "smoke")
    with pytest.raises(ProfileError, match=message.replace("(", r"\(")):
        run_sweep(prof, raw_root=tmp_path, progress=False, commands=fakes(), **kwargs)
    assert not any(tmp_path.iterdir())


def test_missing_executable_names_the_build_command(tmp_path, monkeypatch):
    monkeypatch.setattr(contract, "executable", lambda lang: tmp_path / "missing" / lang)
    with pytest.raises(ProfileError, match="scripts/build.sh erlang"):
        run_sweep("smoke", raw_root=tmp_path, progress=False, languages=["erlang"])


def test_oversubscribe_runs_more_cores_than_cpus(tmp_path):
    c = len(os.sched_getaffinity(0)) + 1
    ov = {**SMALL, "spawn.enabled": False, "pingping.cores": [c]}
    d = run_sweep(
        "smoke",
        sweep_id="o",
        raw_root=tmp_path,
        progress=False,
        overrides=ov,
        commands=fakes(),
        oversubscribe=True,
        languages=["go"],
    )
    (r,) = lines(d)
    assert r["cores"] == c and r["status"] == "ok" and r["pinned_cpus"] == sorted(os.sched_getaffinity(0))


def test_cli_run_and_profiles(tmp_path):
    out, err = _Buf(), _Buf()
    code = cli.run(["run", "--profile", "smoke", "--languages", "cobol", "--raw-dir", str(tmp_path)], out, err)
    assert code == 2 and "error: unknown language 'cobol'" in err.text
    out, err = _Buf(), _Buf()
    code = cli.run(
        ["run", "--profile", "smoke", "--set", "pingping.repetitions=[0]", "--raw-dir", str(tmp_path)], out, err
    )
    assert code == 2 and "positive" in err.text
    out, err = _Buf(), _Buf()
    assert cli.run(["profiles"], out, err) == 0
    assert all(name in out.text for name in ("smoke", "quick", "paper")) and "runs" in out.text


class _Buf:
    def __init__(self):
        self.text = ""

    def write(self, s):
        self.text += s

    def flush(self):
        pass


def test_overhead_per_run_is_small(tmp_path):
    ov = {**SMALL, "defaults.trials": 5, "spawn.enabled": False}
    d = run_sweep(
        "smoke",
        sweep_id="oh",
        raw_root=tmp_path,
        progress=False,
        overrides=ov,
        commands=fakes(),
        languages=["go", "erlang"],
    )
    oh = last_session(d)["harness_overhead_s"]
    assert oh["n"] == 10
    assert oh["median"] < 0.05, oh  # the target


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
