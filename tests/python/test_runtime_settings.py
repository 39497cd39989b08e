"""Runtime settings (spec/cli.json languages.<lang>.settings): Go's garbage collector with
Green Tea on and off. The harness picks the build, names the run go[gc=nogreentea] in its
config id and in the analysis, and checks the record's runtime.gc against what it asked."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from serverbench import contract, protocol
from serverbench.analysis.reading import process
from serverbench.harness import ProfileError, load_profile, run_sweep
from serverbench.harness.planning.plan import make_plan
from serverbench.rawdata import records

BOTH = {"go": {"gc": ["greentea", "nogreentea"]}}


def test_executable_follows_the_setting():
    assert contract.executable("go").name == "serverbench"
    assert contract.executable("go", {"gc": "greentea"}).name == "serverbench"
    assert contract.executable("go", {"gc": "nogreentea"}).name == "serverbench-nogreenteagc"
    with pytest.raises(ValueError, match="erlang has no runtime setting 'gc'"):
        contract.check_settings("erlang", {"gc": "greentea"})
    with pytest.raises(ValueError, match="'off' is not one of greentea, nogreentea"):
        contract.check_settings("go", {"gc": "off"})


def test_settings_mismatch():
    rec = {"runtime": {"name": "go", "gc": "greentea"}}
    assert contract.settings_mismatch("go", {}, rec) is None
    assert contract.settings_mismatch("go", {"gc": "greentea"}, rec) is None
    assert "asked for gc=nogreentea" in contract.settings_mismatch("go", {"gc": "nogreentea"}, rec)
    # a default build that runs without Green Tea (a stray GOEXPERIMENT) is caught too
    assert "asked for gc=greentea" in contract.settings_mismatch("go", {}, {"runtime": {"gc": "nogreentea"}})
    # a record that reports no gc: only a mismatch when a gc was asked for
    assert contract.settings_mismatch("go", {}, {"runtime": {}}) is None
    assert contract.settings_mismatch("go", {"gc": "nogreentea"}, {"runtime": {}}) is not None
    assert contract.settings_mismatch("erlang", {}, {"runtime": {}}) is None


def test_plan_sweeps_the_setting_beside_other_languages():
    prof = load_profile("smoke", {"languages": ["go", "erlang"], "defaults.settings": BOTH})
    plan = make_plan(prof, benchmarks=["pingping"], machine=2)
    by_cfg: dict[str, set] = {}
    for t in plan.tasks:
        by_cfg.setdefault(t.group_id, set()).add(
            (t.language, json.dumps(dict(t.settings), sort_keys=True), t.config_id)
        )
    for members in by_cfg.values():
        ids = sorted(m[2] for m in members)
        assert {(m[0], m[1]) for m in members} == {
            ("go", '{"gc": "greentea"}'),
            ("go", '{"gc": "nogreentea"}'),
            ("erlang", "{}"),
        }
        # Green Tea on is Go's default: the same configuration as a run that chose nothing
        assert any("/go[gc=nogreentea]/" in i for i in ids) and any("/go/" in i for i in ids)
        assert any("/erlang/" in i for i in ids)


@pytest.mark.parametrize(
    "bad, message",
    [
        ({"go": {"gc": ["off"]}}, "'off' is not one of greentea, nogreentea"),
        ({"erlang": {"gc": ["greentea"]}}, "erlang has no runtime setting 'gc'"),
        ({"cobol": {"gc": ["greentea"]}}, "unknown language 'cobol'"),
        ({"go": {"gc": []}}, "settings.go.gc is empty"),
    ],
)
def test_bad_settings_are_refused(bad, message):
    with pytest.raises(ProfileError, match=message):
        load_profile("smoke", {"defaults.settings": bad})


def test_analysis_names_the_build():
    assert contract.language_key("go", {"gc": "nogreentea"}) == "go[gc=nogreentea]"
    assert contract.language_key("go", {"gc": "greentea"}) == "go"  # the default: plain go
    assert contract.language_key("go", {}) == "go"
    assert process.LANGUAGE_LABELS["go[gc=nogreentea]"] == "Go, Green Tea GC off"
    flat = records.flatten(
        [{"language": "go", "settings": {"gc": "nogreentea"}}, {"language": "go"}, {"language": "erlang"}]
    )
    named = [
        contract.language_key(lang, {"gc": gc} if isinstance(gc, str) else {})
        for lang, gc in zip(flat["language"], flat["settings.gc"], strict=True)
    ]
    assert named == ["go[gc=nogreentea]", "go", "erlang"]


@pytest.mark.native
def test_a_sweep_runs_both_builds_and_records_which_gc_ran(tmp_path: Path):
    for value in ("greentea", "nogreentea"):
        exe = contract.executable("go", {"gc": value})
        if not exe.exists():
            pytest.skip(f"{exe.name} is not built (scripts/build.sh go)")
    sweep = run_sweep(
        "smoke",
        overrides={
            "languages": ["go"],
            "defaults.settings": BOTH,
            "defaults.trials": 1,
            "pingping.message_bytes": [64],
            "pingping.repetitions": [100],
            "spawn.processes": [100],
        },
        benchmarks=["pingping", "spawn"],
        raw_root=tmp_path,
        progress=False,
    )
    recs = [json.loads(line) for line in (sweep / "runs.jsonl").read_text().splitlines()]
    assert recs and all(r["status"] == "ok" for r in recs), [r["status_reason"] for r in recs]
    for r in recs:
        assert r["runtime"]["gc"] == r["settings"]["gc"]
        assert f"/{contract.language_key('go', r['settings'])}/" in r["config_id"]
    assert {r["settings"]["gc"] for r in recs} == {"greentea", "nogreentea"}
    runs = process.runs_table(records.flatten(recs))
    assert set(runs["language"]) == {"go", "go[gc=nogreentea]"}


def test_heap_grow_leaves_out_the_initial_heap(tmp_path: Path):
    """scala_akka's heap setting (claim C5 as the paper ran it): grow drops -Xms, so the JVM
    starts at its default initial heap; -Xmx (the budget) stays. fixed is the default."""
    from serverbench.harness.running.launch import Launcher

    lau = Launcher(sweep_id="t", host={}, allowed_cpus=[0], tmpdir=str(tmp_path))
    prof = load_profile("quick")
    plan = make_plan(prof, benchmarks=["spawn"], languages=["scala_akka"], machine=2)
    grow = next(t for t in plan.tasks if t.settings == {"heap": "grow"})
    fixed = next(t for t in plan.tasks if not t.settings and t.params["processes"] == grow.params["processes"])
    argv_grow, _ = lau.command(grow)
    argv_fixed, _ = lau.command(fixed)
    assert f"-Xms{fixed.heap_mb}m" in argv_fixed and f"-Xmx{fixed.heap_mb}m" in argv_fixed
    assert not any(a.startswith("-Xms") for a in argv_grow) and f"-Xmx{grow.heap_mb}m" in argv_grow
    assert [a for a in argv_fixed if not a.startswith("-Xms")] == argv_grow
    assert grow.config_id.startswith("spawn/scala_akka[heap=grow]/")
    assert contract.settings_mismatch("scala_akka", {"heap": "grow"}, {"runtime": {"heap": "fixed"}}) is not None
    assert contract.settings_mismatch("scala_akka", {}, {"runtime": {"heap": "fixed"}}) is None


def test_an_also_grid_may_run_only_some_languages():
    prof = load_profile("quick")
    plan = make_plan(prof, benchmarks=["spawn"], machine=2)
    grow = {(t.language, t.params["processes"]) for t in plan.tasks if t.settings}
    assert grow == {("scala_akka", n) for n in (10000, 20000)}
    # Erlang and Go run the main grid and the figure-only grid: no configuration twice
    runs = [(t.config_id, t.trial) for t in plan.tasks if t.language in ("erlang", "go")]
    assert len(runs) == len(set(runs)) == 2 * (3 * protocol.rounds_deciding() + 4 * protocol.rounds_figure_only())
    with pytest.raises(ProfileError, match=r"spawn.also\[0\].languages: java not among spawn's languages"):
        load_profile(
            "quick", {"spawn.languages": ["go", "erlang"], "spawn.also": [{"languages": ["java"], "processes": [10]}]}
        )
    with pytest.raises(ProfileError, match="unknown language 'cobol'"):
        load_profile("quick", {"spawn.also": [{"languages": ["cobol"]}]})


def test_an_also_grid_may_name_its_own_core_counts():
    """runtimes: the full pairs grid on 2 cores, one point on 1 core (the runtimes profile's budget)."""
    over = {
        "throughput.languages": ["go", "erlang"],
        "throughput.cores": [2],
        "throughput.pairs": [1, 2, 64],
        "throughput.also": [{"cores": [1, 4], "pairs": [1]}],
        "throughput.skip_unavailable_cores": True,
    }
    plan = make_plan(load_profile("quick", over), benchmarks=["throughput"], machine=2)
    points = {(t.language, t.cores, t.params["pairs"]) for t in plan.tasks}
    assert points == {(lang, 2, p) for lang in ("go", "erlang") for p in (1, 2, 64)} | {
        (lang, 1, 1) for lang in ("go", "erlang")
    }
    runs = [(t.config_id, t.trial) for t in plan.tasks]
    assert len(runs) == len(set(runs)) == 4 * 2 * protocol.rounds_deciding()  # the 1-core grid not also on 2
    assert [r["cores"] for r in plan.not_runnable if r["benchmark"] == "throughput"] == [4]
    # 4 cores without skip_unavailable_cores is refused, naming the grid
    over["throughput.skip_unavailable_cores"] = False
    with pytest.raises(ProfileError, match=r"throughput.also\[0\].cores: 4 cores asked"):
        make_plan(load_profile("quick", over), benchmarks=["throughput"], machine=2)
