"""The production IRC servers at their best beside as shipped (src/ircd/, runtime setting
nodelay): started through serverbench-ircd-nodelay, every connection the daemon accepts has
TCP_NODELAY, read back from the socket by the preloaded shim and, independently, from a copy
of the daemon's own socket (pidfd_getfd); as shipped, none is touched and each has Nagle on.
The record's runtime.nodelay says which ran, and the harness checks it against the setting.
Also the launcher's command line: every usage case of tests/conformance/parser-cases.json."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path

import pytest

from serverbench import contract
from serverbench.rawdata import records
from socket_helpers import _need

pytestmark = [pytest.mark.native, pytest.mark.usefixtures("no_leftover_processes")]


def _nodelay_of_accepted(daemon_pid: int, client_ports: set[int]) -> dict[int, int]:
    """TCP_NODELAY of the daemon's sockets connected to these client ports, read from a copy
    of each taken with pidfd_getfd (Linux 5.6; a check independent of the shim's own report):
    {client port: 0 or 1}. Skips where the kernel or its permissions do not allow it."""
    import ctypes

    import psutil

    libc = ctypes.CDLL(None, use_errno=True)
    pidfd_getfd = 438  # the system call's number, the same on x86_64 and aarch64
    got = {}
    pidfd = os.pidfd_open(daemon_pid)
    try:
        for c in psutil.Process(daemon_pid).net_connections("tcp"):
            if not (c.raddr and c.raddr.port in client_ports):
                continue
            fd = libc.syscall(pidfd_getfd, pidfd, c.fd, 0)
            if fd < 0:
                pytest.skip(f"pidfd_getfd: {os.strerror(ctypes.get_errno())}")
            with socket.socket(fileno=fd) as dup:
                got[c.raddr.port] = dup.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)
    finally:
        os.close(pidfd)
    return got


def _serve(lang: str, settings: dict, report, clients: int = 3, seen: dict | None = None) -> dict:
    """Starts the daemon through its launcher, opens `clients` connections, stops it by the
    stop line and returns its record; the shim reports to `report`, and `seen` (if given)
    gets the TCP_NODELAY of the daemon's end of each client connection."""
    _need(lang)
    if not (shutil.which(lang) or shutil.which(lang, path="/usr/sbin:/usr/local/sbin")):
        pytest.skip(f"{lang} is not installed (scripts/setup.sh installs Debian's package)")
    exe = contract.executable(lang, settings)
    argv = [str(exe), lang, "im", "server", "--port", "0", "--idle-timeout-s", "30"]
    env = {**os.environ, "SERVERBENCH_NODELAY_REPORT": str(report)}
    proc = subprocess.Popen(argv, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        ev = json.loads(proc.stdout.readline())
        assert ev["event"] == "listening", ev
        conns = [socket.create_connection(("127.0.0.1", ev["port"]), timeout=5) for _ in range(clients)]
        for c in conns:  # a full registration: the daemon has accepted by the time it answers
            c.sendall(b"NICK n%d\r\nUSER u 0 * :u\r\n" % conns.index(c))
        for c in conns:
            assert b" 001 " in c.recv(4096)
        if seen is not None:
            import psutil

            daemon = next(p for p in psutil.Process(proc.pid).children(recursive=True) if p.name() == lang)
            seen.update(_nodelay_of_accepted(daemon.pid, {c.getsockname()[1] for c in conns}))
            assert len(seen) == clients, seen
        for c in conns:
            c.close()
        proc.stdin.write(b"stop\n")
        proc.stdin.flush()
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, err
    rec = json.loads(out.decode().splitlines()[-1])
    assert records.native_errors(rec) is None, records.native_errors(rec)
    return rec


@pytest.fixture
def report():
    """An empty report file any user can write: ngircd may drop root for its configured user."""
    d = Path(tempfile.mkdtemp(prefix="serverbench-nodelay-"))
    d.chmod(0o777)
    f = d / "nodelay.txt"
    f.touch()
    f.chmod(0o666)
    yield f
    shutil.rmtree(d, ignore_errors=True)


@pytest.mark.parametrize("lang", ["ngircd", "inspircd"])
def test_nodelay_on_sets_tcp_nodelay_on_every_accepted_connection(lang, report):
    seen: dict[int, int] = {}
    rec = _serve(lang, {"nodelay": "on"}, report, seen=seen)
    assert rec["runtime"]["nodelay"] == "on"
    assert set(seen.values()) == {1}, seen  # read from the daemon's own sockets
    # the launcher's own probe of the port is accepted too: at least the three clients
    lines = report.read_text().split()
    assert len(lines) >= 3 and set(lines) == {"nodelay=1"}, lines
    assert contract.settings_mismatch(lang, {"nodelay": "on"}, rec) is None


@pytest.mark.parametrize("lang", ["ngircd", "inspircd"])
def test_as_shipped_the_daemon_is_left_alone(lang, report):
    """The control: without the setting nothing is preloaded, nothing is reported, and a record
    claiming otherwise would be a mismatch."""
    seen: dict[int, int] = {}
    rec = _serve(lang, {}, report, seen=seen)
    assert rec["runtime"]["nodelay"] == "off" and report.read_text() == ""
    assert set(seen.values()) == {0}, seen  # Nagle's algorithm on: the daemon as shipped
    assert contract.settings_mismatch(lang, {"nodelay": "on"}, rec) is not None


@pytest.mark.parametrize("lang", ["ngircd", "inspircd"])
def test_the_launcher_refuses_every_usage_case_of_the_parser_cases(lang, capsys):
    """Every bad command line of tests/conformance/parser-cases.json (the process-level
    conformance suite runs only a sample), in process: exit 2, one `error:` line naming what it
    must, nothing on stdout. The im server's flags come from spec/cli.json (--chaos-target and
    --chaos-pick included); nothing is started, so the daemon need not be installed."""
    import importlib.util

    root = Path(__file__).resolve().parents[2]
    spec = importlib.util.spec_from_file_location("ircd_launcher", root / "src" / "ircd" / "launcher.py")
    launcher = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(launcher)
    cases = json.loads((root / "tests" / "conformance" / "parser-cases.json").read_text())["languages"][lang]["usage"]
    assert any("--chaos-target" in c["args"] for c in cases) and any("--chaos-pick" in c["args"] for c in cases)
    wrong = []
    for case in cases:
        code = launcher.main([lang, *case["args"]])
        out, err = capsys.readouterr()
        lines = [line for line in err.splitlines() if line.strip()]
        if code != 2 or out or len(lines) != 1 or not lines[0].startswith("error: "):
            wrong.append((case["args"], code, out, err))
        elif missing := [m for m in case["mentions"] if m not in lines[0]]:
            wrong.append((case["args"], lines[0], missing))
    assert not wrong, f"{len(wrong)} of {len(cases)}: {wrong[:5]}"
