"""Harness tests of profiles, overrides, bad input and the run/profiles command line."""

from __future__ import annotations

import dataclasses
import io
import json
import os
from pathlib import Path

import pytest

import im_fakes
from harness_fakes import SMALL, fakes, lines
from serverbench import cli, contract, paths, protocol
from serverbench.harness import ProfileError, last_session, load_profile, run_sweep
from serverbench.harness.planning import profiles


# --- profiles and bad input -----------------------------------------------------------------
def test_profiles_load_and_overrides():
    for name in ("smoke", "quick", "paper"):
        prof = load_profile(name)
        assert prof["name"] == name
        assert all(prof[b]["enabled"] for b in ("pingping", "spawn", "spawn_max", "throughput"))
    paper = load_profile("paper")
    assert paper["throughput"]["duration_s"] == [60.0]  # the paper's own grid, deciding and figure-only together
    also = lambda b, k: sorted(paper[b][k] + [x for a in paper[b]["also"] for x in a.get(k, [])])  # noqa: E731
    assert also("pingping", "repetitions") == [1000, 10000, 100000, 500000, 1000000]
    assert also("throughput", "pairs") == [1, 2, 4, 6, 8, 16, 32, 64, 128]
    assert paper["pingping"]["repetitions"] == [1000000] and paper["pingping"]["trials"] == protocol.rounds_deciding()
    assert paper["spawn_max"]["budget_bytes"] == 8 * 2**30
    quick = load_profile("quick")
    assert quick["spawn"]["processes"] == [10000, 20000, 100000]  # where C4, C4b and C5 decide
    assert sorted(quick["spawn"]["processes"] + quick["spawn"]["also"][0]["processes"]) == [
        1000,
        10000,
        20000,
        25000,
        50000,
        75000,
        100000,
    ]  # with the figure-only also-grid: the paper's seven N
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


@pytest.mark.slow
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
    out, err = io.StringIO(), io.StringIO()
    code = cli.run(["run", "--profile", "smoke", "--languages", "cobol", "--raw-dir", str(tmp_path)], out, err)
    assert code == 2 and "error: unknown language 'cobol'" in err.getvalue()
    out, err = io.StringIO(), io.StringIO()
    code = cli.run(
        ["run", "--profile", "smoke", "--set", "pingping.repetitions=[0]", "--raw-dir", str(tmp_path)], out, err
    )
    assert code == 2 and "positive" in err.getvalue()
    out, err = io.StringIO(), io.StringIO()
    assert cli.run(["profiles"], out, err) == 0
    assert all(name in out.getvalue() for name in ("smoke", "quick", "paper")) and "runs" in out.getvalue()


def test_profiles_needs_names_clients_and_servers():
    """run_all.sh builds what `profiles --needs` prints: the socket servers too, nothing else."""
    out, err = io.StringIO(), io.StringIO()
    assert cli.run(["profiles", "--needs", "quick"], out, err) == 0
    quick = out.getvalue().strip().split(",")
    assert {"go", "erlang", "scala_akka", "c", "nodejs", "twisted", "python_threads"} <= set(quick)
    assert not {"rust_tokio", "scala_pekko", "java_vthreads"} & set(quick)
    out = io.StringIO()
    assert cli.run(["profiles", "--needs", "runtimes"], out, err) == 0
    assert "java_vthreads" in out.getvalue() and "nodejs" not in out.getvalue()
    assert (
        cli.run(["profiles", "--needs", "nope"], io.StringIO(), err) == 2 and "unknown profile 'nope'" in err.getvalue()
    )


def test_profiles_needs_of_a_piece_names_only_what_the_piece_runs():
    """`./run_all.sh --piece` builds what the piece runs: the IM chaos piece runs the generator
    and Erlang's server only, where the whole profile runs every IM server."""
    out, err = io.StringIO(), io.StringIO()
    assert cli.run(["profiles", "--needs", "im", "--piece", "chaos"], out, err) == 0, err.getvalue()
    assert set(out.getvalue().strip().split(",")) == {"im_loadgen", "erlang"}
    out = io.StringIO()
    assert cli.run(["profiles", "--needs", "im"], out, err) == 0
    assert {"go", "scala_akka", "rust_tokio", "ngircd"} <= set(out.getvalue().strip().split(","))
    err = io.StringIO()
    assert cli.run(["profiles", "--needs", "im", "--piece", "nope"], io.StringIO(), err) == 2
    assert "no piece 'nope'" in err.getvalue() and "chaos" in err.getvalue()
    err = io.StringIO()
    assert cli.run(["profiles", "--piece", "chaos"], io.StringIO(), err) == 2 and "--needs" in err.getvalue()


@pytest.mark.slow
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


# --- the run order's seed: drawn per sweep unless given -------------------------------------
MORE = {**SMALL, "spawn.enabled": False, "pingping.message_bytes": [100, 200, 300, 400, 500, 600]}


