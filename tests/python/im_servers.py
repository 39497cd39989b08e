"""What test_im_servers.py drives our im servers with (docs/im.md): a server started
through the spec's command and stopped with every check of a clean stop, a raw IRC
connection, the counters a test expects of a server it shares, and many connections
opened at once without blocking."""

from __future__ import annotations

import errno
import json
import os
import selectors
import signal
import socket
import struct
import subprocess
import time
from contextlib import contextmanager

import psutil
import pytest

from serverbench import contract
from serverbench.harness.planning.task import Task
from serverbench.harness.sockets import run as sockets
from serverbench.rawdata import records
from socket_helpers import _need, make_launcher

# our servers (docs/im.md's subset, our record's counters, chaos); the production daemons
# (spec `production`: ngircd, InspIRCd) answer in their own words: test_im_transcript.py
SERVERS = tuple(
    lang
    for lang in contract.languages()
    if "server" in contract.language_roles(lang, "im")
    and "client" not in contract.language_roles(lang, "im")  # the generator's null sink: not a server under test
    and not contract.language(lang).get("production")
)
NAME = contract.benchmark("im")["server_name"]
GUARD_S = 20.0  # only keeps a broken server from hanging a test
# connections opened but not answered yet: within any listen backlog (4096 here), so that no
# SYN is dropped and retried seconds later
IN_FLIGHT = 1000


def until(cond, what: str, timeout_s: float = GUARD_S) -> None:
    """Waits for cond() (asked every 20 ms); fails with `what` after timeout_s."""
    deadline = time.monotonic() + timeout_s
    while not cond():
        assert time.monotonic() < deadline, what
        time.sleep(0.02)


def _listening(port: int) -> bool:
    return any(c.laddr.port == port and c.status == psutil.CONN_LISTEN for c in psutil.net_connections("tcp"))


class Expected:
    """The counters the tests that share a server caused, each as a range (low, high): the
    server's record must lie within their sums (a peak, such as clients_registered_max, within
    the largest low and the sum of the highs)."""

    def __init__(self) -> None:
        self.ranges: dict[str, list[float]] = {}

    def add(self, name: str, low: float, high: float | None = None) -> None:
        r = self.ranges.setdefault(name, [0, 0])
        r[0] += low
        r[1] += low if high is None else high

    def peak(self, name: str, n: int) -> None:
        r = self.ranges.setdefault(name, [0, 0])
        r[0], r[1] = max(r[0], n), r[1] + n

    def misses(self, metrics: dict) -> dict:
        return {n: (metrics[n], lo, hi) for n, (lo, hi) in self.ranges.items() if not lo <= metrics[n] <= hi}


class Server:
    """A running server: its process, port, the counters expected of it and (once stopped)
    its record."""

    def __init__(self, proc: subprocess.Popen, port: int):
        self.proc, self.port, self.record = proc, port, None
        self.expected = Expected()

    def processes(self) -> list[psutil.Process]:
        root = psutil.Process(self.proc.pid)
        return [root, *root.children(recursive=True)]

    def pids(self) -> frozenset[int]:
        return frozenset(p.pid for p in self.processes())

    def fds(self) -> int:
        return sum(p.num_fds() for p in self.processes())

    def rss(self) -> int:
        return sum(p.memory_info().rss for p in self.processes())

    def holds(self, client_port: int) -> bool:
        """Whether the server still has a socket connected to this client port."""
        return any(c.raddr and c.raddr.port == client_port for p in self.processes() for c in p.net_connections("tcp"))

    def stop(self, how: str = "line") -> dict:
        """Stops it by the stop line, stdin EOF or SIGTERM ("wait": it stops by itself), and
        reads its record; stdin stays open until it has exited, so the way is the one asked.
        Then nothing of it is left: no process, no listening port."""
        procs = self.processes()
        if how == "line":
            self.proc.stdin.write(b"stop\n")
            self.proc.stdin.flush()
        elif how == "eof":
            self.proc.stdin.close()
        elif how == "signal":
            self.proc.send_signal(signal.SIGTERM)
        self.proc.wait(timeout=GUARD_S)
        out, err = self.proc.stdout.read(), self.proc.stderr.read()
        assert self.proc.returncode == 0, err
        lines = out.decode().splitlines()
        assert len(lines) == 1, lines  # the record, and nothing else
        self.record = json.loads(lines[0])
        assert records.native_errors(self.record) is None, records.native_errors(self.record)
        assert not any(p.is_running() and p.status() != psutil.STATUS_ZOMBIE for p in procs)
        assert not _listening(self.port)
        with pytest.raises(ConnectionRefusedError):
            socket.create_connection(("127.0.0.1", self.port), timeout=GUARD_S)
        return self.record


