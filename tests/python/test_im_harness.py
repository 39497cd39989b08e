"""The IM benchmark through the harness (docs/im.md, protocol 3's `im` design): an im task
runs one of our servers or a production daemon (through src/ircd) with the one load
generator, placement split, and writes one valid raw record with the server block; the rate
search steps up its grid and stops at the first step that does not pass; the chaos stage
resolves its rate from the sweep's own search steps; a load generator killed mid-run is a
failed run with a clear reason, and nothing is left running. The profiles hold the frozen
design (rounds, grid, SLOs) and fit their time budgets."""

from __future__ import annotations

import json
import os
import shutil
import socket
import sys

import pytest

from serverbench import contract, protocol, records
from serverbench.benchmarks.im import search as im_search
from serverbench.harness.planning.plan import make_plan
from serverbench.harness.planning.profiles import load_profile
from serverbench.harness.planning.task import Task
from serverbench.harness.running.searching import run_search
from socket_helpers import _need, check_nothing_left, make_launcher

GRID = [1000, 1414, 2000, 2828, 4000]

TINY = """name = "imtiny"
languages = ["im_loadgen"]
rerun_interfered = false
[defaults]
trials = 1
timeout_s = 60.0
memory_budget_bytes = "2GiB"
heap_fraction = 0.5
cores = [1]
[im]
mode = ["latency"]
clients = [20]
rate_per_s = [200]
warmup_s = [0.3]
duration_s = [0.7]
drain_s = [0.5]
options = {{ server_languages = {servers}, placements = ["split"] }}
[im_rate]
clients = 20
warmup_s = 0.3
duration_s = 0.7
drain_s = 0.5
max_steps = 5
stage_languages = ["go"]
stage_trials = 2
options = {{ server_languages = ["go", "ngircd"], placements = ["split"] }}
"""


def tiny_profile(tmp_path, servers=("go", "ngircd")) -> str:
    p = tmp_path / "imtiny.toml"
    p.write_text(TINY.format(servers=str(list(servers)).replace("'", '"')), encoding="utf-8")
    return str(p)


def _need_ngircd():
    if shutil.which("ngircd") is None and not os.access("/usr/sbin/ngircd", os.X_OK):
        pytest.skip("ngircd is not installed (scripts/setup.sh)")


