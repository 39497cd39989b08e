"""Sharded sweeps (--shard i/N), the round-robin order, per-language plans from
spec/cli.json, contention fields and the stability command, with fake executables."""

from __future__ import annotations

import io
import json
import os
import types
from collections import Counter
from pathlib import Path

import pandas as pd
import pytest

from harness_fakes import LANGS, SMALL, fakes, lines
from serverbench import cli, contract, protocol
from serverbench.analysis.claims import replication
from serverbench.harness import load_profile, make_plan
from serverbench.harness.planning.plan import schedule
from serverbench.harness.planning.profiles import ProfileError
from serverbench.harness.recording import rawlog, shards
from serverbench.harness.recording.sweep import run_sweep
from serverbench.rawdata import records, sweepfiles
from serverbench.selfcheck import stability

SHARDED = {**SMALL, "pingping.repetitions": [10, 20, 30], "spawn.processes": [10, 20], "defaults.trials": 2}


def _files(d: Path) -> dict:
    return {p.name: p.read_bytes() for p in sorted(d.iterdir()) if p.is_file()}


# --- plan and order ---------------------------------------------------------------------
def test_every_group_is_in_exactly_one_shard():
    plan = make_plan(load_profile("quick"))
    for n in (1, 2, 3, 5):
        lay = shards.assign(plan, n)
        flat = [g for gs in lay for g in gs]
        assert sorted(flat) == sorted(plan.groups()) and len(flat) == len(set(flat))
        parts = [plan.only(gs) for gs in lay]
        assert sum(len(p.tasks) for p in parts) == len(plan.tasks)
        assert sum(len(p.searches) for p in parts) == len(plan.searches)
        for p in parts:  # whole groups: every language and trial of a configuration together
            for g in {t.group_id for t in p.tasks}:
                assert [t for t in p.tasks if t.group_id == g] == [t for t in plan.tasks if t.group_id == g]
        assert shards.assign(plan, n) == lay  # deterministic


def test_round_robin_rotates_the_first_language():
    plan = make_plan(load_profile("smoke", {**SMALL, "spawn.enabled": False, "defaults.trials": 4}))
    order = schedule(plan, set(), seed=7)
    assert [(t.trial) for t in order] == [1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4]
    firsts = [order[i].language for i in range(0, 12, 3)]
    assert len(set(firsts[:3])) == 3  # each language leads a round in turn
    # resuming skips what is done and keeps the rounds
    done = {t.key for t in order[:4]}
    rest = schedule(plan, done, seed=7)
    assert len(rest) == 8 and all(t.key not in done for t in rest)


def test_a_language_runs_only_the_benchmarks_it_implements():
    prof = load_profile("smoke", {"languages": ["go", "java"], "pingping.per_language": {}})
    plan = make_plan(prof)
    have = Counter((t.benchmark, t.language) for t in plan.tasks)
    assert have[("pingping", "java")] == 1 and not any(lang == "java" and b != "pingping" for b, lang in have)
    assert {s.language for s in plan.searches} == {"go"}
    with pytest.raises(ProfileError, match="java does not implement the benchmark spawn"):
        make_plan(prof, languages=["java"], benchmarks=["spawn"])


def test_per_language_parameters():
    prof = load_profile("quick")
    plan = make_plan(prof)
    sizes = {t.params["message_bytes"] for t in plan.tasks if t.language == "java"}
    assert sizes == {5000}
    assert {t.params["message_bytes"] for t in plan.tasks if t.language == "go" and t.benchmark == "pingping"} == {
        5000,
        10000,
        50000,
    }
    # protocol 1's fixed design: the configurations claims decide at get the deciding rounds,
    # the figure-only points (pingping's smaller R) the figure-only rounds
    counts = Counter(t.config_id for t in plan.tasks if t.benchmark == "pingping")
    deciding = {c: n for c, n in counts.items() if "repetitions=100000" in c}
    figure_only = {c: n for c, n in counts.items() if "repetitions=100000" not in c}
    assert deciding and set(deciding.values()) == {protocol.rounds_deciding()}
    assert figure_only and set(figure_only.values()) == {protocol.rounds_figure_only()}