def _command(tmp_path, lang: str, params: dict) -> tuple[list[str], dict]:
    """The server's argv and environment as the harness builds them (spec/cli.json)."""
    lau = make_launcher(tmp_path)
    task = Task(benchmark="im", language=lang, variant="fair", params={}, cores=2, config_id="im", group_id="g")
    argv, env = sockets.command(lau, task, lang, "server", params, task.cores)
    return argv, lau.child_env(env)


@contextmanager
def running(tmp_path, lang: str, **params):
    _need(lang)
    argv, env = _command(tmp_path, lang, {"port": 0, **params})
    proc = subprocess.Popen(argv, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        line = proc.stdout.readline()
        if not line:  # it refused its command line or died: say why, not a JSON error
            proc.wait(timeout=GUARD_S)
            pytest.fail(
                f"{lang} printed no listening line (exit {proc.returncode}): {proc.stderr.read().decode()[-2000:]}"
            )
        ev = json.loads(line)
        assert ev["event"] == "listening" and ev["benchmark"] == "im" and ev["language"] == lang, ev
        yield Server(proc, ev["port"])
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


class Peer:
    """One raw IRC connection: send lines, read lines."""

    def __init__(self, port: int, rcvbuf: int | None = None):
        self.s = socket.socket()
        if rcvbuf:
            self.s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        self.s.connect(("127.0.0.1", port))
        self.s.settimeout(GUARD_S)
        self.buf = b""

    def send(self, *lines: str) -> None:
        self.s.sendall(b"".join(line.encode() + b"\r\n" for line in lines))

    def line(self) -> str | None:
        """The next line without CRLF; None at EOF."""
        while b"\r\n" not in self.buf:
            chunk = self.s.recv(65536)
            if not chunk:
                return None
            self.buf += chunk
        line, _, self.buf = self.buf.partition(b"\r\n")
        return line.decode()

    def expect(self, want: str) -> None:
        assert self.line() == want

    def skip_to(self, want: str) -> None:
        while (got := self.line()) != want:
            assert got is not None, f"EOF before {want!r}"

    def register(self, nick: str) -> None:
        self.send(f"NICK {nick}", f"USER u{nick} 0 * :{nick}")
        self.expect(f":{NAME} 001 {nick} :Welcome to the serverbench IRC network {nick}!u{nick}@127.0.0.1")

    def close(self) -> None:
        self.s.close()


def open_all(port: int, hellos: list[bytes], answers: list[str]) -> list[socket.socket]:
    """One connection per hello, opened without blocking on one epoll, at most IN_FLIGHT
    unanswered at a time: each sends its hello once connected and is done when the server's
    first line is its answer (so the server has accepted it and read the hello)."""
    sel = selectors.DefaultSelector()
    socks: list[socket.socket] = []
    answered = 0
    deadline = time.monotonic() + 3 * GUARD_S
    try:
        while answered < len(hellos):
            while len(socks) < len(hellos) and len(socks) - answered < IN_FLIGHT:
                s = socket.socket()
                s.setblocking(False)
                assert s.connect_ex(("127.0.0.1", port)) in (0, errno.EINPROGRESS)
                sel.register(s, selectors.EVENT_WRITE, (len(socks), b""))
                socks.append(s)
            events = sel.select(timeout=max(0.0, deadline - time.monotonic()))
            assert events, f"{answered} of {len(hellos)} connections answered"
            for key, _ in events:
                s, (i, buf) = key.fileobj, key.data
                if key.events == selectors.EVENT_WRITE:  # connected, or failed to
                    err = s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
                    assert err == 0, f"connection {i}: {os.strerror(err)}"
                    assert s.send(hellos[i]) == len(hellos[i])
                    sel.modify(s, selectors.EVENT_READ, (i, b""))
                    continue
                chunk = s.recv(4096)
                assert chunk, f"connection {i} closed by the server before its answer"
                buf += chunk
                if b"\r\n" in buf:
                    assert buf.partition(b"\r\n")[0].decode() == answers[i]
                    sel.unregister(s)
                    answered += 1
                else:
                    sel.modify(s, selectors.EVENT_READ, (i, buf))
    finally:
        sel.close()
    return socks


def reset_all(socks: list[socket.socket]) -> None:
    """Closes each with an RST (SO_LINGER 0): the client is gone without a word."""
    for s in socks:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        s.close()
