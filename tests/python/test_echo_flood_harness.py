"""echo_flood's harness parts: the saturation fields sampled from /proc (sockets_probe),
the kernel-memory guard of large runs (monkeypatched readers), the byte cross-check
against a server lying about its counters (sockets_bytes), the python_threads server's
bounded stop, config_ids without the timeouts, and how a client's own limit and reason
reach the record's status."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time

import psutil
import pytest

from serverbench import contract
from serverbench.benchmarks.echo_flood import sockets as echo_sockets
from serverbench.harness.running import pinned
from serverbench.harness.sockets import accounting as sockets_bytes
from serverbench.harness.sockets import probe as sockets_probe
from serverbench.harness.sockets import procfs
from serverbench.harness.sockets import run as sockets
from serverbench.rawdata import records
from socket_helpers import _need, broken_launcher, run, task

pytestmark = [pytest.mark.native, pytest.mark.usefixtures("no_leftover_processes")]


# ---- saturation: the server seen from /proc over the sending window (harness.sockets.probe) ----
def test_saturation_row_from_proc(launcher):
    _need("c")
    rec = run(launcher, task("c", conns=8, mode="saturate", duration_s=2.0, timeout_s=45.0))
    assert rec["status"] == "ok", rec["status_reason"]
    assert rec["params"]["client_timeout_s"] == 40.0  # the real timeout (the run's less the margin)
    # the window: from min(0.2 x 2 s, 1 s) = 0.4 s to 2 s - min(0.1 x 2 s, 0.25 s) = 1.8 s after the client's start
    assert 1.2 <= rec["saturation_window_s"] <= 1.5, rec["saturation_window_s"]
    cpu = rec["server_cpu_user_pct"] + rec["server_cpu_system_pct"]
    assert 1.0 < cpu <= 100 * len(rec["server_cpus"]) + 5, cpu  # one pinned CPU at most (tick rounding)
    assert rec["server_threads"] == 1  # the c server: one thread
    assert rec["server_ctx_switches_per_s"] > 0
    assert rec["host_ctx_switches_per_s"] >= 0.9 * rec["server_ctx_switches_per_s"]
    assert 1 << 20 < rec["server_rss_peak_bytes"] < 1 << 30
    assert rec["tcp_mem_bytes_peak"] > 0 and rec["tcp_mem_bytes_peak"] % os.sysconf("SC_PAGE_SIZE") == 0
    assert rec["sockets_used_peak"] >= 2 * 8  # both ends of every connection (one namespace)


def test_flood_records_have_null_saturation_fields(launcher):
    _need("c")
    rec = run(launcher, task("c", conns=2))
    assert rec["status"] == "ok", rec["status_reason"]
    assert all(rec[f] is None for f in sockets_probe.FIELDS)


_CHILD = """
import sys, threading, time
phase, threads = sys.argv[1], int(sys.argv[2])
t0 = time.monotonic()
def naps():
    while time.monotonic() - t0 < 3.5:
        time.sleep(0.001)
for _ in range(threads):
    threading.Thread(target=naps).start()
if phase == "burn_first":  # busy only during its 'start-up', then idle
    while time.monotonic() - t0 < 0.5:
        pass
    time.sleep(3.0)
elif phase == "burn_later":  # idle during 'start-up', then busy
    time.sleep(0.8)
    while time.monotonic() - t0 < 3.5:
        pass
