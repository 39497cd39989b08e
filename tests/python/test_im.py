"""The im benchmark's package on schema-valid records: its table reads generator runs
(ours with a server record, ngircd's without), marks the runs the generator limited and
the ones that lost messages with chaos off, its message accounting between the two
records, and its cost model."""

from __future__ import annotations

import copy
from types import SimpleNamespace

import pytest

from serverbench.analysis.reading.synthetic import processed_from, raw_record
from serverbench.benchmarks.im import cost, sockets, tables
from serverbench.rawdata import records

PARAMS = {
    "mode": "latency",
    "clients": 100,
    "rate_per_s": 1000.0,
    "schedule": "poisson",
    "duration_s": 10.0,
    "drain_s": 2.0,
    "seed": 1,
    "channel_size": 10,
    "payload_bytes": 64,
    "client_timeout_s": 60.0,
    "host": "127.0.0.1",
}


def client_metrics(**over) -> dict:
    m = {
        "elapsed_s": 12.5, "clients_connected": 100, "clients_registered": 100, "registration_failures": 0,
        "login_s": 0.2, "channels_joined": 0, "schedule_s": 10.0, "messages_scheduled": 10_000,
        "messages_sent": 10_000, "deliveries_expected": 10_000, "messages_delivered": 10_000, "messages_lost": 0,
        "messages_duplicated": 0, "messages_reordered": 0, "deliveries_per_s": 1000.0, "latency_p50_s": 2e-4,
        "latency_p90_s": 4e-4, "latency_p99_s": 1e-3, "latency_p999_s": 3e-3, "latency_max_s": 5e-3,
        "latency_mean_s": 3e-4, "schedule_slip_p99_s": 1e-4, "schedule_slip_max_s": 5e-4, "pings_answered": 0,
        "error_numerics": 0, "server_disconnects": 0, "client_cpu_user_s": 0.1, "client_cpu_system_s": 0.2,
        "client_cpu_share": 0.03, "client_cpu_per_message_s": 1.5e-5, "generator_cpu_limit": 0.9,
        "schedule_slip_limit_s": 0.002,
    }  # fmt: skip
    m.update(over)
    return m


def server_record(chaos_ms: int, routed: int) -> dict:
    rec = {
        "benchmark": "im", "role": "server", "language": "go", "variant": "fair",
        "params": {"port": 4000, "idle_timeout_s": 60, "sendq_lines": 4096, "chaos_interval_ms": chaos_ms, "seed": 1},
        "metrics": {
            "elapsed_s": 13.0, "port": 4000, "connections_accepted": 100, "clients_registered_max": 100,
            "messages_routed": routed, "channel_deliveries": 0, "sessions_started": 50,
            "sessions_killed": 3 if chaos_ms else 0, "sessions_restarted": 3 if chaos_ms else 0,
            "sendq_disconnects": 0, "bad_lines": 0, "connection_errors": 0, "stop_reason": "stdin_eof",
        },
        "validation": {"ok": True, "reason": None},
        "runtime": {"name": "go", "version": "go1.26", "schedulers": 1},
    }  # fmt: skip
    records.validate_native(rec)
    return rec


def run(server: str, trial: int, metrics: dict, reason: str | None = None, chaos_ms: int | None = None) -> dict:
    """A raw record of one generator run against `server` (chaos_ms None: no server record,
    as for ngircd)."""
    rec = raw_record("im", "im_loadgen", PARAMS, metrics, trial=trial, sweep_id="synthetic-im", validate=False)
    rec["config_id"] = f"im/im_loadgen/fair/c1/rate_per_s=1000/server_language={server}"
    rec["validation"] = {"ok": reason is None, "reason": reason}
    rec["status"], rec["status_reason"] = ("ok", None) if reason is None else ("invalid", reason)
    rec["exit_code"] = 0 if reason is None else 1
    rec["runtime"] = {"name": "rust", "version": "1.95.0", "schedulers": 1}
    rec.update(server_language=server, placement="split", client_cpus=[1], server_cpus=[0])
    srv = None if chaos_ms is None else server_record(chaos_ms, metrics["messages_delivered"])
    rec["server"] = {
        "language": server, "command": [server], "pinned_cpus": [0], "port": 4000, "record": srv, "exit_code": 0,
        "signal": None, "status": "ok", "status_reason": None, "wall_s": 13.0, "user_cpu_s": 1.0,
        "system_cpu_s": 1.0, "peak_rss_bytes": 20_000_000, "stderr_tail": "",
    }  # fmt: skip
    records.validate_raw(rec)
    return rec


def test_the_table_reads_generator_runs_and_marks_them(tmp_path):
    slow = "generator schedule slip p99 0.005 s > schedule_slip_limit_s 0.002: sends left late"
    recs = [
        run("go", 1, client_metrics(), chaos_ms=0),
        run("go", 2, client_metrics(messages_delivered=9_990, messages_lost=10), chaos_ms=0),
        run("erlang", 3, client_metrics(messages_delivered=9_990, messages_lost=10), chaos_ms=100),
        run("ngircd", 4, client_metrics(schedule_slip_p99_s=0.005), reason=slow),
    ]
    P = processed_from(recs, tmp_path)
    d = tables.runs(P).sort_values("trial")
    assert list(d["server_language"]) == ["go", "go", "erlang", "ngircd"]
    assert list(d["generator_limited"]) == [False, False, False, True]
    # a loss with chaos off is the server's failure; with chaos on it is what chaos costs
    assert list(d["server_failed"]) == [False, True, False, False]
    assert d["latency_p99_s"].iloc[0] == pytest.approx(1e-3)
    assert tables.runs(P, mode="idle").empty


def test_the_server_must_have_passed_what_was_delivered():
    client = client_metrics(messages_delivered=90, deliveries_expected=100)
    assert sockets.mismatch(PARAMS, client, {"messages_routed": 95}) is None
    assert "received 90" in sockets.mismatch(PARAMS, client, {"messages_routed": 80})
    assert "more than the 100" in sockets.mismatch(PARAMS, client, {"messages_routed": 101})
    fanout = {**PARAMS, "mode": "fanout"}
    assert sockets.mismatch(fanout, client, {"channel_deliveries": 100, "messages_routed": 0}) is None
    assert sockets.mismatch({**PARAMS, "mode": "idle"}, client, {}) is None


def test_cost_follows_the_mode():
    task = lambda **p: SimpleNamespace(params={**PARAMS, **p})  # noqa: E731
    assert cost.socket_run_s(task(), "go") == pytest.approx(100 * cost.REGISTER_S + 12.0)
    assert cost.socket_run_s(task(mode="login", clients=1000), "go") == pytest.approx(1000 * cost.REGISTER_S)
    assert cost.socket_run_s(task(mode="idle", duration_s=30.0), "go") == pytest.approx(100 * cost.REGISTER_S + 30)


def test_a_record_missing_a_measure_is_refused():
    rec = copy.deepcopy(run("go", 1, client_metrics(), chaos_ms=0))
    del rec["metrics"]["latency_p99_s"]
    with pytest.raises(records.RecordError, match="native part"):
        records.validate_raw(rec)
    rec = run("go", 1, client_metrics(), chaos_ms=0)
    del rec["server"]["record"]["metrics"]["messages_routed"]
    with pytest.raises(records.RecordError, match="not valid"):
        records.validate_native(rec["server"]["record"])
