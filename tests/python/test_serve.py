"""`python -m serverbench serve`: started in the background (stdin from /dev/null) it keeps
serving until a signal, --duration-s or a `stop` line; bad input is exit 2 in one line."""

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

pytestmark = pytest.mark.native


def _need(lang):
    if not contract.executable(lang).exists():
        pytest.skip(f"not built: {lang} (scripts/build.sh)")


def _serve(*args, stdin=subprocess.DEVNULL):
    return subprocess.Popen(
        [sys.executable, "-m", "serverbench", "serve", "echo_flood", *args],
        stdin=stdin,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


def _port(proc) -> int:
    line = proc.stdout.readline()
    assert line, proc.stderr.read()
    return json.loads(line)["port"]


def _echo(port: int, payload: bytes) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        s.sendall(payload)
        got = b""
        while len(got) < len(payload):
            chunk = s.recv(65536)
            if not chunk:
                break
            got += chunk
    return got


def _finish(proc, timeout=20):
    out, err = proc.communicate(timeout=timeout)
    lines = [json.loads(x) for x in out.splitlines() if x.strip().startswith("{")]
    return proc.returncode, lines[-1], err


def _descendants_gone(pid_list):
    return not [p for p in pid_list if psutil.pid_exists(p) and psutil.Process(p).status() != psutil.STATUS_ZOMBIE]


@pytest.mark.parametrize("lang", ["c", "go"])
def test_background_serve_outlives_stdin_and_stops_on_sigterm(lang):
    _need(lang)
    proc = _serve("--server", lang)
    try:
        port = _port(proc)
        children = [c.pid for c in psutil.Process(proc.pid).children(recursive=True)]
        assert children, "the server runs as a child process"
        time.sleep(1.5)  # stdin (/dev/null) has long ended: the server must still serve
        assert proc.poll() is None
        assert _echo(port, b"x" * 3000) == b"x" * 3000
        proc.send_signal(signal.SIGTERM)
        code, record, _ = _finish(proc)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert code == 0
    assert record["metrics"]["stop_reason"] == "signal"
    assert record["metrics"]["bytes_read"] == 3000 and record["metrics"]["connections_accepted"] == 1
    assert _descendants_gone(children)


def test_duration_stops_it_by_itself():
    _need("c")
    proc = _serve("--server", "c", "--duration-s", "1")
    port = _port(proc)
    assert _echo(port, b"y" * 100) == b"y" * 100
    code, record, _ = _finish(proc)
    assert code == 0 and record["metrics"]["bytes_read"] == 100


def test_a_stop_line_from_a_pipe_stops_it():
    _need("c")
    proc = _serve("--server", "c", stdin=subprocess.PIPE)
    _port(proc)
    proc.stdin.write("stop\n")
    proc.stdin.flush()
    code, record, _ = _finish(proc)
    assert code == 0 and record["metrics"]["stop_reason"] == "stop_line"


@pytest.mark.shares_cpu  # checks what the program printed, times nothing
def test_bad_input_is_exit_2_in_one_line():
    _need("c")
    busy = socket.socket()
    busy.bind(("127.0.0.1", 0))
    busy.listen()
    try:
        cases = {
            ("--server", "c", "--port", "70000"): "--port",
            ("--server", "c", "--port", str(busy.getsockname()[1])): "in use",
            ("--server", "cobol"): "cobol",
            ("--server", "c", "--duration-s", "0"): "--duration-s",
        }
        for args, needle in cases.items():
            r = subprocess.run(
                [sys.executable, "-m", "serverbench", "serve", "echo_flood", *args],
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                timeout=30,
            )
            lines = r.stderr.strip().splitlines()
            assert r.returncode == 2, (args, r.stderr)
            assert len(lines) == 1 and needle in lines[0], (args, r.stderr)
    finally:
        busy.close()
