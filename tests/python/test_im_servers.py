"""Every IM server spec/cli.json lists (the im benchmark's server role, docs/im.md), started
through the spec's command like any socket server: the protocol subset and every error
numeric, a client that never reads (disconnected at the bounded queue, counted), 2,000
connections opened and dropped abruptly (the server lives on, its memory bounded), chaos
kills counted and restarted, every way to stop leaving no process and no listening port,
and an existing IRC client library (PyPI `irc`) exchanging a message through each server."""

from __future__ import annotations

import json
import signal
import socket
import struct
import subprocess
import time
from contextlib import contextmanager

import psutil
import pytest

from serverbench import contract, records
from serverbench.harness.planning.task import Task
from serverbench.harness.sockets import run as sockets
from socket_helpers import _need, make_launcher

pytestmark = [pytest.mark.native, pytest.mark.usefixtures("no_leftover_processes")]

# our servers (docs/im.md's subset, our record's counters, chaos); the production daemons
# (spec `production`: ngircd, InspIRCd) answer in their own words: test_im_transcript.py
SERVERS = tuple(
    lang
    for lang in contract.languages()
    if "server" in contract.language_roles(lang, "im") and not contract.language(lang).get("production")
)
IM = contract.benchmark("im")
NAME = IM["server_name"]
GUARD_S = 20.0  # only keeps a broken server from hanging a test


def _command(tmp_path, lang: str, params: dict) -> tuple[list[str], dict]:
    """The server's argv and environment as the harness builds them (spec/cli.json)."""
    lau = make_launcher(tmp_path)
    task = Task(benchmark="im", language=lang, variant="fair", params={}, cores=2, config_id="im", group_id="g")
    argv, env = sockets.command(lau, task, lang, "server", params, task.cores)
    return argv, lau.child_env(env)


class Server:
    """A running server: its process, port and (once stopped) its record."""

    def __init__(self, proc: subprocess.Popen, port: int):
        self.proc, self.port, self.record = proc, port, None

    def stop(self, how: str = "line") -> dict:
        """Stops it by the stop line, stdin EOF or SIGTERM ("wait": it stops by itself), and
        reads its record; stdin stays open until it has exited, so the way is the one asked."""
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
        return self.record


