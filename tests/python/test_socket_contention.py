"""Socket runs measured for interference per run: the run's own client and
server are the benchmark, not other processes; the steal and other-CPU shares count only
from interference.MIN_TICKS ticks of /proc/stat on; the report uses the measured flag
instead of the load average for them."""

from __future__ import annotations

import os
import time
from types import SimpleNamespace

import pandas as pd
import pytest

from serverbench.analysis.reporting import contention
from serverbench.harness.planning.task import Task
from serverbench.harness.running import interference, launch
from serverbench.harness.running.environment import CLK_TCK
from serverbench.harness.sockets import run as sockets
from serverbench.plugins import SocketOptions
from serverbench.rawdata import records
from socket_helpers import default_placement, make_launcher

TICK = 1.0 / CLK_TCK


def socket_rec(client_s: float, server_s: float, **extra) -> dict:
    """The parts of a finished socket run's record that interference reads."""
    return {
        "wall_s": 0.05,  # the client's wall time: a short socket run
        "user_cpu_s": client_s * 0.75,
        "system_cpu_s": client_s * 0.25,
        "server": {"user_cpu_s": server_s * 0.5, "system_cpu_s": server_s * 0.5},
        "steal_share": 0.0,
        "cpu_steal_s": 0.0,
        **extra,
    }


def test_a_socket_runs_own_client_and_server_are_not_other_processes():
    # window 1 s on 2 CPUs; the client took 0.3 s and the server 0.5 s: 0.82 s busy is quiet
    rec = socket_rec(0.3, 0.5)
    quiet = interference.fields(0, round(0.82 * CLK_TCK), [0, 1], rec, window_s=1.0)
    assert quiet["other_cpu_s"] == pytest.approx(0.02, abs=TICK) and quiet["interfered"] is False
    # counting the server as another process (the old measure of a process run) would flag it
    assert (0.82 - 0.3) / 2.0 > interference.OTHER_CPU_LIMIT
    # the harness's own CPU time (it reads the server, samples /proc) is the run's too
    with_harness = interference.fields(0, round(0.92 * CLK_TCK), [0, 1], rec, window_s=1.0, harness_s=0.1)
    assert with_harness["other_cpu_s"] == pytest.approx(0.02, abs=TICK) and with_harness["interfered"] is False
    # another process that took 0.6 s of the 2 CPU seconds is interference
    busy = interference.fields(0, round(1.40 * CLK_TCK), [0, 1], rec, window_s=1.0)
    assert busy["other_cpu_share"] == pytest.approx(0.3, abs=0.01) and busy["interfered"] is True


def test_a_share_counts_only_from_min_ticks_on():
    assert interference.MIN_TICKS >= 2  # one tick is the counters' granularity
    short = socket_rec(0.02, 0.02)  # window 50 ms on 2 CPUs: 10 ticks in all
    below = (interference.MIN_TICKS - 1) * TICK
    # steal: MIN_TICKS - 1 ticks are 20 % of a 50 ms run, yet not interference
    stolen = {**short, "cpu_steal_s": below, "steal_share": below / 0.1}
    assert stolen["steal_share"] > interference.STEAL_LIMIT
    assert interference.fields(0, 4, [0, 1], stolen, window_s=0.05)["interfered"] is False
    at = interference.MIN_TICKS * TICK
    assert interference.fields(0, 4, [0, 1], {**short, "cpu_steal_s": at, "steal_share": at / 0.1}, window_s=0.05)[
        "interfered"
    ]
    # ... and over the limit in ticks but not in share: not interference either
    long_run = {**socket_rec(1.0, 1.0), "cpu_steal_s": at, "steal_share": at / 20.0}
    assert interference.fields(0, round(2.0 * CLK_TCK), [0, 1], long_run, window_s=10.0)["interfered"] is False
    # other processes' CPU time: the same floor
    few = interference.fields(0, round((0.04 + below) * CLK_TCK), [0, 1], short, window_s=0.05)
    assert few["other_cpu_share"] > interference.OTHER_CPU_LIMIT and few["interfered"] is False
    many = interference.fields(0, round((0.04 + at) * CLK_TCK), [0, 1], short, window_s=0.05)
    assert many["interfered"] is True
    # the rule is one sentence the report can quote
    assert f"{interference.MIN_TICKS} ticks" in interference.RULE


def test_own_cpu_is_the_process_or_the_client_plus_the_server():
    assert interference.own_cpu_s({"user_cpu_s": 0.5, "system_cpu_s": 0.25}) == pytest.approx(0.75)
    assert interference.own_cpu_s(socket_rec(0.3, 0.5)) == pytest.approx(0.8)
    # the client never started, the server did
    rec = {"user_cpu_s": None, "system_cpu_s": None, "server": {"user_cpu_s": 0.1, "system_cpu_s": 0.1}}
    assert interference.own_cpu_s(rec) == pytest.approx(0.2)
    assert interference.own_cpu_s({"user_cpu_s": None, "system_cpu_s": None}) is None