def test_also_grids_add_points_beside_the_table():
    sat_grid = {"mode": ["saturate"], "connections": [64], "bytes_per_connection": [32768], "duration_s": [2.0]}
    prof = load_profile("quick", {"echo_flood.also": [{**sat_grid, "trials": 3}]})
    plan = make_plan(prof, benchmarks=["echo_flood"])
    by_mode = Counter(t.params["mode"] for t in plan.tasks)
    sat = [t for t in plan.tasks if t.params["mode"] == "saturate"]
    servers = {t.server_language for t in sat}
    base = set(prof["echo_flood"]["options"]["server_languages"])  # the table's servers, inherited
    assert servers == base and by_mode["saturate"] == 3 * len(servers)  # the also grid's own trials
    assert {(t.params["connections"], t.params["duration_s"]) for t in sat} == {(64, 2.0)}
    flood = [t for t in plan.tasks if t.params["mode"] == "flood"]
    assert {(t.params["connections"], t.params["bytes_per_connection"]) for t in flood} == {
        (1024, 32768),
        (1024, 524288),
    }  # the overridden also list replaced quick's own
    assert by_mode["flood"] == protocol.rounds_deciding() * 2 * len(base)
    assert not {t.config_id for t in sat} & {t.config_id for t in flood}


def test_quick_gives_its_deciding_echo_configurations_the_design_rounds():
    plan = make_plan(load_profile("quick"), benchmarks=["echo_flood"])
    deciding = {"c", "go", *protocol.claim("E1")["population"], *protocol.claim("E4")["population"]}
    rounds = Counter(
        (t.params["connections"], t.params["bytes_per_connection"], t.server_language in deciding) for t in plan.tasks
    )
    n, others = len(deciding), len({t.server_language for t in plan.tasks} - deciding)
    d, f = protocol.rounds_deciding(), protocol.rounds_figure_only()
    # E3, E4 decide at 1,024 connections; E1 on the growth from 64 to 1,024 at 32 KiB, over the
    # servers of the claims' populations; the other servers are drawn at the figure-only rounds
    assert others == 3 and rounds == {
        (1024, 32768, True): d * n, (1024, 524288, True): d * n, (64, 32768, True): d * n, (64, 524288, True): f * n,
        (1024, 32768, False): f * others, (1024, 524288, False): f * others, (64, 32768, False): f * others,
        (64, 524288, False): f * others,
    }  # fmt: skip


@pytest.mark.parametrize(
    ("also", "msg"),
    [
        ({"echo_flood.also": [{"per_language": {}}]}, r"echo_flood.also\[0\] may not set per_language"),
        ({"echo_flood.also": [{"cores": [0]}]}, r"echo_flood.also\[0\].*cores"),
        ({"echo_flood.also": [{"connections": [0]}]}, r"echo_flood.also\[0\].*connections"),
        ({"echo_flood.also": {"mode": ["saturate"]}}, r"echo_flood.also must be an array of tables"),
        ({"spawn_max.also": [{"start": 10}]}, r"takes no \[\[spawn_max.also\]\] grids"),
    ],
)
def test_bad_also_grids_are_refused_naming_the_key(also, msg):
    with pytest.raises(ProfileError, match=msg):
        load_profile("quick", also)


def test_cli_refuses_a_benchmark_the_language_lacks(tmp_path):
    out, err = io.StringIO(), io.StringIO()
    code = cli.run(
        ["run", "--profile", "smoke", "--languages", "java", "--benchmarks", "throughput", "--raw-dir", str(tmp_path)],
        out,
        err,
    )
    assert code == 2 and "java" in err.getvalue() and "throughput" in err.getvalue()
    assert not any(tmp_path.iterdir())


