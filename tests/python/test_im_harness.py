"""The IM benchmark through the harness (docs/im.md; the design the harness runs is the
protocol draft's `im`, serverbench.protocol.designing("im")): an im task runs one of our servers
or a production daemon (through src/ircd) with the one load generator, placement split, and
writes one valid raw record with the server block; a short real rate search writes every
attempt with its search fields; a load generator killed mid-run is a failed run with a clear
reason, and nothing is left running. The profile holds the design (rounds, search runs) and
fits its time budgets. The searches' logic on fake records: test_im_searches.py."""

from __future__ import annotations

import json
import os
import shutil
import socket
import sys

import pytest

import im_fakes
from serverbench import contract, protocol
from serverbench.benchmarks.im import search as im_search
from serverbench.harness.planning.plan import make_plan
from serverbench.harness.planning.profiles import load_profile
from serverbench.rawdata import records
from socket_helpers import _need, check_nothing_left, make_launcher

TINY_RATE = """[im_rate]
clients = 20
warmup_s = 0.3
duration_s = 0.7
drain_s = 0.5
kinds = ["rate"]
start = 600
max_per_s = 1200
step_runs = 2
options = { server_languages = ["go"], placements = ["split"] }
"""


def tiny_profile(tmp_path, servers=("go", "ngircd")) -> str:
    p = tmp_path / "imtiny.toml"
    p.write_text(im_fakes.tiny_grid("imtiny", servers) + TINY_RATE, encoding="utf-8")
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
    go = [t for t in plan.tasks if t.server_language == "go"]
    assert [t.trial for t in go] == [1, 2, 3] and [t.params["seed"] for t in go] == [1, 2, 3]
    assert len({t.config_id for t in go}) == 1 and "seed=" not in go[0].config_id
    assert go[0].config_id.endswith("/server_language=go/placement=split")


def test_the_im_profile_holds_the_drafts_design_within_its_budget():
    im = protocol.designing("im")
    prof = load_profile("im")
    assert prof["defaults"]["trials"] == im["rounds_deciding"]
    rate = prof["im_rate"]
    assert im_search.grid(rate) == [round(1000 * 2 ** (k / 2)) for k in range(21)]
    assert im_search.grid(rate)[-1] == im["rate_grid"]["max_per_s"]
    assert rate["slo_s"] == im["search"]["slo_p99_s"] and rate["step_runs"] == im["search"]["step_runs"]
    assert rate["bisect_ratio"] == im["search"]["bisect_ratio"] and rate["budget_bytes"] == im["memory_budget_bytes"]
    p = rate["params"]
    run = im["search_run"]
    assert (p["clients"], p["payload_bytes"], p["warmup_s"], p["duration_s"], p["drain_s"]) == (
        run["clients"],
        run["payload_bytes"],
        run["warmup_s"],
        run["duration_s"],
        run["drain_s"],
    )
    lat = prof["im"]
    run = im["latency_run"]
    assert (lat["rate_per_s"], lat["warmup_s"], lat["duration_s"], lat["drain_s"]) == (
        [4000],
        [run["warmup_s"]],
        [run["duration_s"]],
        [run["drain_s"]],
    )
    servers = {"erlang", "go", "scala_akka", "scala_pekko", "rust_tokio", "ngircd", "inspircd"}
    plan = make_plan(load_profile("im", {"im_rate.kinds": ["rate"]}), machine=2, benchmarks=["im", "im_rate"])
    assert {s.server for s in plan.searches} == servers and len(plan.searches) == 9  # the daemons twice
    assert {t.server_language for t in plan.tasks} == servers
    nodelay = {t.config_id for t in plan.tasks if t.options.server_settings}
    assert nodelay and all(c.endswith("/server_settings=nodelay=on") for c in nodelay)
    quick = make_plan(load_profile("quick"), machine=2, benchmarks=["im", "im_rate"])
    assert quick.estimate_s() <= 3 * 60, quick.estimate_s()