@contextmanager
def running(tmp_path, lang: str, **params):
    _need(lang)
    argv, env = _command(tmp_path, lang, {"port": 0, **params})
    proc = subprocess.Popen(argv, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        ev = json.loads(proc.stdout.readline())
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


@pytest.mark.parametrize("lang", SERVERS)
def test_protocol_subset(tmp_path, lang):
    with running(tmp_path, lang) as srv:
        a, b, c = Peer(srv.port), Peer(srv.port), Peer(srv.port)
        a.send("PRIVMSG b :hi", "FROB", "NICK", "NICK 9lives", "USER two 0")
        a.expect(f":{NAME} 451 * :You have not registered")
        a.expect(f":{NAME} 451 * :You have not registered")
        a.expect(f":{NAME} 431 * :No nickname given")
        a.expect(f":{NAME} 432 * 9lives :Erroneous nickname")
        a.expect(f":{NAME} 461 * USER :Not enough parameters")
        a.register("alice")
        a.send("USER x 0 * :x")
        a.expect(f":{NAME} 462 alice :You may not reregister")
        b.send("NICK Alice")
        b.expect(f":{NAME} 433 * Alice :Nickname is already in use")
        b.register("bob")
        c.register("carol")
        # one-to-one, both ways, and its errors
        a.send("PRIVMSG bob :hello bob", "PRIVMSG", "PRIVMSG bob", "PRIVMSG dave :x", "PING", "PING :t", "x" * 511)
        b.expect(":alice!ualice@127.0.0.1 PRIVMSG bob :hello bob")
        for want in (
            "411 alice :No recipient given (PRIVMSG)",
            "412 alice :No text to send",
            "401 alice dave :No such nick/channel",
            "409 alice :No origin specified",
        ):
            a.expect(f":{NAME} {want}")
        a.expect(f":{NAME} PONG {NAME} :t")
        a.expect(f":{NAME} 417 alice :Input line was too long")
        b.send("PRIVMSG alice :hello alice")
        a.expect(":bob!ubob@127.0.0.1 PRIVMSG alice :hello alice")
        # channels: fan-out to every member but the sender, and their errors
        for p, nick, names in ((a, "alice", "alice"), (b, "bob", "alice bob"), (c, "carol", "alice bob carol")):
            p.send("JOIN #room")
            p.expect(f":{nick}!u{nick}@127.0.0.1 JOIN #room")
            p.expect(f":{NAME} 353 {nick} = #room :{names}")
            p.expect(f":{NAME} 366 {nick} #room :End of NAMES list")
        a.expect(":bob!ubob@127.0.0.1 JOIN #room")
        a.expect(":carol!ucarol@127.0.0.1 JOIN #room")
        b.expect(":carol!ucarol@127.0.0.1 JOIN #room")
        a.send("PRIVMSG #room :to all")
        b.expect(":alice!ualice@127.0.0.1 PRIVMSG #room :to all")
        c.expect(":alice!ualice@127.0.0.1 PRIVMSG #room :to all")
        c.send("PART #room :bye", "PART #room", "PRIVMSG #room :x", "PART #none", "JOIN nochan", "FROB")
        c.expect(":carol!ucarol@127.0.0.1 PART #room :bye")
        for want in (
            "442 carol #room :You're not on that channel",
            "404 carol #room :Cannot send to channel",
            "403 carol #none :No such channel",
            "403 carol nochan :No such channel",
            "421 carol FROB :Unknown command",
        ):
            c.expect(f":{NAME} {want}")
        a.expect(":carol!ucarol@127.0.0.1 PART #room :bye")
        b.expect(":carol!ucarol@127.0.0.1 PART #room :bye")
        b.send("QUIT :done")
        b.expect("ERROR :Closing Link")
        assert b.line() is None
        a.expect(":bob!ubob@127.0.0.1 QUIT :done")
        a.send("PING :end")  # everything above was handled before the server stops
        a.expect(f":{NAME} PONG {NAME} :end")
        rec = srv.stop()
    m = rec["metrics"]
    assert m["connections_accepted"] == 3 and m["clients_registered_max"] == 3 and m["stop_reason"] == "stop_line"
    assert m["messages_routed"] == 2 and m["sessions_started"] == 1  # both directions: one session
    assert m["channel_deliveries"] == 2 and m["sendq_disconnects"] == 0 == m["sessions_killed"]
    assert m["bad_lines"] == 17  # every line answered with an error numeric above


# An open defect: the Erlang server sometimes never disconnects the client that does not read
# (2 of 2 fresh-clone CI runs and 1 of 3 local runs failed; the others passed in 5 s); the case
# is kept, non-strict, so that a pass still shows and the defect stays visible.
ERLANG_SENDQ_DEFECT = pytest.mark.xfail(
    reason="open defect: the Erlang server's send-queue disconnect does not always come", strict=False
)


@pytest.mark.parametrize("lang", [pytest.param(x, marks=ERLANG_SENDQ_DEFECT) if x == "erlang" else x for x in SERVERS])
def test_a_client_that_never_reads_is_disconnected(tmp_path, lang):
    line = "PRIVMSG slow :" + "z" * 400
    with running(tmp_path, lang, sendq_lines=256) as srv:
        slow, fast = Peer(srv.port, rcvbuf=4096), Peer(srv.port)
        slow.register("slow")
        fast.register("fast")
        # the kernel's autotuned send buffer holds megabytes before the server's queue fills
        deadline = time.monotonic() + 3 * GUARD_S
        gone = False
        while not gone and time.monotonic() < deadline:
            fast.send(*[line] * 100, "PING :sync")  # the sync bounds the 401s that come at once
            while (got := fast.line()) != f":{NAME} PONG {NAME} :sync":
                assert got == f":{NAME} 401 fast slow :No such nick/channel", got
                gone = True
        assert gone, "the client that never reads was never disconnected"
        slow.s.settimeout(GUARD_S)
        while slow.s.recv(1 << 20):  # what the kernel held, then EOF: the server closed it
            pass
        rec = srv.stop()
    assert rec["metrics"]["sendq_disconnects"] == 1
    assert rec["metrics"]["messages_routed"] > 256


def _rss(pid: int) -> int:
    return psutil.Process(pid).memory_info().rss


@pytest.mark.parametrize("lang", SERVERS)
def test_connections_dropped_abruptly(tmp_path, lang):
    """Rounds of 2,000 connections (half registered, half mid-line) reset at once: the server
    serves on, and its memory after the last round is within a bound of the first's."""
    n, rounds = 2000, 3
    rss = []
    with running(tmp_path, lang) as srv:
        for r in range(rounds):
            socks = []
            for i in range(n):
                s = socket.create_connection(("127.0.0.1", srv.port), timeout=GUARD_S)
                s.sendall(f"NICK r{r}x{i}\r\nUSER u 0 * :x\r\n".encode() if i % 2 else b"PRIVMSG somebody :unfini")
                socks.append(s)
            probe = Peer(srv.port)
            probe.register(f"probe{r}")  # every earlier connection was accepted and read
            probe.close()
            for s in socks:
                s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))  # close sends RST
                s.close()
            time.sleep(1.0)  # let the server see the resets
            rss.append(_rss(srv.proc.pid))
        alive = Peer(srv.port)
        alive.register("alive")
        alive.send("PING :ok")
        alive.expect(f":{NAME} PONG {NAME} :ok")
        rec = srv.stop()
    assert rec["metrics"]["connections_accepted"] == rounds * (n + 1) + 1
    # a leak of a goroutine or task (and buffers) per connection would add tens of MB per round
    assert rss[-1] <= 1.5 * rss[0] + 16 * 2**20, [f"{x / 2**20:.1f} MiB" for x in rss]