"""


def _probe_child(phase: str, threads: int = 0) -> dict:
    child = subprocess.Popen([sys.executable, "-c", _CHILD, phase, str(threads)])
    try:
        probe = sockets_probe.Probe(child.pid, saturate_s=3.0, host_floor=None)
        probe.start(client_pid=child.pid)
        time.sleep(3.2)
        probe.stop()
    finally:
        child.wait(timeout=30)
    return probe.fields()


def test_probe_cpu_is_over_the_window_not_the_lifetime():
    f = _probe_child("burn_first")  # 0.5 s of CPU before the window (0.6 s - 2.75 s): none inside
    assert abs(f["saturation_window_s"] - 2.15) < 0.2, f
    assert f["server_cpu_user_pct"] + f["server_cpu_system_pct"] < 10, f
    f = _probe_child("burn_later")  # busy through the window
    assert f["server_cpu_user_pct"] > 40, f


def test_probe_sums_context_switches_over_threads():
    # four threads nap 1 ms at a time (voluntary switches); the main thread only waits for them
    f = _probe_child("naps", threads=4)
    assert f["server_threads"] == 5, f
    assert f["server_ctx_switches_per_s"] > 1000, f  # the main thread alone would show ~0
    assert f["host_ctx_switches_per_s"] >= 0.9 * f["server_ctx_switches_per_s"], f


# ---- the kernel-memory guard of large runs (monkeypatched /proc readers) ----------------
def _fake_after(monkeypatch, name: str, after_s: float, value):
    """Replace procfs.<name> (what the probe reads) by the real reader until `after_s` after its first call."""
    real, first = getattr(procfs, name), []

    def fake():
        first.append(first[0] if first else time.monotonic())
        return value(real()) if time.monotonic() - first[0] >= after_s else real()

    monkeypatch.setattr(procfs, name, fake)


def _at_pressure(ss):
    return {**ss, "tcp_mem_pages": sockets_probe.tcp_guard_pages()}


def test_tcp_guard_is_near_the_hard_limit_not_the_pressure_threshold():
    lo, pressure, high = procfs.read_tcp_mem()
    guard = sockets_probe.tcp_guard_pages()
    assert pressure < guard < high and guard == int(high * 0.9)


@pytest.mark.parametrize(
    "reader,value,named",
    [
        ("read_sockstat", _at_pressure, "of net.ipv4.tcp_mem's hard limit"),
        ("read_mem_available", lambda _: 100 << 20, "below the harness's host floor of 1073741824 bytes"),
    ],
)
def test_large_run_refused_before_it_starts(launcher, monkeypatch, reader, value, named):
    _need("c")
    monkeypatch.setattr(sockets_probe, "GUARD_MIN_CONNECTIONS", 4)  # "large" = 4 connections here
    _fake_after(monkeypatch, reader, 0.0, value)
    started, real_init = [], sockets.Server.__init__

    def spy(self, *a, **kw):
        started.append(1)
        real_init(self, *a, **kw)

    monkeypatch.setattr(sockets.Server, "__init__", spy)
    rec = run(launcher, task("c", conns=4))
    assert rec["status"] == "failed_to_start" and not started  # no server was started
    why = rec["status_reason"]
    assert why.startswith("refused: 4 connections: ") and named in why, why
    small = run(launcher, task("c", conns=3))  # below the size the floors apply to: runs
    assert small["status"] == "ok" and started == [1], small["status_reason"]


@pytest.mark.parametrize(
    "reader,value,named",
    [
        ("read_sockstat", _at_pressure, "kernel TCP memory"),
        ("read_mem_available", lambda _: 100 << 20, "MemAvailable"),
    ],
)
def test_guard_stops_a_large_run_cleanly(launcher, monkeypatch, reader, value, named):
    _need("c")
    monkeypatch.setattr(sockets_probe, "GUARD_MIN_CONNECTIONS", 4)
    _fake_after(monkeypatch, reader, 1.5, value)  # the floor is crossed 1.5 s into the run
    t0 = time.monotonic()
    rec = run(launcher, task("c", conns=4, mode="saturate", duration_s=30.0, timeout_s=60.0))
    assert time.monotonic() - t0 < 15, "the guard did not stop the 30 s run"
    assert rec["status"] == "over_memory_budget", (rec["status"], rec["status_reason"])
    assert rec["status_reason"].startswith("stopped by the harness") and named in rec["status_reason"]
    assert rec["signal"] == signal.SIGKILL  # the client was killed ...
    s = rec["server"]  # ... the server stopped as after any run: its stdin closed, its record printed
    assert s["status"] == "ok" and s["record"]["metrics"]["stop_reason"] == "stdin_eof", s["status_reason"]
    with pytest.raises(ConnectionRefusedError):  # nothing listens on its port any more
        socket.create_connection(("127.0.0.1", s["port"]), timeout=5).close()
    # the no_leftover_processes fixture checks that no process is left


# ---- byte accounting across the two records (harness.sockets.accounting) ---------------------
def _liar(tmp_path, mode):
    return broken_launcher(tmp_path, mode)


def test_server_lying_about_its_counters_is_invalid(tmp_path):
    _need("c")
    rec = run(_liar(tmp_path, "--lie-under"), task("python_threads", conns=2, d=4 * 32768))
    assert rec["validation"]["ok"] is True  # every byte came back right: only the cross-check sees it
    assert rec["status"] == "invalid"
    assert rec["status_reason"] == (
        "byte accounting: the client wrote 262144 and verified 262144 bytes; "
        "the server says it read 229376 and wrote 229376"
    )


def test_server_lying_in_saturate_mode_is_invalid(tmp_path):
    _need("c")
    rec = run(_liar(tmp_path, "--lie-over"), task("python_threads", conns=2, mode="saturate", duration_s=1.0))
    assert rec["validation"]["ok"] is True and rec["status"] == "invalid"
    m = rec["metrics"]
    said = rec["server"]["record"]["metrics"]["bytes_read"]
    assert rec["status_reason"] == (
        f"byte accounting: the server says it read {said} bytes but the client wrote only {m['bytes_written']}"
    )


def test_saturate_tolerance_is_the_in_flight_window():
    w = echo_sockets.in_flight_window(2)
    assert w == (5 * 2 + 1) * 32768
    p = {"mode": "saturate", "connections": 2}
    client = {"bytes_written": 10_000_000 + w, "bytes_verified": 10_000_000}
    ok = [(10_000_000, 10_000_000), (10_000_000 + w, 10_000_000 + w), (10_000_000 + w, 10_000_000 + 5)]
    for read, wrote in ok:  # anything between what the client verified and what it wrote
        assert sockets_bytes.mismatch("echo_flood", p, client, {"bytes_read": read, "bytes_written": wrote}) is None
    bad = {
        (10_000_000, 9_999_999): "verified 10000000 bytes but the server says it wrote only 9999999",
        (10_000_001 + w, 10_000_000): f"read {10_000_001 + w} bytes but the client wrote only {10_000_000 + w}",
        (10_000_000, 10_000_001): "wrote 10000001 bytes but read only 10000000",
    }
    for (read, wrote), why in bad.items():
        assert why in sockets_bytes.mismatch("echo_flood", p, client, {"bytes_read": read, "bytes_written": wrote})
    flood, fp = {"bytes_written": 100, "bytes_verified": 100}, {"mode": "flood"}
    assert sockets_bytes.mismatch("echo_flood", fp, flood, {"bytes_read": 100, "bytes_written": 100}) is None
    assert "read 100 and wrote 99" in sockets_bytes.mismatch(
        "echo_flood", fp, flood, {"bytes_read": 100, "bytes_written": 99}
    )


# ---- python_threads stops fast whatever its thread count --------------------------------
def _tree(pid: int) -> list[psutil.Process]:
    p = psutil.Process(pid)
    return [p, *p.children(recursive=True)]


@pytest.mark.parametrize("how", ["busy", "starved"])
def test_python_threads_stops_within_3_s_with_512_connections(how):
    """512 connections, half of them blocked in send (their client never reads). 'starved':
    the connection threads cannot run at all (the worker is SIGSTOPped), as when thousands
    of them wake at once and queue for the GIL: a one-process server then did not see its
    stdin close for 6-40 s at 16,384 connections. The stop must not depend on them."""
    _need("python_threads")
    argv = [str(contract.executable("python_threads")), "python_threads", "echo_flood", "server", "--port", "0"]
    pre = pinned.make_preexec(sorted(os.sched_getaffinity(0)), raise_nofile=True)  # dies with the test
    srv = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, preexec_fn=pre)
    conns, worker = [], None
    try:
        port = json.loads(srv.stdout.readline())["port"]
        payload = b"x" * (256 * 1024)
        for i in range(512):
            s = socket.create_connection(("127.0.0.1", port), timeout=10)
            s.setblocking(False)
            if i % 2 == 0:  # half send and never read: their threads end up blocked in send
                try:
                    s.send(payload)
                except BlockingIOError:
                    pass
            conns.append(s)  # the other half stay silent: their threads block in recv
        deadline = time.monotonic() + 60
        while sum(p.num_threads() for p in _tree(srv.pid)) < 512 and time.monotonic() < deadline:
            time.sleep(0.1)
        tree = _tree(srv.pid)
        assert sum(p.num_threads() for p in tree) >= 512, "the server did not start a thread per connection"
        worker = tree[-1]
        time.sleep(1.0)
        if how == "starved":
            worker.send_signal(signal.SIGSTOP)
        t0 = time.monotonic()
        srv.stdin.close()
        srv.wait(timeout=30)
        took = time.monotonic() - t0
        rec = json.loads(srv.stdout.read().decode().strip().splitlines()[-1])
    finally:
        for s in conns:
            s.close()
        if srv.poll() is None:
            srv.kill()
            srv.wait()
    assert took < 3.0, f"python_threads took {took:.2f} s to stop with 512 connections ({how})"
    assert srv.returncode == 0 and records.native_errors(rec) is None, records.native_errors(rec)
    m = rec["metrics"]
    assert m["connections_accepted"] == 512 and m["stop_reason"] == "stdin_eof"
    assert 0 < m["bytes_written"] <= m["bytes_read"] <= 256 * 256 * 1024
    assert m["connection_errors"] == 0  # the stop closes the connections; that is not their error
    assert not psutil.pid_exists(worker.pid) or worker.status() == psutil.STATUS_ZOMBIE


# ---- config_id: what is measured, not the timeouts the harness sets -----------------------
def test_socket_config_ids_leave_out_the_timeouts():
    from serverbench.harness.planning.plan import make_plan
    from serverbench.harness.planning.profiles import load_profile

    def ids(timeout_s):
        ov = {b: {"timeout_s": timeout_s} for b in ("echo_flood", "tcp_pingpong")}
        plan = make_plan(load_profile("quick", ov), benchmarks=["echo_flood", "tcp_pingpong"])
        return sorted({(t.config_id, t.group_id) for t in plan.tasks})

    a = ids(60.0)
    assert a and not any("timeout" in c or "timeout" in g for c, g in a), a[:3]
    assert not any("client_threads" in c + g for c, g in a), a[:3]  # set from the machine's CPUs
    assert ids(300.0) == a  # a different run timeout is the same configuration
    go = "echo_flood/c/fair/c1/bytes_per_connection=32768,connections=64,duration_s=5,mode=flood/server_language=go"
    assert f"{go}/placement=split" in {c for c, _ in a}


# ---- a client that stopped itself at its own limit is the run's timeout ------------------
def _status_of(client_reason: str | None, ok: bool) -> tuple[str, str]:
    rec = {
        "status": "ok" if ok else "invalid",
        "status_reason": None if ok else "the program's own validation failed (validation.ok false)",
        "validation": {"ok": ok, "reason": client_reason},
        "metrics": {"bytes_written": 1, "bytes_read": 1, "bytes_verified": 1},
        "server": {"status": "ok", "language": "python_threads", "record": {"metrics": {}}},
    }
    sockets._overall_status(rec, task("python_threads"))
    return rec["status"], rec["status_reason"]


def test_client_at_its_own_limit_is_a_timeout_not_wrong_work():
    status, why = _status_of("timed out after 895.010 s with 3315 of 16384 connections complete", ok=False)
    assert status == "timeout" and "3315 of 16384" in why and f"{sockets.CLIENT_MARGIN_S:g} s" in why
    status, why = _status_of("connection 7: echoed byte at offset 12 is 3, expected 4", ok=False)
    assert status == "invalid"  # wrong bytes stay invalid


def test_the_programs_own_reason_is_in_the_status_reason():
    from serverbench.harness.running import classify

    t = task("c")
    native = {
        "benchmark": "echo_flood",
        "role": "client",
        "language": "c",
        "variant": "fair",
        "params": dict(t.params),
        "metrics": {},
        "validation": {"ok": False, "reason": "connection 3: closed by the server after 0 of 32768 bytes echoed"},
        "runtime": {"name": "c", "version": "gcc", "schedulers": 1},
    }
    rec: dict = {}
    classify.accept_record(rec, t, native, 0, None)
    assert rec["status"] == "invalid"
    assert rec["status_reason"].endswith("closed by the server after 0 of 32768 bytes echoed; exit code 0")