def _unseeded_smoke(tmp_path) -> Path:
    """The smoke profile without its fixed seed (the measurement profiles have none)."""
    text = (paths.profiles_dir() / "smoke.toml").read_text()
    p = tmp_path / "unseeded.toml"
    p.write_text("\n".join(x for x in text.splitlines() if not x.startswith("seed")) + "\n")
    assert load_profile(p)["seed"] is None
    return p


def _manifest(d) -> dict:
    return json.loads((Path(d) / "manifest.json").read_text())


def _start(d) -> dict:
    """The last session's start record (seed and order)."""
    starts = [json.loads(x) for x in (Path(d) / "sessions.jsonl").read_text().splitlines()]
    return [s for s in starts if s.get("event") == "start"][-1]


def test_measurement_profiles_fix_no_seed():
    for name in ("quick", "paper"):
        assert load_profile(name)["seed"] is None
    assert load_profile("quick", {"seed": 5})["seed"] == 5
    with pytest.raises(ProfileError):
        load_profile("quick", {"seed": -1})


@pytest.mark.slow
def test_sweeps_without_a_seed_draw_and_record_their_own(tmp_path):
    prof = _unseeded_smoke(tmp_path)
    kw = dict(raw_root=tmp_path / "raw", progress=False, overrides=MORE, commands=fakes(), languages=["go"])
    a, b = (run_sweep(prof, sweep_id=s, **kw) for s in ("a", "b"))
    sa, sb = _manifest(a)["seed"], _manifest(b)["seed"]
    assert isinstance(sa, int) and isinstance(sb, int) and sa != sb
    assert _start(a)["seed"] == sa and _manifest(a)["resolved_profile"]["seed"] == sa
    # a resumed sweep keeps the order its manifest recorded
    run_sweep(prof, sweep_id="a", **{**kw, "overrides": {**MORE, "defaults.trials": 2}})
    assert _start(a)["seed"] == sa and _start(a)["already_ok"] == 6 and len(_start(a)["order"]) == 6


@pytest.mark.slow
def test_the_same_seed_gives_the_same_order(tmp_path, monkeypatch):
    from serverbench.harness.recording import sweep

    real = sweep.run_sweep
    monkeypatch.setattr(sweep, "run_sweep", lambda *a, **k: real(*a, **{**k, "commands": fakes()}))
    prof = str(_unseeded_smoke(tmp_path))
    base = ["run", "--profile", prof, "--raw-dir", str(tmp_path / "raw"), "--no-progress", "--languages", "go"]
    base += [f"--set={k}={json.dumps(v)}" for k, v in MORE.items()]
    runs = [["--seed", "7", "--sweep-id", "s1"], ["--set", "seed=7", "--sweep-id", "s2"], ["--sweep-id", "s3"]]
    for extra in runs:
        out, err = io.StringIO(), io.StringIO()
        assert cli.run(base + extra, out, err) == 0, err.getvalue()
    raw = tmp_path / "raw"
    assert _manifest(raw / "s1")["seed"] == _manifest(raw / "s2")["seed"] == 7
    orders = [[x[0] for x in _start(raw / s)["order"]] for s in ("s1", "s2", "s3")]
    assert orders[0] == orders[1] and len(orders[0]) == 6
    assert sorted(orders[2]) == sorted(orders[0])


def test_schedule_depends_on_the_seed_only():
    from serverbench.harness.planning.plan import make_plan, schedule

    plan = make_plan(load_profile("smoke", MORE), languages=["go", "erlang"])
    keys = lambda seed: [t.key for t in schedule(plan, set(), seed)]  # noqa: E731
    assert keys(3) == keys(3)
    assert len({tuple(keys(s)) for s in range(5)}) > 1  # 6 groups: 720 orders per round


def test_a_second_stage_table_is_an_unknown_key(tmp_path):
    """The adaptive second stage is gone (protocol 1: a fixed number of rounds): a profile
    that still has a [second_stage] table, or a --set of one of its keys, is refused as any
    unknown key is."""
    from serverbench.harness.planning.profiles import ProfileError, load_profile

    assert "second_stage" not in load_profile("quick")
    old = tmp_path / "old.toml"
    old.write_text('name = "old"\n[second_stage]\nrounds = 3\n', encoding="utf-8")
    with pytest.raises(ProfileError, match="unknown top-level key 'second_stage'"):
        load_profile(str(old))
    with pytest.raises(ProfileError, match="unknown setting 'second_stage.rounds'"):
        load_profile("quick", {"second_stage.rounds": 5})