def _listening(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


# ---- the plan: the round is the seed; the profiles hold the frozen design -------------------
def test_every_round_runs_with_its_own_seed_under_one_config_id(tmp_path):
    plan = make_plan(load_profile(tiny_profile(tmp_path), {"defaults.trials": 3}), machine=2, benchmarks=["im"])
    go = [t for t in plan.tasks if t.options["server_language"] == "go"]
    assert [t.trial for t in go] == [1, 2, 3] and [t.params["seed"] for t in go] == [1, 2, 3]
    assert len({t.config_id for t in go}) == 1 and "seed=" not in go[0].config_id
    assert go[0].config_id.endswith("/server_language=go/placement=split")


def test_the_im_profile_is_protocol_3s_piece_within_its_budget():
    im = protocol.section("im")
    prof = load_profile("im")
    assert prof["defaults"]["trials"] == im["rounds_deciding"]
    assert prof["im"]["also"][-1]["trials"] == im["rounds_figure_only"]  # fan-out: figure-only
    rate = prof["im_rate"]
    assert im_search.grid(rate) == [round(1000 * 2 ** (k / 2)) for k in range(15)]
    assert im_search.grid(rate)[-1] == 128_000
    assert rate["slo_s"] == max(im["slo"]["sensitivity_p99_s"]) and rate["stage_slo_s"] == im["slo"]["p99_s"]
    assert rate["stage_trials"] == im["rounds_deciding"] and rate["budget_bytes"] == im["memory_budget_bytes"]
    p = rate["params"]
    run = im["latency_run"]
    assert (p["clients"], p["payload_bytes"], p["warmup_s"], p["duration_s"], p["drain_s"]) == (
        run["clients"],
        run["payload_bytes"],
        run["warmup_s"],
        run["duration_s"],
        run["drain_s"],
    )
    plan = make_plan(prof, machine=2)
    assert plan.estimate_s() <= 2.5 * 3600, plan.estimate_s() / 3600
    servers = {"erlang", "go", "scala_akka", "scala_pekko", "rust_tokio", "ngircd", "inspircd"}
    assert {s.server for s in plan.searches} == servers
    assert {t.options["server_language"] for t in plan.tasks} == servers
    quick = make_plan(load_profile("quick"), machine=2, benchmarks=["im", "im_rate"])
    assert quick.estimate_s() <= 3 * 60, quick.estimate_s()


# ---- the search and its stage, on records a fake run returns ------------------------------
def _step_record(task: Task, p99: float | None, status="ok", reason=None, lost=0) -> dict:
    metrics = {"latency_p99_s": p99, "messages_lost": lost}
    return {
        "config_id": task.config_id,
        "trial": task.trial,
        "params": dict(task.params),
        "search": dict(task.search or {}),
        "status": status,
        "status_reason": reason,
        "metrics": metrics,
    }


def _searches(tmp_path, **overrides):
    prof = load_profile(tiny_profile(tmp_path), {f"im_rate.{k}": v for k, v in overrides.items()})
    plan = make_plan(prof, machine=2, benchmarks=["im_rate"])
    return {s.server: s for s in plan.searches}


def _fake(p99_by_rate: dict, status_by_rate: dict | None = None):
    """execute(task, finish) as the sweep's: a record per step (finish fills its verdict)."""
    ran: list[Task] = []

    def execute(task, finish=None):
        ran.append(task)
        rate = task.params["rate_per_s"]
        if task.search is None:  # a stage run
            rec = _step_record(task, 0.001)
            rec["resolved_from"] = task.resolved_from
            return rec
        status, reason = (status_by_rate or {}).get(rate, ("ok", None))
        rec = _step_record(task, p99_by_rate[rate], status, reason)
        if finish:
            finish(rec)
        return rec

    return execute, ran


def test_the_search_steps_up_the_grid_and_stops_at_the_first_failing_step(tmp_path):
    s = _searches(tmp_path)["go"]
    p99 = {1000: 0.002, 1414: 0.003, 2000: 0.004, 2828: 0.009, 4000: 0.021}  # 4,000: p99 over 20 ms
    execute, ran = _fake(p99)
    seen: dict = {}
    out = run_search(s, seen, execute, check_host=False)
    steps = [t for t in ran if t.search is not None]
    assert [t.params["rate_per_s"] for t in steps] == GRID
    assert [t.search["step"] for t in steps] == [0, 1, 2, 3, 4] and all(t.params["seed"] == 1 for t in steps)
    assert steps[0].config_id.startswith("im_rate/im_loadgen/fair/c1/budget_bytes=2147483648/")
    assert (out["largest_ok"], out["smallest_failed"], out["established"]) == (2828, 4000, True)
    verdicts = [r["search"] for rs in seen.values() for r in rs if "search" in r and r["search"]]
    assert [v["passed"] for v in verdicts] == [True, True, True, True, False]
    assert verdicts[-1]["why_not"] == "p99 0.021 s > 0.02 s" and verdicts[-1]["establishes"]

    # a resumed search replays its steps and stage from the log: nothing runs again
    def refuse(task, finish=None):
        raise AssertionError(f"ran again: {task.config_id}")

    again = run_search(s, seen, refuse, check_host=False)
    assert (again["largest_ok"], again["smallest_failed"], len(again["stage"])) == (2828, 4000, 4)


def test_a_lost_message_or_a_generator_limited_step_stops_it_and_only_the_first_establishes(tmp_path):
    s = _searches(tmp_path)["ngircd"]
    rec = _step_record(s.task(1000, 0), 0.001, lost=3)
    assert s.declared.judge(rec, s.settings) == (False, "lost 3 messages", True)
    limited = (
        "invalid",
        "the program's own validation failed (validation.ok false): generator schedule slip p99 0.01 s > "
        "schedule_slip_limit_s 0.002: sends left late",
    )
    execute, ran = _fake({1000: 0.001, 1414: 0.001}, {1414: limited})
    out = run_search(s, {}, execute, check_host=False)
    assert [t.params["rate_per_s"] for t in ran] == [1000, 1414]  # ngircd: no chaos stage
    assert (out["largest_ok"], out["smallest_failed"], out["established"], out["stage"]) == (1000, 1414, False, [])


def test_the_chaos_stage_takes_half_the_sustainable_rate_at_10_ms_from_the_search(tmp_path):
    s = _searches(tmp_path)["go"]
    # sustainable at 10 ms: 2,828 (the 4,000 step passes the 20 ms SLO, not 10 ms); half: 1,414
    execute, ran = _fake({1000: 0.002, 1414: 0.003, 2000: 0.004, 2828: 0.009, 4000: 0.015})
    out = run_search(s, {}, execute, check_host=False)
    assert (out["largest_ok"], out["smallest_failed"], out["established"]) == (4000, None, False)  # grid top
    stage = [t for t in ran if t.search is None]
    assert [(t.trial, t.params["chaos_interval_ms"]) for t in stage] == [(1, 1000), (1, 0), (2, 0), (2, 1000)]
    assert {t.params["rate_per_s"] for t in stage} == {1414} and [t.params["seed"] for t in stage] == [1, 1, 2, 2]
    assert all(t.config_id.startswith("im_chaos/") and t.benchmark == "im" for t in stage)
    why = stage[0].resolved_from
    assert (why["rule"], why["server_language"], why["sustainable_rate_per_s"], why["rate_per_s"]) == (
        "im_chaos",
        "go",
        2828,
        1414,
    )
    assert why["slo_s"] == 0.01 and not why["established"] and "half" in why["reason"]
    # no step within 10 ms: the grid's first rate (at least 1,000/s)
    execute, ran = _fake({1000: 0.012, 1414: 0.03})
    run_search(s, {}, execute, check_host=False)
    stage = [t for t in ran if t.search is None]
    assert {t.params["rate_per_s"] for t in stage} == {1000}
    assert stage[0].resolved_from["sustainable_rate_per_s"] is None and stage[0].resolved_from["established"]


# ---- real runs: our Go server and ngircd, the generator killed -----------------------------
@pytest.mark.native
@pytest.mark.usefixtures("no_leftover_processes")
def test_an_im_task_through_the_harness_on_go_and_ngircd_writes_valid_records(tmp_path):
    from serverbench.harness import run_sweep

    for lang in ("im_loadgen", "go"):
        _need(lang)
    _need_ngircd()
    d = run_sweep(tiny_profile(tmp_path), sweep_id="im", benchmarks=["im"], raw_root=tmp_path / "raw", progress=False)
    assert len(records.load_raw(d)) == 2  # strict: every line valid
    by = {}
    for line in (d / "runs.jsonl").read_text(encoding="utf-8").splitlines():
        rec = json.loads(line)
        assert records.raw_errors(rec) is None
        by[rec["server_language"]] = rec
    for server, rec in by.items():
        limited = im_search.generator_limited(rec)  # a busy machine may make the generator late
        assert rec["status"] == "ok" or limited, (server, rec["status"], rec["status_reason"])
        assert (rec["language"], rec["placement"], rec["params"]["seed"]) == ("im_loadgen", "split", 1)
        assert rec["server_cpus"] != rec["client_cpus"] or len(os.sched_getaffinity(0)) < 2
        assert rec["server"]["status"] == "ok" and rec["server"]["record"]["language"] == server
        assert rec["server_rss_peak_bytes"] > 1_000_000
        m = rec["metrics"]
        assert m["warmup_messages_sent"] > 0 and m["messages_sent"] > 0 and m["messages_lost"] == 0
    routed = by["go"]["server"]["record"]["metrics"]["messages_routed"]
    m = by["go"]["metrics"]
    assert routed == m["messages_delivered"] + m["warmup_messages_delivered"]
    assert by["ngircd"]["server"]["record"]["metrics"]["messages_routed"] is None  # a daemon keeps no counters


KILL_AFTER_S = 1.5


@pytest.mark.native
@pytest.mark.usefixtures("no_leftover_processes")
@pytest.mark.parametrize("server", ["go", "ngircd"])
def test_a_generator_killed_mid_run_is_a_failed_run_and_nothing_is_left(tmp_path, server):
    _need("im_loadgen")
    _need(server) if server == "go" else _need_ngircd()
    exe = str(contract.executable("im_loadgen"))
    # the generator, SIGKILLed KILL_AFTER_S into its 5 s schedule by a sibling shell
    killer = f'(sleep {KILL_AFTER_S}; kill -KILL $$) & exec "{exe}" "$@"'
    lau = make_launcher(tmp_path, {"im_loadgen": ["bash", "-c", killer, "im_loadgen"]})
    plan = make_plan(
        load_profile(tiny_profile(tmp_path, (server,)), {"im.duration_s": [5.0], "im.warmup_s": [0.0]}),
        machine=len(os.sched_getaffinity(0)),
        benchmarks=["im"],
    )
    (task,) = plan.tasks
    rec, _ = lau.run(task)
    assert rec["status"] == "crashed", (rec["status"], rec["status_reason"])
    assert "signal 9" in rec["status_reason"] or "SIGKILL" in rec["status_reason"], rec["status_reason"]
    assert rec["metrics"] is None and rec["wall_s"] < 5.0
    srv = rec["server"]
    assert srv["status"] == "ok", srv  # stopped by the harness's stdin EOF, its record read
    assert srv["record"]["metrics"]["stop_reason"] == "stdin_eof"
    port = srv["port"]
    assert port and not _listening(port)
    check_nothing_left()


if __name__ == "__main__":  # pragma: no cover
    sys.exit(pytest.main([__file__, "-q"]))