# ---- real runs: our Go server and ngircd, the generator killed -----------------------------
@pytest.mark.native
@pytest.mark.usefixtures("no_leftover_processes")
def test_an_im_task_through_the_harness_on_go_and_ngircd_writes_valid_records(tmp_path):
    from serverbench.harness import run_sweep

    for lang in ("im_loadgen", "go"):
        _need(lang)
    _need_ngircd()
    d = run_sweep(tiny_profile(tmp_path), sweep_id="im", benchmarks=["im"], raw_root=tmp_path / "raw", progress=False)
    # strict: every line valid; one run a server, its last attempt final (a run the generator
    # limited on a busy machine is attempted again, up to 3 times: protocol 5's re-run rule)
    records.load_raw(d)
    by = {}
    for line in (d / "runs.jsonl").read_text(encoding="utf-8").splitlines():
        rec = json.loads(line)
        assert records.raw_errors(rec) is None
        if rec["search"]["final"]:
            assert rec["server_language"] not in by
            by[rec["server_language"]] = rec
    assert len(by) == 2
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


@pytest.mark.native
@pytest.mark.usefixtures("no_leftover_processes")
def test_a_short_real_rate_search_records_every_attempt(tmp_path):
    """The replicated search end to end on Go (tiny runs: grid 600, 849, 1,200/s, so that
    0.7 s holds the 368 latencies a p99's interval needs; 2 runs a step)."""
    from serverbench.harness import run_sweep

    for lang in ("im_loadgen", "go"):
        _need(lang)
    d = run_sweep(
        tiny_profile(tmp_path), sweep_id="s", benchmarks=["im_rate"], raw_root=tmp_path / "raw", progress=False
    )
    assert len(records.load_raw(d)) > 0  # strict: every line valid
    recs = [json.loads(x) for x in (d / "runs.jsonl").read_text(encoding="utf-8").splitlines()]
    assert recs and all(r["search"]["name"] == "im_rate" and r["server_language"] == "go" for r in recs)
    for r in recs:
        s = r["search"]
        assert {"phase", "step", "run", "attempt", "final", "rerun_reason", "run_verdict"} <= set(s)
        assert r["trial"] == s["run"] == r["params"]["seed"] and "chaos_interval_ms=0" in r["config_id"]
        assert s["attempt"] == 1 or s["rerun_of"] in ("generator", "interfered")
    decided = [r for r in recs if "step_verdict" in r["search"]]
    assert decided and decided[0]["search"]["phase"] == "scout"
    ends = [json.loads(x) for x in (d / "sessions.jsonl").read_text(encoding="utf-8").splitlines()]
    (out,) = ends[-1]["searches"]
    assert out["name"] == "im_rate" and out["result"]["bound"] in ("at_least", "established", "below_start")


@pytest.mark.native
@pytest.mark.usefixtures("no_leftover_processes")
def test_a_short_real_memory_search_holds_its_clients_and_asks_memory(tmp_path):
    """IM2's memory-cap search end to end on Go (20, 40, then 80 = clients_max idle clients
    under a 128 MiB cap): every probe is a valid run of the task asked for (the pilot's
    probes were refused: their records carried a rate the task did not), and after each
    hold the generator's MEMORY left the server's live bytes in its record."""
    from serverbench.harness import run_sweep

    for lang in ("im_loadgen", "go"):
        _need(lang)
    sets = {
        "im_rate.kinds": ["memory"],
        "im_rate.memory_start_clients": 20,
        "im_rate.memory_clients_max": 80,
        "im_rate.memory_hold_s": 0.3,
        "im_rate.memory_caps_bytes": [134217728],
    }
    d = run_sweep(
        tiny_profile(tmp_path),
        overrides=sets,
        sweep_id="m",
        benchmarks=["im_rate"],
        raw_root=tmp_path / "raw",
        progress=False,
    )
    every = [json.loads(x) for x in (d / "runs.jsonl").read_text(encoding="utf-8").splitlines()]
    # a probe the machine interfered with is run again by the rule, with its reason: the
    # search's own runs are the final attempts (a busy CI host once re-ran the first twice)
    recs = [r for r in every if r["search"]["final"]]
    assert all(r["search"]["rerun_reason"] for r in every if not r["search"]["final"])
    assert [r["params"]["clients"] for r in recs] == [20, 40, 80]
    assert all(r["status"] == "ok" and r["search"]["name"] == "im_memory" for r in recs), [
        r["status_reason"] for r in recs
    ]
    assert all(r["server"]["record"]["metrics"]["live_bytes"] > 0 for r in recs)
    ends = [json.loads(x) for x in (d / "sessions.jsonl").read_text(encoding="utf-8").splitlines()]
    (out,) = ends[-1]["searches"]
    assert out["result"]["bound"] == "at_least" and out["result"]["value"] == 80


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