def test_the_search_is_declared_by_its_benchmark_not_named_by_the_harness():
    """[spawn_max] is spawn's: its package declares the search (benchmarks/spawn/search.py)
    and the process limit its runs need (limits.py); the harness finds both by asking."""
    from serverbench.benchmarks.spawn import limits as spawn_limits
    from serverbench.benchmarks.spawn import search as spawn_search
    from serverbench.harness.planning import search
    from serverbench.harness.planning.task import process_limit

    assert set(search.declared()) == {spawn_search.TABLE, "im_rate"}  # spawn's and IM's rate search
    d = search.declared()[spawn_search.TABLE]
    assert (d.benchmark, d.table, d.name, d.param) == ("spawn", spawn_search.TABLE, spawn_search.NAME, "processes")
    assert d.defaults["start"] == spawn_search.DEFAULTS["start"] and d.defaults["factor"] == 2.0
    assert profiles.table_names().index(d.table) == profiles.table_names().index("spawn") + 1
    prof = load_profile("smoke", {"spawn_max.start": 50})
    assert prof[d.table]["start"] == 50 and prof[d.table]["memory_budget_bytes"] == prof[d.table]["budget_bytes"]
    n = 10_000_000
    assert process_limit("spawn", {"processes": n}, 1_048_576) == spawn_limits.process_limit({"processes": n}, 1)
    assert process_limit("spawn", {"processes": n}, 1_048_576) == n + n // 10
    assert process_limit("pingping", {"processes": n}, 1_048_576) == 1_048_576


def test_a_resolved_profile_is_a_frozen_value():
    """Nothing can change a profile another caller holds: item assignment and attribute
    assignment are refused, a read is a fresh copy, a new seed is a new profile."""
    import dataclasses

    prof = load_profile("smoke")
    with pytest.raises(TypeError):
        prof["seed"] = 7  # type: ignore[index]
    with pytest.raises(dataclasses.FrozenInstanceError):
        prof.seed = 7  # type: ignore[misc]
    table = prof["pingping"]
    table["trials"] = 999
    table["repetitions"].append(1)
    assert prof["pingping"]["trials"] != 999 and 1 not in prof["pingping"]["repetitions"]
    seeded = prof.with_seed(42)
    assert seeded.seed == 42 and seeded["seed"] == 42 and prof.seed == 1  # smoke's own
    recorded = prof.as_dict()
    assert list(recorded) == list(prof) and recorded["pingping"] == prof["pingping"]
    assert json.loads(json.dumps(recorded)) == recorded  # what a sweep writes is plain JSON


@pytest.mark.parametrize(
    "options,message",
    [
        ('server_languges = ["go"]', "im.options: unknown option server_languges; known: server_languages,"),
        ('server_languages = ["go", "cobol"]', "unknown language 'cobol'"),
        ('placements = ["beside"]', "im.options.placements: 'beside' is not one of split, shared"),
        ('server_settings = { ngircd = { nodelay = ["sometimes"] } }', "im.options.server_settings: .*sometimes"),
        ('server_settings = { ngircd = { tcp = ["on"] } }', "im.options.server_settings: .*tcp"),
        ('original_buffer_pairs = ["go-go"]', "im.options.original_buffer_pairs: 'go-go' is not client/server"),
        ('original_buffer_pairs = ["go/cobol"]', "unknown language 'cobol'"),
    ],
)
def test_a_socket_tables_options_are_checked_when_it_is_planned(tmp_path, options, message):
    """A misspelt option, an unknown server, placement, server setting or original-buffer
    pair in a socket table stops the plan naming it (it once passed silently into every
    task's group id; a misnamed pair ran nothing)."""
    from serverbench.harness.planning.plan import make_plan

    good = 'options = { server_languages = ["go", "ngircd"], placements = ["split"] }'
    text = im_fakes.tiny_grid("imtiny", ("go", "ngircd"))
    assert good in text  # the control: the tiny profile as written plans
    p = tmp_path / "imtiny.toml"
    p.write_text(text, encoding="utf-8")
    assert {t.server_language for t in make_plan(load_profile(str(p)), machine=2).tasks} == {"go", "ngircd"}
    p.write_text(text.replace(good, f"options = {{ {options} }}"), encoding="utf-8")
    with pytest.raises(ProfileError, match=message):
        make_plan(load_profile(str(p)), machine=2)


def test_a_task_is_a_frozen_value():
    """A task's mappings are read-only all the way down, so no stage changes the task another
    holds; the plan still expands a frozen table (ngIRCd as shipped and with nodelay on), and
    what a record keeps is plain JSON."""
    from serverbench.harness.planning.plan import make_plan

    tasks = make_plan(load_profile("im"), oversubscribe=True, machine=64).tasks
    ngircd = [t for t in tasks if t.server_language == "ngircd"]
    assert {t.options.server_settings.get("nodelay") for t in ngircd} == {None, "on"}
    t = next(t for t in ngircd if t.options.server_settings)
    for mapping in (t.params, t.options.server_settings):
        with pytest.raises(TypeError):
            mapping["seed"] = 7  # type: ignore[index]
    with pytest.raises(dataclasses.FrozenInstanceError):
        t.options.placement = "shared"  # type: ignore[misc]
    kept = t.record_params
    kept["seed"] = 7
    assert t.params["seed"] != 7 and json.loads(json.dumps(kept)) == kept