@pytest.mark.parametrize("lang", SERVERS)
def test_chaos_kills_counted_and_restarted(tmp_path, lang):
    with running(tmp_path, lang, chaos_interval_ms=5, seed=3) as srv:
        pairs = [(Peer(srv.port), Peer(srv.port)) for _ in range(4)]
        for k, (a, b) in enumerate(pairs):
            a.register(f"a{k}")
            b.register(f"b{k}")
        end = time.monotonic() + 1.0
        while time.monotonic() < end:
            for k, (a, b) in enumerate(pairs):
                a.send(f"PRIVMSG b{k} :x")
                b.send(f"PRIVMSG a{k} :y")
            time.sleep(0.002)
        for a, b in pairs:  # the sessions end with their clients: no kill after this
            for p in (a, b):
                p.send("QUIT")
                p.skip_to("ERROR :Closing Link")
        time.sleep(0.2)
        rec = srv.stop()
    m = rec["metrics"]
    assert m["sessions_started"] >= 4 and m["sessions_killed"] >= 10, m
    # a kill racing with the session's end may find nothing left to restart
    assert m["sessions_killed"] - 1 <= m["sessions_restarted"] <= m["sessions_killed"], m


def _listening(port: int) -> bool:
    return any(c.laddr.port == port and c.status == psutil.CONN_LISTEN for c in psutil.net_connections("tcp"))


@pytest.mark.parametrize("how", ["line", "eof", "signal", "idle"])
@pytest.mark.parametrize("lang", SERVERS)
def test_every_stop_leaves_nothing_running(tmp_path, lang, how):
    with running(tmp_path, lang, idle_timeout_s=0.5) as srv:
        p = Peer(srv.port)
        p.register("x")
        assert _listening(srv.port)
        if how == "idle":
            p.close()  # no connection for 0.5 s: the server stops by itself
            rec = srv.stop(how="wait")
        else:
            rec = srv.stop(how)  # with a client still connected
        assert (
            rec["metrics"]["stop_reason"]
            == {"line": "stop_line", "eof": "stdin_eof", "signal": "signal", "idle": "idle_timeout"}[how]
        )
        assert srv.proc.poll() is not None and not psutil.pid_exists(srv.proc.pid)
        assert not _listening(srv.port)
        with pytest.raises(ConnectionRefusedError):
            socket.create_connection(("127.0.0.1", srv.port), timeout=GUARD_S)


@pytest.mark.parametrize("lang", SERVERS)
def test_an_irc_client_library_exchanges_a_message(tmp_path, lang):
    """Two clients of the PyPI `irc` library (jaraco): one sends a PRIVMSG, the other
    receives it through the server."""
    irc_client = pytest.importorskip("irc.client", reason="the PyPI package irc is not installed")
    got: list[tuple[str, str]] = []
    welcomed: set[str] = set()
    with running(tmp_path, lang) as srv:
        reactor = irc_client.Reactor()
        reactor.add_global_handler("welcome", lambda conn, ev: welcomed.add(ev.target))
        reactor.add_global_handler("privmsg", lambda conn, ev: got.append((ev.source.nick, ev.arguments[0])))
        receiver = reactor.server().connect("127.0.0.1", srv.port, "recv")
        sender = reactor.server().connect("127.0.0.1", srv.port, "send")
        deadline = time.monotonic() + GUARD_S
        sent = False
        while not got and time.monotonic() < deadline:
            reactor.process_once(0.05)
            if welcomed == {"recv", "send"} and not sent:
                sender.privmsg("recv", "hello through the server")
                sent = True
        sender.disconnect()
        receiver.disconnect()
        rec = srv.stop()
    assert got == [("send", "hello through the server")]
    assert rec["metrics"]["messages_routed"] == 1
