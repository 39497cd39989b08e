"""IM's protocol-5 searches (spec/protocol-draft.json "im": search, generator, chaos, memory,
fanout) on records a fake run returns: the scout, the replicated steps up and down the
sqrt(2) grid, the bisection to 10 %, censoring, the re-run rule (blind to the outcome), the
positive control that one lost message fails a step, the capacity, chaos, fan-out and
memory-cap searches, a resumed search, and the im profile's pieces within 2.5 h."""

from __future__ import annotations

import pytest

from serverbench import protocol
from serverbench.benchmarks.im import search as im_search
from serverbench.harness.planning import walks
from serverbench.harness.planning.pieces import pieces
from serverbench.harness.planning.plan import make_plan
from serverbench.harness.planning.profiles import load_profile
from serverbench.harness.running.replicated import run_replicated

SERVERS = '["go", "ngircd"]'
NODELAY = '{ ngircd = { nodelay = ["off", "on"] } }'
TINY = f"""name = "imsearch"
languages = ["im_loadgen"]
[defaults]
trials = 1
timeout_s = 60.0
memory_budget_bytes = "2GiB"
heap_fraction = 0.5
cores = [1]
[im_rate]
clients = 20
warmup_s = 0.3
duration_s = 0.7
drain_s = 0.5
options = {{ server_languages = {SERVERS}, placements = ["split"], server_settings = {NODELAY} }}
"""
LIMITED = "generator schedule slip p99 0.01 s > schedule_slip_limit_s 0.002: sends left late"


def _searches(tmp_path, **sets):
    p = tmp_path / "imsearch.toml"
    p.write_text(TINY, encoding="utf-8")
    prof = load_profile(str(p), {f"im_rate.{k}": v for k, v in sets.items()})
    return make_plan(prof, machine=2, benchmarks=["im_rate"]).searches


def _one(tmp_path, kind, server="go", **sets):
    return next(s for s in _searches(tmp_path, **sets) if s.kind == kind and s.server == server)


def fake(p99_of, status_of=None, lost_of=None, interfered_of=None):
    """execute(task, finish): a record per attempt; p99_of(value, run, attempt) etc."""
    ran = []

    def execute(task, finish=None):
        v = task.params[task.search and "clients" if task.search["name"] == "im_memory" else "rate_per_s"]
        key = (v, task.search["run"], task.search["attempt"])
        status = (status_of or {}).get(key, (status_of or {}).get(v, "ok"))
        rec = {
            "config_id": task.config_id,
            "trial": task.trial,
            "params": dict(task.params),
            "search": dict(task.search),
            "status": "invalid" if status == "limited" else status,
            "status_reason": None,
            "validation": {"ok": status == "ok", "reason": LIMITED if status == "limited" else None},
            "interfered": bool((interfered_of or {}).get(key)),
            "metrics": {
                "latency_p99_s": p99_of(*key),
                "messages_lost": (lost_of or {}).get(key, 0),
                "clients_registered": task.params.get("clients"),
            },
        }
        if task.resolved_from:
            rec["resolved_from"] = task.resolved_from
        if finish:
            finish(rec)
        ran.append(rec)
        return rec

    return execute, ran


def knee(limit):
    """p99 1 ms up to `limit` messages per second, 50 ms above."""
    return lambda v, run, attempt: 0.001 if v <= limit else 0.05


# ---- the walks --------------------------------------------------------------------------
def test_the_rate_walk_scouts_replicates_up_and_bisects_to_ten_percent():
    grid = im_search.grid(im_search.DEFAULTS)
    assert grid[0] == 1000 and grid[-1] == 1_024_000 and len(grid) == 21
    seen = []

    def step(v, phase, runs):
        seen.append((phase, v, runs))
        return walks.PASS if v <= 10_000 else walks.FAIL

    out = walks.rate_walk(grid, 2, 2**0.5, 1.1, step)
    assert [v for ph, v, _ in seen if ph == "scout"] == [1000, 2000, 4000, 8000, 16000]
    assert [v for ph, v, _ in seen if ph == "grid"] == [8000, 11314]
    assert all(n is None for ph, _, n in seen if ph != "scout")  # replicated: step_runs each
    assert out["bound"] == "established" and out["failed"] / out["value"] <= 1.1
    assert out["value"] <= 10_000 < out["failed"]