# --- sharded sweeps -------------------------------------------------------------------------
@pytest.mark.slow
def test_two_shards_make_the_whole_sweep(tmp_path):
    full = make_plan(load_profile("smoke", SHARDED))
    d0 = run_sweep(
        "smoke", sweep_id="sh", raw_root=tmp_path, progress=False, overrides=SHARDED, commands=fakes(), shard="0/2"
    )
    d1 = run_sweep(
        "smoke", sweep_id="sh", raw_root=tmp_path, progress=False, overrides=SHARDED, commands=fakes(), shard="1/2"
    )
    assert d0 == d1
    names = set(os.listdir(d0))
    assert {
        "runs.0.jsonl",
        "runs.1.jsonl",
        "manifest.0.json",
        "manifest.1.json",
        "sessions.0.jsonl",
        "sessions.1.jsonl",
        "shards.json",
        "manifest.json",
    } <= names and "runs.jsonl" not in names
    r0 = [json.loads(x) for x in (d0 / "runs.0.jsonl").read_text().splitlines()]
    r1 = [json.loads(x) for x in (d0 / "runs.1.jsonl").read_text().splitlines()]
    assert r0 and r1
    # no comparison group split across shards
    assert not {shards_group(r) for r in r0} & {shards_group(r) for r in r1}
    recs, skipped = records.load_records(d0)
    assert not skipped
    runs = [r for r in recs if not r.get("search")]
    assert sorted((r["config_id"], r["trial"]) for r in runs) == sorted((t.config_id, t.trial) for t in full.tasks)
    man = json.loads((d0 / "manifest.1.json").read_text())
    assert man["shard"] == {"index": 1, "count": 2} and man["host"]["cpu_model"]
    # resuming a finished shard runs nothing
    before = (d0 / "runs.1.jsonl").read_bytes()
    run_sweep(
        "smoke", sweep_id="sh", raw_root=tmp_path, progress=False, overrides=SHARDED, commands=fakes(), shard="1/2"
    )
    assert (d0 / "runs.1.jsonl").read_bytes() == before
    # progress as the SLURM status sees it
    job = types.SimpleNamespace(
        profile="smoke", shards=2, sets=tuple(f"{k}={json.dumps(v)}" for k, v in SHARDED.items())
    )
    prog = shards.shard_progress(d0, job)
    assert [p.shard for p in prog] == [0, 1] and all(p.done == p.planned > 0 for p in prog)


def shards_group(rec: dict) -> str:
    return rec["config_id"].replace(f"/{rec['language']}/", "/")


@pytest.mark.parametrize(
    "arg,message",
    [
        ("3/2", "shard index must be 0..1"),
        ("0/0", "at least 1"),
        ("a/b", "must be i/N"),
        ("2", "must be i/N"),
    ],
)
def test_bad_shard_is_refused_and_nothing_written(tmp_path, arg, message):
    out, err = io.StringIO(), io.StringIO()
    code = cli.run(["run", "--profile", "smoke", "--shard", arg, "--raw-dir", str(tmp_path), "--no-progress"], out, err)
    assert code == 2 and message in err.getvalue() and err.getvalue().count("\n") == 1
    assert not any(tmp_path.iterdir())


@pytest.mark.slow
def test_shard_of_another_plan_is_refused(tmp_path):
    run_sweep(
        "smoke", sweep_id="x", raw_root=tmp_path, progress=False, overrides=SHARDED, commands=fakes(), shard="0/2"
    )
    before = _files(tmp_path / "x")
    for shard, ov, message in [
        ("1/3", SHARDED, "split into 2 shards, not 3"),
        ("1/2", {**SHARDED, "pingping.repetitions": [10]}, "another plan"),
    ]:
        with pytest.raises(ProfileError, match=message):
            run_sweep(
                "smoke", sweep_id="x", raw_root=tmp_path, progress=False, overrides=ov, commands=fakes(), shard=shard
            )
    with pytest.raises(ProfileError, match="split into 2 shards"):
        run_sweep("smoke", sweep_id="x", raw_root=tmp_path, progress=False, overrides=SHARDED, commands=fakes())
    assert _files(tmp_path / "x") == before
    # and an unsharded sweep cannot be joined by a shard
    run_sweep(
        "smoke", sweep_id="u", raw_root=tmp_path, progress=False, overrides=SMALL, commands=fakes(), languages=["go"]
    )
    with pytest.raises(ProfileError, match="without shards"):
        run_sweep(
            "smoke",
            sweep_id="u",
            raw_root=tmp_path,
            progress=False,
            overrides=SMALL,
            commands=fakes(),
            languages=["go"],
            shard="0/2",
        )


