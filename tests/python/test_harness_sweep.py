"""Harness tests of whole sweeps with fake executables: statuses, resume, order, searches,
interruption, and what the raw log, manifest and sessions hold."""

from __future__ import annotations

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

from harness_fakes import FAKE, LANGS, SMALL, fake, fakes, lines
from serverbench import paths
from serverbench.harness import last_session, latest_sweep, run_sweep
from serverbench.harness.recording import sweep
from serverbench.rawdata import records


# --- sweeps ---------------------------------------------------------------------------------
@pytest.mark.slow
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


@pytest.mark.slow
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


@pytest.mark.slow
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


@pytest.mark.slow
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


@pytest.mark.slow
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


@pytest.mark.slow
def test_not_runnable_core_counts_in_manifest(tmp_path):
    ov = {**SMALL, "spawn.enabled": False, "pingping.cores": [1, 4096], "pingping.skip_unavailable_cores": True}
    d = run_sweep("smoke", sweep_id="nr", raw_root=tmp_path, progress=False, overrides=ov, commands=fakes())
    man = json.loads((d / "manifest.json").read_text())
    assert {"benchmark": "pingping", "cores": 4096} in [
        {k: x[k] for k in ("benchmark", "cores")} for x in man["not_runnable"]
    ]
    assert {r["cores"] for r in lines(d)} == {1}


@pytest.mark.slow
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


@pytest.mark.slow
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


@pytest.mark.slow
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


@pytest.mark.slow
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


def test_notebooks_runs_its_sweep_with_runs_own_options(fake_run_sweep, monkeypatch):
    """`notebooks` without --no-run calls run's function with typed options (no argv built
    and parsed again): the same run_sweep call `run` makes for those options."""
    import io

    from serverbench import cli
    from serverbench.analysis.reporting import pipeline
    from serverbench.harness import cli as harness_cli

    def no_notebooks(**kw):
        raise FileNotFoundError("stop after the run")

    monkeypatch.setattr(pipeline, "run_notebooks", no_notebooks)
    argv = ["notebooks", "--profile", "smoke", "--sweep-id", "nb-1", "--languages", "go", "--allow-dirty"]
    assert cli.run(argv, stdout=io.StringIO(), stderr=io.StringIO()) == 2  # the run, then the stub's error
    opts = harness_cli.RunOptions(profile="smoke", sweep_id="nb-1", languages="go", progress=False, allow_dirty=True)
    assert fake_run_sweep == [{k: v for k, v in harness_cli.run_request(opts).items() if k != "profile"}]
    assert fake_run_sweep[0]["progress"] is False and fake_run_sweep[0]["languages"] == "go"
    run_argv = ["run", "--profile", "smoke", "--sweep-id", "nb-1", "--languages", "go", "--no-progress"]
    assert cli.run([*run_argv, "--allow-dirty"], stdout=io.StringIO(), stderr=io.StringIO()) == 0
    assert fake_run_sweep[1] == fake_run_sweep[0]  # exactly what `run` does for the same options