def test_down_the_grid_below_its_start_and_at_its_top():
    grid = im_search.grid(im_search.DEFAULTS)
    flaky = iter([walks.PASS, walks.FAIL])  # the scout's one run passes at 1,000, the next fails
    seen = []

    def step(v, phase, runs):
        seen.append((phase, v))
        if phase == "scout":
            return next(flaky)
        return walks.PASS if v <= 1000 else walks.FAIL

    out = walks.rate_walk(grid, 2, 2**0.5, 1.1, step)
    assert [v for ph, v in seen if ph == "grid"] == [1000, 1414]
    assert out["bound"] == "established" and out["value"] >= 1000
    down = walks.rate_walk(
        grid, 2, 2**0.5, 1.1, lambda v, ph, n: walks.PASS if ph == "scout" and v < 4000 else walks.FAIL
    )
    assert down["bound"] == "below_start" and down["value"] is None
    top = walks.rate_walk(grid, 2, 2**0.5, 1.1, lambda v, ph, n: walks.PASS)
    assert (top["value"], top["bound"]) == (1_024_000, "at_least")


def test_a_censored_step_stops_the_search_at_least_the_last_pass():
    grid = im_search.grid(im_search.DEFAULTS)

    def step(v, phase, runs):
        if phase == "scout":
            return walks.PASS if v <= 4000 else walks.CENSORED  # the scout just stops
        return walks.PASS if v <= 4000 else walks.CENSORED

    out = walks.rate_walk(grid, 2, 2**0.5, 1.1, step)
    assert (out["value"], out["bound"]) == (4000, "at_least")


def test_the_memory_walk_doubles_then_bisects_and_stops_at_clients_max():
    seen = []

    def step(v, phase, runs):
        seen.append((phase, v, runs))
        return walks.PASS if v <= 6000 else walks.FAIL

    out = walks.doubling_walk(1000, 19000, 1.1, step)
    assert [v for ph, v, _ in seen if ph == "double"] == [1000, 2000, 4000, 8000]
    assert all(n == 1 for *_, n in seen) and out["bound"] == "established"
    assert out["value"] <= 6000 < out["failed"] and out["failed"] / out["value"] <= 1.1
    top = walks.doubling_walk(1000, 19000, 1.1, lambda v, ph, n: walks.PASS)
    assert (top["value"], top["bound"]) == (19000, "at_least")


# ---- the step rule and the re-run rule --------------------------------------------------
def _rec(status="ok", p99=0.001, lost=0, interfered=False, reason=None):
    return {
        "status": status,
        "status_reason": reason,
        "validation": {"ok": status == "ok", "reason": reason},
        "interfered": interfered,
        "params": {"clients": 1000},
        "metrics": {"latency_p99_s": p99, "messages_lost": lost, "clients_registered": 1000},
    }


def test_the_rerun_rule_reads_only_status_reason_prefix_and_the_flag():
    for p99, lost in ((0.001, 0), (0.5, 7), (None, 0)):  # the outcome never changes the decision
        assert im_search.rerun_reason(_rec("invalid", p99, lost, reason=LIMITED), "rate") == "generator"
        assert im_search.rerun_reason(_rec("ok", p99, lost, interfered=True), "rate") == "interfered"
        assert im_search.rerun_reason(_rec("crashed", p99, lost, interfered=True), "rate") == "interfered"
        assert im_search.rerun_reason(_rec("ok", p99, lost), "rate") is None
        assert im_search.rerun_reason(_rec("invalid", p99, lost, reason="message accounting: x"), "rate") is None
        # the capacity search's failure is a generator-limited run: only interference re-runs it
        assert im_search.rerun_reason(_rec("invalid", p99, lost, reason=LIMITED), "capacity") is None
        both = _rec("invalid", p99, lost, reason=LIMITED, interfered=True)
        assert im_search.rerun_reason(both, "capacity") == "interfered"