def test_mixed_cpu_models_are_visible():
    a = {"host": {"cpu_model": "A", "hostname": "n1"}}
    b = {"host": {"cpu_model": "B", "hostname": "n2"}}
    assert not records.mixes_cpu_models([a, a]) and records.mixes_cpu_models([a, b])
    assert records.cpu_models([a, b]) == {"A": ["n1"], "B": ["n2"]}


# --- contention fields ----------------------------------------------------------------------
def test_records_carry_load_and_steal(tmp_path):
    d = run_sweep(
        "smoke",
        sweep_id="c",
        raw_root=tmp_path,
        progress=False,
        overrides={**SMALL, "spawn.enabled": False},
        commands=fakes(),
        languages=["go"],
    )
    r = lines(d)[0]  # a second line is the run again when the first was interfered (test_interference.py)
    assert r["load_avg_1m_before"] >= 0 and r["load_avg_1m_after"] >= 0
    assert r["cpu_steal_s"] >= 0 and 0 <= r["steal_share"] <= 1
    assert r["minor_page_faults"] > 0 and r["major_page_faults"] >= 0
    assert records.raw_errors(r) is None
    old = {
        k: v
        for k, v in r.items()
        if k
        not in (
            "load_avg_1m_before",
            "load_avg_1m_after",
            "cpu_steal_s",
            "steal_share",
            "minor_page_faults",
            "major_page_faults",
        )
    }
    assert records.raw_errors(old) is None  # logs from before these fields still load
    assert records.raw_errors(dict(r, load_avg_1m_before=None, steal_share=None)) is None


# --- stability --------------------------------------------------------------------------------
@pytest.mark.slow
def test_stability_compares_independent_sweeps(tmp_path, monkeypatch):
    seen = []

    def fake_record(dirs):  # each repeat judged from its raw log: here, C2 differs
        seen.extend(Path(d).name for d in dirs)
        rows = [[seen[0], "m", "confirmation", True, "1", "C1", "supported"]]
        rows += [[seen[0], "m", "confirmation", True, "1", "C2", "inconclusive"]]
        rows += [[seen[1], "m", "confirmation", True, "1", "C1", "supported"]]
        rows += [[seen[1], "m", "confirmation", True, "1", "C2", "contradicted"]]
        return pd.DataFrame(rows, columns=replication.COLUMNS)

    monkeypatch.setattr(replication, "of_raw_sweeps", fake_record)
    out = []
    ov = {**SMALL, "spawn.enabled": False}
    code = stability.run_stability(
        "smoke", 2, sweep_prefix="st", overrides=ov, raw_root=tmp_path, progress=False, commands=fakes(), out=out.append
    )
    assert code == 1 and seen == ["st-r1", "st-r2"]
    text = "\n".join(out)
    assert "C1" in text and "yes" in text and "NO" in text and "1 of 2 claims agree" in text
    assert "st-r1" in text and "contradicted" in text  # one column per repeat
    seeds = [json.loads((tmp_path / s / "manifest.json").read_text())["seed"] for s in seen]
    assert seeds[0] != seeds[1]
    assert len(lines(tmp_path / "st-r1")) == len(lines(tmp_path / "st-r2")) == len(LANGS)


def test_stability_refuses_too_few_repeats(tmp_path):
    out, err = io.StringIO(), io.StringIO()
    assert cli.run(["stability", "--profile", "smoke", "--repeats", "0", "--raw-dir", str(tmp_path)], out, err) == 2
    assert "--repeats" in err.getvalue() and not any(tmp_path.iterdir())