def _task(bench: str, placement: str, cores: int = 1) -> Task:
    params = {"connections": 2, "round_trips": 10, "read_buffer_bytes": 4}
    if bench == "echo_flood":
        params = {"connections": 2, "bytes_per_connection": 1024, "mode": "flood", "duration_s": 0.1}
    return Task(
        benchmark=bench,
        language="go",
        variant="fair",
        params=params,
        cores=cores,
        config_id=f"{bench}/go/go",
        group_id="g",
        timeout_s=10.0,
        family="socket",
        options=SocketOptions("go", placement),
    )


def test_a_socket_run_is_measured_on_its_server_and_client_cpus():
    lau = SimpleNamespace(allowed_cpus=[0, 1, 2, 3])
    assert sockets.run_cpus(lau, _task("tcp_pingpong", "split")) == [0, 1]
    assert sockets.run_cpus(lau, _task("tcp_pingpong", "shared")) == [0]
    assert sockets.run_cpus(lau, _task("echo_flood", "split")) == [0, 1, 2, 3]  # the load generator takes the rest
    assert sockets.run_cpus(lau, _task("tcp_pingpong", "split", cores=3)) == [0, 1, 2, 3]  # refused: every CPU
    assert sockets.SOCKET.cpus(lau, _task("tcp_pingpong", "split")) == [0, 1]


@pytest.mark.parametrize("other_s,flagged", [(0.0, False), (1.0, True)])
def test_launcher_records_a_socket_runs_interference(tmp_path, monkeypatch, other_s, flagged):
    """Launcher.run around a socket run (a fake runner: nothing is started) records
    other_cpu_s, other_cpu_share and interfered, the client and server subtracted."""
    client_s, server_s = 0.2, 0.6
    measured_on = []

    def fake_runner(lau, task):
        time.sleep(0.05)
        return socket_rec(client_s, server_s)

    def busy_ticks(cpus):
        measured_on.append(cpus)
        return next(ticks)

    ticks = iter([1000, 1000 + round((client_s + server_s + other_s) * CLK_TCK)])
    monkeypatch.setattr(interference, "busy_ticks", busy_ticks)
    monkeypatch.setattr(interference, "harness_cpu_s", lambda: 0.0, raising=False)
    lau = make_launcher(tmp_path)
    lau.families = {**lau.families, "socket": launch.Family(fake_runner, sockets.run_cpus)}
    t = _task("tcp_pingpong", default_placement())
    rec, _ = lau.run(t)
    assert rec["interfered"] is flagged  # old behaviour: no measure (nan), the load average decided
    assert rec["other_cpu_s"] == pytest.approx(other_s, abs=TICK)
    assert rec["other_cpu_share"] is not None and 0 <= rec["other_cpu_share"] <= 1
    assert "harness_cpus" in rec and rec["steal_share"] is not None
    assert measured_on == [sockets.run_cpus(lau, t)] * 2  # the server's and the client's CPUs


def test_the_report_uses_the_measured_flag_of_a_socket_run_not_the_load_average():
    runs = pd.DataFrame(
        {
            "warmup": [False, False, False],
            "table": ["tcp_pingpong"] * 3,
            "language": ["go"] * 3,
            "load_avg_1m_before": [3.0, 3.0, 3.0],  # >= 2 CPUs: the old fallback's "busy"
            "steal_share": [0.0, 0.0, 0.0],
            "other_cpu_share": [0.01, 0.4, float("nan")],
            "interfered": [False, True, None],  # measured, measured, an old record
        }
    )
    f = contention.contention_flags(SimpleNamespace(runs=runs, info={"logical_cpus": 2}))
    assert f["contended"].tolist() == [False, True, True]


@pytest.mark.native
@pytest.mark.usefixtures("no_leftover_processes")
def test_a_real_socket_run_records_its_interference(launcher):
    from serverbench import contract

    if not contract.executable("go").exists():
        pytest.skip("not built: go (scripts/build.sh)")
    rec, _ = launcher.run(_task("tcp_pingpong", default_placement()))
    assert rec["status"] == "ok", rec["status_reason"]
    assert records.raw_errors(rec) is None, records.raw_errors(rec)
    assert isinstance(rec["interfered"], bool)
    assert rec["other_cpu_s"] >= 0 and 0 <= rec["other_cpu_share"] <= 1
    cpus = sorted(set(rec["client_cpus"]) | set(rec["server_cpus"]))
    if len(os.sched_getaffinity(0)) > len(cpus):  # a CPU left free: the harness moved to it
        assert rec["harness_cpus"] and not set(rec["harness_cpus"]) & set(cpus)