def test_one_lost_message_fails_a_step_with_chaos_off_but_not_with_chaos_on():
    s = dict(im_search.DEFAULTS)
    runs = [_rec(), _rec(lost=1), _rec()]
    assert im_search.judge_step(runs, "rate", s)["outcome"] == "fail"
    assert "lost 1" in im_search.judge_step(runs, "rate", s)["why_not"]
    assert im_search.judge_step(runs, "chaos", s)["outcome"] == "pass"
    # the median p99 decides, not one run's
    assert im_search.judge_step([_rec(p99=0.5), _rec(), _rec()], "rate", s)["outcome"] == "pass"
    assert im_search.judge_step([_rec(p99=0.5), _rec(p99=0.02), _rec()], "rate", s)["outcome"] == "fail"
    censored = [_rec(), _rec("invalid", reason=LIMITED), _rec()]
    assert im_search.judge_step(censored, "rate", s)["outcome"] == "censored"
    assert im_search.judge_step(censored, "capacity", s)["outcome"] == "fail"  # the generator's own limit
    assert im_search.judge_step([_rec("crashed")], "rate", s)["outcome"] == "fail"
    # two valid runs over the SLO decide the median whatever the censored third would show
    # (the pilot: Erlang at 32,000/s, p99 22 and 58 ms, one run read late after its re-runs)
    over = [_rec(p99=0.022), _rec("invalid", reason=LIMITED), _rec(p99=0.058)]
    assert im_search.judge_step(over, "rate", s)["outcome"] == "fail"
    split = [_rec(p99=0.022), _rec("invalid", reason=LIMITED), _rec(p99=0.004)]
    assert im_search.judge_step(split, "rate", s)["outcome"] == "censored"


def test_a_limited_run_over_the_slo_by_more_than_the_generators_error_fails_on_the_server():
    # the pilot: Erlang at 32,000/s, the server saturated, p99 0.2-1.7 s, every run's send slip
    # p99 about 4 ms (the generator's busy share 0.4): censoring would make it "at least"
    s = dict(im_search.DEFAULTS)

    def limited(p99, slip=0.004, late=0.006):
        r = _rec("invalid", p99=p99, reason=LIMITED)
        r["metrics"].update(schedule_slip_max_s=slip, read_lateness_max_s=late)
        return r

    saturated = [limited(0.21), limited(0.98), limited(1.66)]
    assert im_search.judge_run(saturated[0], "rate", s)[0] == "fail"
    assert im_search.judge_step(saturated, "rate", s)["outcome"] == "fail"
    # within the SLO plus the generator's worst error: the generator may explain it
    assert im_search.judge_run(limited(0.019), "rate", s)[0] == "censored"
    assert im_search.judge_run(limited(0.021), "rate", s)[0] == "fail"
    assert im_search.judge_run(limited(0.21, slip=0.3), "rate", s)[0] == "censored"
    # a limited run is never a pass, however low its p99 (a slipping generator offered less)
    assert im_search.judge_run(limited(0.001), "rate", s)[0] == "censored"
    # without both error measures nothing bounds it
    unbounded = _rec("invalid", p99=0.5, reason=LIMITED)
    assert im_search.judge_run(unbounded, "rate", s)[0] == "censored"
    # one bounded run over and two valid runs under: the median passes
    assert im_search.judge_step([limited(0.5), _rec(), _rec()], "rate", s)["outcome"] == "pass"
    # the capacity search: a limited run is its failure, as before
    assert im_search.judge_run(limited(0.001), "capacity", s)[0] == "fail"