def test_contract_lists_come_from_cli_json():
    assert "java" in contract.languages() and contract.implements("java", "pingping")
    assert not contract.implements("java", "spawn")
    assert rawlog.names(3).runs == "runs.3.jsonl" and rawlog.names(None).runs == "runs.jsonl"


# --- the max-processes search: timeouts bisected, host floor, JVM fail-fast ------------------
SEARCH_ONLY = {
    "pingping.enabled": False,
    "spawn.enabled": False,
    "throughput.enabled": False,
    "spawn_max.start": 1000,
    "spawn_max.factor": 4.0,
    "spawn_max.max_steps": 10,
    "spawn_max.refine_steps": 0,
    "spawn_max.budget_bytes": "100MiB",
    "spawn_max.timeout_s": 1.0,
    "spawn_max.host_floor_bytes": 1,
}


@pytest.mark.parametrize(
    "crash,expect_n,expect_status,established",
    [
        (
            None,
            [1000, 4000, 16000, 64000, 40000, 28000, 34000],
            ["ok"] * 3 + ["timeout"] * 2 + ["ok", "timeout"],
            False,
        ),
        ("20000", [1000, 4000, 16000, 64000, 40000, 28000], ["ok"] * 3 + ["timeout"] * 2 + ["crashed"], True),
    ],
)
@pytest.mark.slow
def test_a_timed_out_step_is_bisected(tmp_path, monkeypatch, crash, expect_n, expect_status, established):
    monkeypatch.setenv("FAKE_LIMIT", "30000")
    if crash:
        monkeypatch.setenv("FAKE_CRASH", crash)
    d = run_sweep(
        "smoke",
        sweep_id="b",
        raw_root=tmp_path,
        progress=False,
        overrides=SEARCH_ONLY,
        commands={"go": fakes(go="spawn_timeout")["go"]},
        languages=["go"],
    )
    recs = lines(d)
    assert [r["params"]["processes"] for r in recs] == expect_n
    assert [r["status"] for r in recs] == expect_status
    (outcome,) = json.loads((d / "sessions.jsonl").read_text().splitlines()[-1])["searches"]
    assert outcome["established"] is established and outcome["largest_ok"] == (28000 if not crash else 16000)


def test_search_refuses_a_step_below_the_host_floor(tmp_path, monkeypatch, capsys):
    from serverbench.harness.running import searching as search

    monkeypatch.setattr(search, "FLOOR_WAIT_S", 0.0)
    ov = {**SEARCH_ONLY, "spawn_max.host_floor_bytes": 10**15}
    d = run_sweep(
        "smoke",
        sweep_id="f",
        raw_root=tmp_path,
        progress=False,
        overrides=ov,
        commands={"go": fakes()["go"]},
        languages=["go"],
    )
    assert not (d / "runs.jsonl").read_bytes()  # nothing ran
    assert "host floor" in capsys.readouterr().err
    (outcome,) = json.loads((d / "sessions.jsonl").read_text().splitlines()[-1])["searches"]
    assert "refused" in outcome["refused"] and outcome["steps"] == 0


def test_jvm_search_steps_fail_fast():
    from serverbench.harness.running.environment import host_info
    from serverbench.harness.running.launch import Launcher

    plan = make_plan(load_profile("smoke"), languages=["scala_akka"], benchmarks=["spawn_max", "pingping"])
    lau = Launcher(sweep_id="t", host=host_info(), allowed_cpus=[0])
    step = plan.searches[0].task(1000, 0)
    argv, _ = lau.command(step)
    assert argv[0] == "java" and "-XX:+ExitOnOutOfMemoryError" in argv and "-XX:+UseParallelGC" in argv
    assert any(a.startswith("-Xlog:gc:file=") for a in argv)
    assert f"-Xmx{step.heap_mb}m" in argv and step.heap_mb == int(256 * 0.5)  # smoke: 256 MiB budget x 0.5
    argv, _ = lau.command(plan.tasks[0])  # a measured run keeps the runtime's default collector
    assert "-XX:+ExitOnOutOfMemoryError" in argv and "-XX:+UseParallelGC" not in argv


