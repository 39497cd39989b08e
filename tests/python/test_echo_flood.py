"""echo_flood through the socket lifecycle (harness.sockets) at tiny sizes: the C load
generator against every echo server (both chunk multiples), a deliberately broken
server (recorded invalid), bad input (exit 2 naming the limit), a server killed
mid-flood (crashed), nothing left behind, and the load generator's --threads (its CPUs:
every one the server does not use). The harness's other parts for this benchmark are in
test_echo_flood_harness.py."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import threading
import time
from dataclasses import replace

import psutil
import pytest

from serverbench import contract
from serverbench.harness.sockets import run as sockets
from serverbench.rawdata import records
from socket_helpers import SERVERS, _need, broken_launcher, run, task

pytestmark = [pytest.mark.native, pytest.mark.usefixtures("no_leftover_processes")]


@pytest.mark.parametrize("server", SERVERS)
@pytest.mark.parametrize("conns,d", [(4, 32768), (3, 4 * 32768)])
def test_every_server_echoes_every_byte(launcher, server, conns, d):
    _need("c")
    _need(server)
    rec = run(launcher, task(server, conns, d))
    assert rec["status"] == "ok", (rec["status_reason"], rec["stderr_tail"], rec["server"]["stderr_tail"])
    m, sm = rec["metrics"], rec["server"]["record"]["metrics"]
    assert m["bytes_verified"] == m["bytes_written"] == conns * d
    assert sm["bytes_read"] == sm["bytes_written"] == conns * d  # the server counts what it echoed
    assert sm["connections_accepted"] == conns
    assert m["connections_completed"] == conns
    assert 0 < m["completion_median_s"] <= m["completion_p99_s"] <= m["completion_max_s"] <= m["elapsed_s"]
    assert m["client_cpu_user_s"] + m["client_cpu_system_s"] >= 0
    assert rec["server_language"] == server


def test_saturation_reports_client_delay(launcher):
    _need("c")
    rec = run(launcher, task("c", conns=4, mode="saturate", duration_s=1.0))
    assert rec["status"] == "ok", rec["status_reason"]
    assert rec["metrics"]["client_delay_s"] > 0 and rec["metrics"]["elapsed_s"] >= 1.0


def test_broken_server_is_invalid(tmp_path):
    _need("c")
    lau = broken_launcher(tmp_path)
    rec = run(lau, task("python_threads", conns=2, d=4 * 32768))
    assert rec["status"] == "invalid"
    assert "validation" in rec["status_reason"], rec["status_reason"]
    assert "expected" in rec["validation"]["reason"], rec["validation"]


# ---- the load generator's worker threads (--threads; the harness sets one per client CPU) ----
def _two_threads(monkeypatch):
    """Every client of the test runs with --threads 2, whatever CPUs this machine has."""
    real = sockets.client_params
    monkeypatch.setattr(sockets, "client_params", lambda t, cpus=None: {**real(t, cpus), "client_threads": 2})


@pytest.mark.parametrize("server", ["c", "go"])
def test_two_threads_echo_every_byte(launcher, monkeypatch, server):
    _need("c")
    _need(server)
    _two_threads(monkeypatch)
    conns, d = 3, 4 * 32768  # 3 connections: one thread gets 2, the other 1
    rec = run(launcher, task(server, conns, d))
    assert rec["status"] == "ok", (rec["status_reason"], rec["stderr_tail"], rec["server"]["stderr_tail"])
    assert rec["command"][rec["command"].index("--threads") + 1] == "2"
    m, sm = rec["metrics"], rec["server"]["record"]["metrics"]
    assert m["client_threads"] == 2 and rec["params"]["client_threads"] == 2 and rec["runtime"]["schedulers"] == 2
    assert m["bytes_verified"] == m["bytes_written"] == conns * d == sm["bytes_read"] == sm["bytes_written"]
    assert m["connections_completed"] == conns and m["connections_failed"] == 0
    assert 0 < m["completion_median_s"] <= m["completion_p99_s"] <= m["completion_max_s"] <= m["elapsed_s"]
    cpu = m["client_cpu_user_s"] + m["client_cpu_system_s"]  # share = CPU / (elapsed x threads); printed to 1e-6 s
    assert m["client_cpu_share"] == pytest.approx(cpu / (2 * m["elapsed_s"]), abs=2e-6 / m["elapsed_s"] + 2e-6)


def test_two_threads_saturate_runs_the_probe(launcher, monkeypatch):
    _need("c")
    _two_threads(monkeypatch)
    rec = run(launcher, task("c", conns=3, mode="saturate", duration_s=1.0))  # thread 0 runs the probe
    assert rec["status"] == "ok" and rec["metrics"]["client_threads"] == 2, rec["status_reason"]
    assert rec["metrics"]["client_delay_s"] > 0


def test_two_threads_broken_server_is_invalid(tmp_path, monkeypatch):
    _need("c")
    _two_threads(monkeypatch)
    lau = broken_launcher(tmp_path)
    rec = run(lau, task("python_threads", conns=3, d=4 * 32768))
    assert rec["status"] == "invalid" and rec["metrics"]["client_threads"] == 2
    assert "validation" in rec["status_reason"], rec["status_reason"]
    assert "expected" in rec["validation"]["reason"], rec["validation"]


def test_one_invalid_connection_stops_every_thread():
    """The first accepted connection gets one wrong byte back; the others are never echoed,
    so the thread(s) holding them wait for bytes that never come: only the early stop of
    the invalid thread ends them before --timeout-s."""
    _need("c")
    ls = socket.create_server(("127.0.0.1", 0))
    conns: list[socket.socket] = []

    def serve(c, bad):
        try:
            while data := c.recv(65536):
                if bad:
                    c.sendall(bytes([data[0] ^ 0xFF]) + data[1:])
        except OSError:
            pass

    def accept():
        try:
            while True:
                c, _ = ls.accept()
                conns.append(c)
                threading.Thread(target=serve, args=(c, len(conns) == 1), daemon=True).start()
        except OSError:
            pass

    threading.Thread(target=accept, daemon=True).start()
    try:
        t0 = time.monotonic()
        port = ls.getsockname()[1]
        r = _c(*f"echo_flood client --port {port} --connections 3 --threads 2 --timeout-s 25".split())
        took = time.monotonic() - t0
    finally:
        for c in (ls, *conns):
            try:
                c.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            c.close()
    assert r.returncode == 0, r.stderr
    rec = json.loads(r.stdout)
    assert records.native_errors(rec) is None, records.native_errors(rec)
    assert rec["validation"]["ok"] is False and "expected" in rec["validation"]["reason"], rec["validation"]
    assert rec["metrics"]["client_threads"] == 2 and rec["metrics"]["connections_failed"] == 1
    assert took < 10 and rec["metrics"]["elapsed_s"] < 10, (took, rec["metrics"])


def test_echo_flood_split_gives_the_load_generator_every_other_cpu():
    eight = [7, 0, 1, 2, 3, 4, 5, 6]  # a fake allowed-CPU list: nothing is pinned here
    assert sockets.placement_cpus(eight, 1, "split", "echo_flood") == ([0], [1, 2, 3, 4, 5, 6, 7])
    assert sockets.placement_cpus(eight, 2, "split", "echo_flood") == ([0, 1], [2, 3, 4, 5, 6, 7])
    assert sockets.placement_cpus(eight, 2, "split", "tcp_pingpong") == ([0, 1], [2, 3])  # both sides under test
    assert sockets.placement_cpus(eight, 2, "shared", "echo_flood") == ([0, 1], [0, 1])
    assert sockets.placement_cpus([0, 1], 1, "split", "echo_flood") == ([0], [1])  # this VM: as before
    for cpus, cores in (([0], 1), ([0, 1, 2], 2)):  # impossible placements keep their errors
        with pytest.raises(sockets.SocketLimitError, match=f"split with {cores} CPU.* needs {2 * cores} CPUs"):
            sockets.placement_cpus(cpus, cores, "split", "echo_flood")
    t = task("c")
    assert sockets.client_params(t, [1, 2, 3, 4, 5, 6, 7])["client_threads"] == 7
    assert sockets.client_params(t, [1])["client_threads"] == 1
    assert sockets.client_params(t, list(range(1, 300)))["client_threads"] == 256  # the flag's max
    pingpong = replace(t, benchmark="tcp_pingpong", params={"connections": 1})
    assert "client_threads" not in sockets.client_params(pingpong, [1, 2, 3])  # no such flag there


def test_split_run_pins_the_load_generator_to_the_rest(launcher):
    _need("c")
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        pytest.skip("split needs 2 CPUs")
    rec = run(launcher, task("c", conns=2))
    assert rec["status"] == "ok", rec["status_reason"]
    assert rec["server_cpus"] == cpus[:1] and rec["client_cpus"] == cpus[1:]
    assert rec["params"]["client_threads"] == rec["metrics"]["client_threads"] == min(len(cpus) - 1, 2)
    assert rec["command"][rec["command"].index("--threads") + 1] == str(len(cpus) - 1)


def _c(*args):
    return subprocess.run([str(contract.executable("c")), *args], capture_output=True, text=True, timeout=30)


def test_bad_input_one_line():
    _need("c")
    r = _c("echo_flood", "client", "--port", "1", "--connections", "2", "--bytes-per-connection", "40000")
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "multiple of the 32768-byte chunk" in r.stderr
    r = _c("echo_flood", "client", "--port", "1", "--connections", "65000")
    assert r.returncode == 2 and "RLIMIT_NOFILE" in r.stderr and "raise it" in r.stderr
    r = _c("echo_flood", "client", "--port", "1", "--connections", "1")  # nothing listens on port 1
    assert r.returncode == 1 and r.stderr.startswith("error: cannot connect")


def test_unknown_server_and_limits_refused(launcher):
    with pytest.raises(ValueError, match="unknown language 'no_such_server'; known: c, "):
        contract.language("no_such_server")
    with pytest.raises(sockets.SocketLimitError, match="RLIMIT_NOFILE|ip_local_port_range"):
        sockets.check_connections(32_768) if psutil.Process().rlimit(psutil.RLIMIT_NOFILE)[1] < 40_000 else (
            sockets.check_connections(10**6)
        )


def test_server_killed_mid_flood_is_crashed(launcher, monkeypatch):
    _need("c")
    _need("python_threads")
    started = []
    real_init = sockets.Server.__init__

    def spy(self, *a, **kw):
        real_init(self, *a, **kw)
        started.append(self)

    monkeypatch.setattr(sockets.Server, "__init__", spy)

    def killer():
        deadline = time.monotonic() + 30
        while not started and time.monotonic() < deadline:
            time.sleep(0.02)
        time.sleep(1.5)
        os.kill(started[0].proc.pid, signal.SIGKILL)

    th = threading.Thread(target=killer)
    th.start()
    rec = run(launcher, task("python_threads", conns=2, mode="saturate", duration_s=20.0, timeout_s=40))
    th.join()
    assert rec["status"] in ("crashed", "invalid"), rec["status_reason"]
    assert rec["server"]["signal"] == signal.SIGKILL or "server" in (rec["status_reason"] or "")