# ---- the searches run with fake records --------------------------------------------------
def test_a_rate_search_records_every_attempt_and_resumes_without_running_again(tmp_path):
    s = _one(tmp_path, "rate")
    # run 2 at 2,000/s is generator-limited twice, then valid: two re-runs, the third attempt counts
    status = {(2000, 2, 1): "limited", (2000, 2, 2): "limited"}
    execute, ran = fake(knee(3000), status)
    seen: dict = {}
    out = run_replicated(s, seen, execute)
    assert out["result"]["bound"] == "established" and out["result"]["value"] <= 3000 < out["result"]["failed"]
    assert out["result"]["failed"] / out["result"]["value"] <= 1.1
    again = [r for r in ran if r["search"]["rerun_of"]]
    assert [(r["search"]["attempt"], r["search"]["rerun_of"]) for r in again if r["params"]["rate_per_s"] == 2000][
        :2
    ] == [(2, "generator"), (3, "generator")]
    assert {r["search"]["phase"] for r in ran} == {"scout", "grid", "bisect"}
    assert all(r["params"]["seed"] == r["search"]["run"] == r["trial"] for r in ran)
    decided = [r for r in ran if "step_verdict" in r["search"]]
    assert len(decided) == out["step_count"] and all(r["search"]["final"] for r in decided)
    assert out["stage"] == [] and len(out["reruns"]) >= 2

    def refuse(task, finish=None):
        raise AssertionError(f"ran again: {task.config_id}")

    assert run_replicated(s, seen, refuse)["result"] == out["result"]


def test_the_rerun_decision_is_the_same_whatever_the_latency(tmp_path):
    s = _one(tmp_path, "rate")
    interfered = {(1000, 1, 1): True}
    decisions = []
    for p99 in (0.001, 0.009):
        execute, ran = fake(lambda v, r, a, p99=p99: p99, interfered_of=interfered)
        run_replicated(s, {}, execute)
        decisions.append([(r["search"]["step"], r["search"]["rerun_reason"]) for r in ran if r["search"]["step"] < 3])
    assert decisions[0] == decisions[1] and decisions[0][0] == (0, "interfered")


def test_a_run_still_limited_after_two_reruns_censors_its_step(tmp_path):
    s = _one(tmp_path, "rate")
    status = {4000: "limited"}
    execute, ran = fake(knee(100_000), status)
    out = run_replicated(s, {}, execute)
    assert out["result"]["bound"] == "at_least" and out["result"]["value"] == 2828
    assert max(r["search"]["attempt"] for r in ran) == 3


def test_the_capacity_search_runs_the_null_sink_and_fails_on_the_generator(tmp_path):
    (cap,) = [s for s in _searches(tmp_path) if s.kind == "capacity" and s.name == "im_capacity"]
    assert cap.server == "im_loadgen" and cap.order == 0
    execute, ran = fake(lambda v, r, a: 0.001, {v: "limited" for v in range(64_001, 2_000_000)})
    out = run_replicated(cap, {}, execute)
    assert out["result"]["bound"] == "established" and out["result"]["value"] <= 64_000
    assert all(r["params"]["chaos_interval_ms"] == 0 for r in ran)


def test_the_chaos_search_ignores_losses_then_runs_the_loss_runs_at_half_its_rate(tmp_path):
    s = _one(tmp_path, "chaos")
    assert [x.server for x in _searches(tmp_path) if x.kind == "chaos"] == ["go"]  # ours, as shipped
    lost = {(v, r, 1): 3 for v in (1000, 2000, 4000, 8000) for r in (1, 2, 3)}
    execute, ran = fake(knee(8000), lost_of=lost)
    out = run_replicated(s, {}, execute)
    p = out["result"]["value"]
    assert p >= 8000 and out["result"]["bound"] == "established"
    loss = [r for r in ran if r["search"]["name"] == "im_chaos_loss"]
    assert len(loss) == len(out["stage"]) == 15
    assert {r["params"]["rate_per_s"] for r in loss} == {round(p / 2)}
    got = sorted(
        {(r["params"]["chaos_interval_ms"], r["params"]["chaos_pick"], r["params"]["chaos_target"]) for r in loss}
    )
    # any process at 1, 10, 100 kills/s; sessions at 10/s, random (IM5(b)) and queued (its control)
    assert got == [
        (10, "random", "any"),
        (100, "queued", "session"),
        (100, "random", "any"),
        (100, "random", "session"),
        (1000, "random", "any"),
    ]
    assert all(r["resolved_from"]["rule"] == "im_chaos_loss" for r in loss)
    steps = [r for r in ran if r["search"]["name"] == "im_chaos_rate"]
    assert {r["params"]["chaos_interval_ms"] for r in steps} == {100}