def test_gc_thrash_is_detected_from_the_log(tmp_path):
    from serverbench.harness.running import jvm

    log = tmp_path / "gc.log"
    w = jvm.GcThrashWatch(str(log))
    assert w.check() is None
    log.write_text(
        "[1.0s][info][gc] GC(1) Pause Young (Allocation Failure) 100M->20M(277M) 5.0ms\n"
        "[2.0s][info][gc] GC(2) Pause Full (Ergonomics) 246M->120M(277M) 800.0ms\n"
    )
    assert w.check() is None
    with open(log, "a") as f:
        for i in range(3):
            f.write(f"[{3 + i}.0s][info][gc] GC({3 + i}) Pause Full (Ergonomics) 246M->230M(277M) 4000.0ms\n")
        f.write("[9.0s][info][gc] GC(9) Pause Fu")  # a line still being written
    why = w.check()
    assert why and "3 consecutive full GCs" in why
    # full GCs that leave the heap full but take little of the time: a live heap, not thrash
    calm = jvm.GcThrashWatch(str(tmp_path / "calm.log"))
    (tmp_path / "calm.log").write_text(
        "".join(f"[{10 * i}.0s][info][gc] GC({i}) Pause Full (Ergonomics) 246M->230M(277M) 100.0ms\n" for i in range(5))
    )
    assert calm.check() is None


@pytest.mark.native
def test_gc_thrash_ends_the_run_as_over_memory_budget(tmp_path):
    """A fake JVM writing a thrashing GC log is ended within a second or two, classified
    over_memory_budget with the GC log's reason."""
    import sys
    import time

    from serverbench.harness.running import jvm
    from serverbench.harness.running.environment import host_info
    from serverbench.harness.running.launch import Launcher

    script = tmp_path / "java"
    script.write_text(
        "#!" + sys.executable + "\n"
        "import sys, time\n"
        "log = [a.split('=', 1)[1] for a in sys.argv if a.startswith('-Xlog:gc:file=')][0]\n"
        "with open(log, 'w') as f:\n"
        "    for i in range(3):\n"
        "        f.write(f'[{5 + 5 * i}.0s][info][gc] GC({i}) Pause Full (Ergonomics) 246M->230M(277M) 4500.0ms\\n')\n"
        "        f.flush()\n"
        "time.sleep(60)\n"
    )
    script.chmod(0o755)
    plan = make_plan(load_profile("smoke"), languages=["scala_akka"], benchmarks=["spawn_max"])
    lau = Launcher(sweep_id="t", host=host_info(), allowed_cpus=[0], commands={"scala_akka": [str(script)]})
    step = plan.searches[0].task(1000, 0)
    assert jvm.is_jvm([str(script)])
    t0 = time.monotonic()
    rec, _ = lau.run(step)
    assert time.monotonic() - t0 < 20
    assert rec["status"] == "over_memory_budget", rec["status_reason"]
    assert "consecutive full GCs" in rec["status_reason"]


def test_resuming_a_sweep_started_on_another_machine_is_refused(tmp_path):
    d = run_sweep("smoke", sweep_id="moved", raw_root=tmp_path, progress=False, overrides=SMALL, commands=fakes())
    man = json.loads((d / "manifest.json").read_text())
    man["machine"] = dict(man["machine"], fingerprint="0123456789abcdef", cpu_model="Another CPU")
    (d / "manifest.json").write_text(json.dumps(man))
    (d / sweepfiles.RAW_LOG_NAME).write_text(
        "".join(x for x in (d / sweepfiles.RAW_LOG_NAME).read_text().splitlines(True)[:2])
    )
    before = _files(d)
    with pytest.raises(ProfileError, match=r"started on another machine \(fingerprint 0123456789abcdef, Another CPU"):
        run_sweep("smoke", sweep_id="moved", raw_root=tmp_path, progress=False, overrides=SMALL, commands=fakes())
    assert _files(d) == before  # nothing written, nothing lost
