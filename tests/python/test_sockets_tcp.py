"""tcp_pingpong through the socket lifecycle (harness.sockets) at tiny sizes: every
client x server pair with the 4-byte and the 1-byte read buffer, the original's buffer on
purpose (variant paper), bad input, a server killed mid-run, an interrupted run, and
nothing left behind (no child process, no listening port)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import threading
import time

import psutil
import pytest

from serverbench import contract
from serverbench.harness.planning.task import Task
from serverbench.harness.sockets import run as sockets
from serverbench.plugins import SocketOptions
from socket_helpers import default_placement, run

pytestmark = [pytest.mark.native, pytest.mark.usefixtures("no_leftover_processes")]

LANGS = ("go", "erlang", "scala")
C, R = 2, 50  # tiny: 2 connections x 50 round trips


def _built(lang):
    return contract.executable(lang).exists()


def _need(*langs):
    missing = [lang for lang in langs if not _built(lang)]
    if missing:
        pytest.skip(f"not built: {', '.join(missing)} (scripts/build.sh)")


def task(client, server, k=4, variant="fair", conns=C, rounds=R, placement=None, timeout_s=60.0):
    params = {"connections": conns, "round_trips": rounds, "read_buffer_bytes": k}
    return Task(
        benchmark="tcp_pingpong",
        language=client,
        variant=variant,
        params=params,
        cores=1,
        config_id=f"tcp_pingpong/{client}/{server}",
        group_id="g",
        timeout_s=timeout_s,
        family="socket",
        options=SocketOptions(server, placement or default_placement()),
    )


PAIRS = [(c, s) for c in LANGS for s in LANGS]


@pytest.mark.parametrize("client,server", PAIRS)
def test_pair_k4_moves_every_byte(launcher, client, server):
    _need(client, server)
    rec = run(launcher, task(client, server))
    assert rec["status"] == "ok", (rec["status_reason"], rec["stderr_tail"], rec["server"]["stderr_tail"])
    m, sm = rec["metrics"], rec["server"]["record"]["metrics"]
    assert m["bytes_written"] == m["bytes_read"] == 4 * C * R
    assert sm["bytes_read"] == sm["bytes_written"] == 4 * C * R
    assert m["round_trips_completed"] == m["round_trips_counted"] == C * R
    assert m["true_us_per_round_trip"] == pytest.approx(m["reported_us_per_round_trip"])
    assert rec["server_language"] == server and rec["language"] == client
    assert rec["placement"] == default_placement() and rec["client_cpus"] and rec["server_cpus"]
    if rec["placement"] == "split":
        assert not set(rec["client_cpus"]) & set(rec["server_cpus"])
    assert rec["server"]["status"] == "ok" and rec["server"]["record"]["metrics"]["stop_reason"] == "stdin_eof"


@pytest.mark.parametrize("client,server", PAIRS)
def test_pair_k1_is_invalid_and_says_why(launcher, client, server):
    _need(client, server)
    rec = run(launcher, task(client, server, k=1))
    assert rec["status"] == "invalid", rec["status_reason"]
    m = rec["metrics"]
    assert m["bytes_written"] == 4 * C * R
    assert m["bytes_read"] == C * R  # the client stopped after a quarter of the bytes
    assert m["round_trips_counted"] == C * R and m["round_trips_completed"] == C * (R // 4)
    completed = m["round_trips_completed"]
    assert m["true_us_per_round_trip"] == pytest.approx(m["reported_us_per_round_trip"] * C * R / completed)
    assert rec["validation"]["ok"] is False and "read buffer 1 byte" in rec["validation"]["reason"]
    assert rec["server"]["record"]["validation"]["ok"] is False


@pytest.mark.parametrize("lang", ["scala", "go"])
def test_k1_on_purpose_is_the_paper_variant(launcher, lang):
    _need(lang)
    rec = run(launcher, task(lang, lang, k=1, variant="paper"))
    assert rec["status"] == "ok", rec["status_reason"]
    assert rec["variant"] == "paper" and rec["metrics"]["bytes_read"] == C * R
    assert rec["server"]["record"]["metrics"]["bytes_read"] <= 4 * C * R


# ---- bad input -------------------------------------------------------------------------
def _native(lang, *args, timeout=60, stdin=subprocess.DEVNULL):
    argv = [
        s.replace("{exe}", str(contract.executable(lang))).replace("{cores}", "1").replace("{heap_mb}", "256")
        for s in contract.language(lang)["command"]
    ]
    env = {
        **os.environ,
        **{
            k: v.replace("{cores}", "1").replace("{process_limit}", "1048576")
            for k, v in contract.language(lang).get("env", {}).items()
        },
    }
    return subprocess.run(argv + list(args), stdin=stdin, capture_output=True, text=True, timeout=timeout, env=env)


@pytest.mark.shares_cpu  # checks what the program printed, times nothing
@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize(
    "args",
    [
        ["server", "--read-buffer-bytes", "0"],
        ["client", "--port", "1", "--connections", "1", "--round-trips", "1", "--read-buffer-bytes", "0"],
        ["client", "--port", "1", "--connections", "0", "--round-trips", "1"],
        ["client", "--port", "1", "--connections", "70000", "--round-trips", "1"],
        ["client", "--host", "10.0.0.1", "--port", "1", "--connections", "1", "--round-trips", "1"],
    ],
)
def test_bad_flags_exit_2(lang, args):
    _need(lang)
    r = _native(lang, "tcp_pingpong", *args)
    assert r.returncode == 2 and r.stdout == "" and r.stderr.startswith("error: "), (r.returncode, r.stderr)


def _closed_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens there now
    return port


@pytest.mark.parametrize("lang", LANGS)
def test_client_against_a_closed_port_fails_fast(lang):
    _need(lang)
    t0 = time.monotonic()
    r = _native(
        lang,
        "tcp_pingpong",
        "client",
        "--port",
        str(_closed_port()),
        "--connections",
        "2",
        "--round-trips",
        "1",
        "--timeout-s",
        "5",
        timeout=60,
    )
    assert r.returncode == 1 and r.stdout == "", (r.returncode, r.stdout)
    assert "error: cannot connect" in r.stderr
    assert time.monotonic() - t0 < 30  # JVM start-up on a busy machine included; the client's own bound is 5 s


@pytest.mark.shares_cpu  # checks what the program printed, times nothing
@pytest.mark.parametrize("lang", LANGS)
def test_server_on_a_port_in_use_fails_with_one_line(lang):
    _need(lang)
    holder = socket.socket()
    holder.bind(("127.0.0.1", 0))
    holder.listen(1)
    try:
        r = _native(lang, "tcp_pingpong", "server", "--port", str(holder.getsockname()[1]))
    finally:
        holder.close()
    assert r.returncode == 1 and r.stdout == ""
    assert "error: cannot listen" in r.stderr


def test_harness_refuses_sizes_the_limits_cannot_hold(launcher):
    with pytest.raises(sockets.SocketLimitError, match="ip_local_port_range|RLIMIT_NOFILE"):
        sockets.check_connections(70_000)
    with pytest.raises(sockets.SocketLimitError, match="at least 1"):
        sockets.check_connections(0)
    rec = run(launcher, task("go", "go", conns=70_000))
    assert rec["status"] == "failed_to_start" and rec["status_reason"].startswith("refused: ")
    assert "\n" not in rec["status_reason"]


def test_placement_shared_and_split(launcher):
    cpus = sorted(os.sched_getaffinity(0))
    assert sockets.placement_cpus(cpus, 1, "shared") == ([cpus[0]], [cpus[0]])
    if len(cpus) >= 2:
        assert sockets.placement_cpus(cpus, 1, "split") == ([cpus[0]], [cpus[1]])
    with pytest.raises(sockets.SocketLimitError, match="needs"):
        sockets.placement_cpus(cpus, len(cpus) + 1, "split")


def test_server_killed_mid_run_is_crashed_and_nothing_is_left(launcher, monkeypatch):
    _need("go")
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
        time.sleep(1.0)  # the client is running by now (the server listens within ms)
        os.kill(started[0].proc.pid, signal.SIGKILL)

    th = threading.Thread(target=killer)
    th.start()
    rec = run(launcher, task("go", "go", conns=2, rounds=10_000_000, timeout_s=30))
    th.join()
    assert rec["status"] == "crashed", rec["status_reason"]
    assert rec["server"]["signal"] == signal.SIGKILL or "server" in rec["status_reason"]


def test_interrupted_run_leaves_nothing(launcher):
    """Ctrl-C while the client runs: both process groups are killed and reaped, no record."""
    _need("go")
    main = threading.get_ident()
    returned = threading.Event()

    def client_running() -> bool:
        for p in psutil.Process(os.getpid()).children(recursive=True):
            try:
                if "client" in p.cmdline():
                    return True
            except psutil.Error:
                pass
        return False

    def interrupt():
        # wait for the client itself (a fixed sleep raced the server's start-up on a loaded machine)
        deadline = time.monotonic() + 60
        while not returned.is_set() and time.monotonic() < deadline and not client_running():
            time.sleep(0.05)
        time.sleep(0.2)
        if not returned.is_set():
            signal.pthread_kill(main, signal.SIGINT)

    # a test run started in the background has SIGINT ignored (shells do that for `&`): Ctrl-C's handler here
    old = signal.signal(signal.SIGINT, signal.default_int_handler)
    th = threading.Thread(target=interrupt)
    th.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            rec, _ = launcher.run(task("go", "go", conns=2, rounds=10_000_000, timeout_s=60))
            returned.set()
            pytest.fail(f"the run ended before the interrupt: {rec['status']} ({rec['status_reason']})")
    finally:
        returned.set()
        th.join()
        signal.signal(signal.SIGINT, old)
    # the autouse fixture then checks that no child process is left


def test_serve_command_prints_address_and_stops_after_its_duration():
    """A pipe's EOF does not stop `serve` (tests/python/test_serve.py); --duration-s does, by
    closing the server's stdin."""
    _need("go")
    from serverbench import paths

    py = [os.sys.executable, "-m", "serverbench", "serve", "tcp_pingpong", "--server", "go", "--duration-s", "0.5"]
    r = subprocess.run(
        py,
        input="",
        capture_output=True,
        text=True,
        timeout=60,
        cwd=str(paths.repo_root()) if hasattr(paths, "repo_root") else None,
    )
    lines = r.stdout.strip().splitlines()
    assert r.returncode == 0, r.stderr
    assert '"event":"listening"' in lines[0] and '"stop_reason":"stdin_eof"' in lines[-1]