def test_fanout_and_memory_searches_and_the_nodelay_rows(tmp_path):
    found = _searches(tmp_path)
    rate_rows = sorted(s.key.split("/", 5)[-1] for s in found if s.kind == "rate")
    assert any("server_settings=nodelay=on" in k for k in rate_rows) and len(rate_rows) == 3
    fan = [s for s in found if s.kind == "fanout" and s.server == "go"]
    assert sorted(s.spec.params["channel_size"] for s in fan) == [10, 100]
    # the generator's own fan-out capacity per size, first, judged as a capacity search
    fcap = [s for s in found if s.name == "im_fanout_capacity"]
    assert [s.kind for s in fcap] == ["capacity"] * 2 and {s.server for s in fcap} == {"im_loadgen"}
    assert sorted(s.spec.params["channel_size"] for s in fcap) == [10, 100]
    assert all(s.spec.params["mode"] == "fanout" and s.order < fan[0].order for s in fcap)
    assert len({s.key for s in fcap + fan}) == 4
    mem = [s for s in found if s.kind == "memory"]
    assert sorted({s.budget for s in mem}) == protocol.designing("im")["memory"]["caps_bytes"]
    assert all(not s.options.server_settings for s in mem) and len(mem) == 4
    m = next(s for s in mem if s.server == "go" and s.budget == 128 * 2**20)
    execute, ran = fake(lambda v, r, a: None, {v: "crashed" for v in range(6001, 20000)})
    out = run_replicated(m, {}, execute)
    assert out["result"]["value"] <= 6000 < out["result"]["failed"] and out["result"]["bound"] == "established"
    t = m.run_task(1000, 0, "double", 1, 1)
    assert t.params["mode"] == "idle" and t.params["duration_s"] == 5 and t.heap_mb == 64
    assert (
        t.options.server_cap and t.memory_budget_bytes == 128 * 2**20 and t.search["cap_bytes"] == t.memory_budget_bytes
    )


# ---- the profile's pieces ------------------------------------------------------------------
def test_the_chaos_piece_runs_what_im5_decides_on_and_nothing_else():
    pc = pieces("im")["chaos"]
    plan = make_plan(load_profile("im", pc.sets), machine=2, benchmarks=list(pc.benchmarks))
    first = min(plan.searches, key=lambda s: (s.order, s.key))
    assert first.kind == "capacity" and plan.estimate_s() <= 3600
    ours = {(s.kind, s.server) for s in plan.searches if s.kind != "capacity"}
    assert ours == {("rate", "erlang"), ("chaos", "erlang")}


@pytest.mark.parametrize("name", ["rate", "storm", "fanout"])
def test_each_piece_of_the_im_profile_fits_two_and_a_half_hours(name):
    pc = pieces("im")[name]
    plan = make_plan(load_profile("im", pc.sets), machine=2, benchmarks=list(pc.benchmarks))
    assert plan.estimate_s() <= 2.5 * 3600, plan.estimate_s() / 3600
    kinds = {s.kind for s in plan.searches}
    assert kinds == {"rate": {"capacity", "rate", "chaos"}, "storm": {"memory"}, "fanout": {"capacity", "fanout"}}[name]
    if name == "rate":
        assert plan.searches and min(plan.searches, key=lambda s: (s.order, s.key)).kind == "capacity"
        rows = {(s.server, bool(s.options.server_settings)) for s in plan.searches if s.kind == "rate"}
        assert len(rows) == 9 and ("ngircd", True) in rows and ("inspircd", True) in rows
