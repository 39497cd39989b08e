"""The IM load generator (src/im_loadgen/) against ngircd, the reference IRC server, and
against its own null sink (`im server`): every mode gives a schema-valid record whose
counts add up, and each validity rule has a positive control that trips it: a rate far
above what one core can send (busy share, slip), a generator starved of CPU by a busy loop
on its own CPU (read lateness, slip), a run with too few deliveries (the p99's interval).
ngircd runs from a minimal configuration written here (flood penalties off, no per-IP
limit, no DNS or ident)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time

import pytest

from serverbench import contract
from serverbench.rawdata import records
from socket_helpers import _need

pytestmark = [pytest.mark.native, pytest.mark.usefixtures("no_leftover_processes")]

NGIRCD_CONF = """[Global]
	Name = irc.serverbench
	Info = serverbench test
	Listen = 127.0.0.1
	Ports = {port}
	PidFile = {dir}/ngircd.pid
	MotdPhrase = test
[Limits]
	MaxConnections = 0
	MaxConnectionsIP = 0
	MaxJoins = 0
	MaxNickLength = 9
	MaxPenaltyTime = 0
	PingTimeout = 600
	PongTimeout = 600
[Options]
	DNS = no
	Ident = no
	PAM = no
"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def ngircd(tmp_path):
    """A running ngircd on a free loopback port; stopped (by its pid) after the test."""
    exe = shutil.which("ngircd")
    if exe is None:
        pytest.skip("ngircd is not installed (scripts/setup.sh)")
    port = _free_port()
    conf = tmp_path / "ngircd.conf"
    conf.write_text(NGIRCD_CONF.format(port=port, dir=tmp_path), encoding="utf-8")
    proc = subprocess.Popen([exe, "-n", "-f", str(conf)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.05)
        else:
            pytest.fail("ngircd did not listen within 5 s")
        yield port
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def generate(port: int, *flags: str, prefix: tuple[str, ...] = ()) -> dict:
    """Runs the generator; its record, checked against the schema (exit 1 iff invalid)."""
    _need("im_loadgen")
    cmd = [*prefix, str(contract.executable("im_loadgen")), "im", "client", "--port", str(port), *flags]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert done.returncode in (0, 1), done.stderr
    rec = json.loads(done.stdout)
    records.validate_native(rec)
    assert done.returncode == (0 if rec["validation"]["ok"] else 1)
    return rec


def _only_the_generator_may_invalidate(rec: dict) -> None:
    """A run on a shared machine may miss the slip limit; nothing else may go wrong."""
    v = rec["validation"]
    assert v["ok"] or v["reason"].startswith("generator"), v


def test_latency_mode_delivers_every_message_once_in_order(ngircd):
    rec = generate(ngircd, "--clients", "20", "--rate-per-s", "400", "--duration-s", "1", "--drain-s", "2")
    m = rec["metrics"]
    _only_the_generator_may_invalidate(rec)
    assert m["clients_registered"] == 20 and m["registration_failures"] == 0
    assert 300 <= m["messages_scheduled"] <= 500  # Poisson, 400/s for 1 s
    assert m["messages_sent"] == m["messages_scheduled"] == m["deliveries_expected"] == m["messages_delivered"]
    assert (m["messages_lost"], m["messages_duplicated"], m["messages_reordered"]) == (0, 0, 0)
    assert 0 < m["latency_p50_s"] <= m["latency_p90_s"] <= m["latency_p99_s"] <= m["latency_max_s"]
    assert 0 < m["schedule_slip_p99_s"] <= m["schedule_slip_max_s"]
    assert m["client_cpu_per_message_s"] > 0 and m["deliveries_per_s"] > 0


def test_a_seed_fixes_the_schedule(ngircd):
    flags = ("--clients", "4", "--rate-per-s", "300", "--duration-s", "0.5", "--drain-s", "1")
    runs = [generate(ngircd, *flags, "--seed", s)["metrics"]["messages_scheduled"] for s in ("5", "5", "6")]
    assert runs[0] == runs[1] != runs[2]


def test_fanout_copies_each_message_to_every_other_member(ngircd):
    rec = generate(
        ngircd, "--mode", "fanout", "--clients", "12", "--channel-size", "4", "--rate-per-s", "400",
        "--duration-s", "0.5", "--drain-s", "2", "--schedule", "constant",
    )  # fmt: skip
    m = rec["metrics"]
    _only_the_generator_may_invalidate(rec)
    assert m["channels_joined"] == 12
    assert m["messages_sent"] == m["messages_scheduled"] == 200  # constant: 400/s x 0.5 s
    # a constant schedule has no Exp(rate) law to test its gaps against
    assert (m["inter_send_ks_d"], m["inter_send_ks_ok"]) == (None, None)
    assert m["deliveries_expected"] == 3 * m["messages_sent"] == m["messages_delivered"]
    assert m["messages_lost"] == 0


def test_idle_and_login_register_every_client(ngircd):
    idle = generate(ngircd, "--mode", "idle", "--clients", "30", "--duration-s", "0.3")
    login = generate(ngircd, "--mode", "login", "--clients", "8")
    for rec in (idle, login):
        assert rec["validation"]["ok"], rec["validation"]
        assert rec["metrics"]["messages_sent"] == 0 and rec["metrics"]["schedule_s"] is None
    assert idle["metrics"]["clients_registered"] == 30 and idle["metrics"]["elapsed_s"] >= 0.3
    assert login["metrics"]["clients_registered"] == 8 and 0 < login["metrics"]["login_s"] < 60


def test_a_rate_beyond_one_core_is_invalid(ngircd):
    """10^7 sends a second cannot leave on time from one thread: the loop never spins idle
    (the busy-share rule fires first), its sends leave late (the slip rule), its gaps are no
    longer Exp(rate) (the KS test), and the events left unsent count as scheduled, never
    as sent."""
    rec = generate(ngircd, "--clients", "2", "--rate-per-s", "10000000", "--duration-s", "0.3", "--drain-s", "0")
    m, v = rec["metrics"], rec["validation"]
    assert not v["ok"] and v["reason"].startswith("generator busy share"), v
    assert m["client_busy_share"] >= m["generator_busy_limit"]
    assert m["schedule_slip_p99_s"] > m["schedule_slip_limit_s"]
    assert m["inter_send_ks_ok"] is False and m["inter_send_ks_d"] > m["inter_send_ks_critical"]
    assert m["messages_sent"] < m["messages_scheduled"]


def test_a_generator_starved_on_its_cpu_is_invalid(ngircd):
    """The generator pinned to one CPU with a busy loop, at the lowest priority: it gets a
    sliver of the CPU, so its sends leave late (the slip rule). Its CPU share of wall time
    stays low, so a CPU-share rule could not catch it. (Whether it also reads late depends on
    whether replies arrive while it is off its CPU: in one CI run none did, read lateness max
    0.5 ms; the next test controls that rule.)"""
    if not hasattr(os, "sched_setaffinity"):
        pytest.skip("no CPU affinity on this system")
    cpu = str(min(os.sched_getaffinity(0)))
    busy = subprocess.Popen(["taskset", "-c", cpu, sys.executable, "-c", "while True: pass"])
    try:
        rec = generate(
            ngircd, "--clients", "20", "--rate-per-s", "20000", "--duration-s", "1", "--drain-s", "1",
            prefix=("taskset", "-c", cpu, "nice", "-n", "19"),
        )  # fmt: skip
    finally:
        busy.kill()
        busy.wait()
    v, m = rec["validation"], rec["metrics"]
    assert not v["ok"] and v["reason"].startswith("generator"), v
    assert m["schedule_slip_p99_s"] > m["schedule_slip_limit_s"]
    assert m["client_cpu_share"] < 0.5 and m["client_involuntary_switches"] > 0  # preempted, never asleep


def test_a_generator_stopped_while_replies_are_in_flight_reads_late(ngircd):
    """The read-lateness rule's positive control: the generator is stopped (SIGSTOP) for
    20 ms in every 40 ms, so the replies in flight when it stops wait in their sockets until
    it runs again. Without a read-lateness measure (or with one that misses the wait) its
    max stays near the loop's own turn, tens of microseconds."""
    _need("im_loadgen")
    flags = ["--clients", "20", "--rate-per-s", "20000", "--duration-s", "1", "--drain-s", "1"]
    cmd = [str(contract.executable("im_loadgen")), "im", "client", "--port", str(ngircd), *flags]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        while proc.poll() is None:
            time.sleep(0.02)
            proc.send_signal(signal.SIGSTOP)
            time.sleep(0.02)
            proc.send_signal(signal.SIGCONT)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGCONT)
            proc.kill()
            proc.wait()
    rec = json.loads(out)
    records.validate_native(rec)
    v, m = rec["validation"], rec["metrics"]
    assert m["messages_lost"] == 0 and m["clients_registered"] == 20, err
    assert not v["ok"] and v["reason"].startswith("generator"), v
    assert m["read_lateness_max_s"] > 5 * m["read_lateness_limit_s"], m["read_lateness_max_s"]


def test_no_server_means_no_schedule_and_a_setup_reason():
    rec = generate(_free_port(), "--clients", "4", "--timeout-s", "2", "--duration-s", "5")
    m, v = rec["metrics"], rec["validation"]
    assert not v["ok"] and v["reason"].startswith("setup: 0 of 4 clients registered"), v
    assert m["registration_failures"] == 4 and m["messages_scheduled"] == 0 and m["schedule_s"] is None
    assert m["elapsed_s"] < 5  # the schedule did not run


class LossyRelay:
    """A loopback relay between the generator and ngircd that drops every `every`-th PRIVMSG
    line the server sends to a client (whole lines, counted): a server that loses messages
    by a known count, the positive control of the generator's ledger."""

    def __init__(self, upstream: int, every: int):
        import threading

        self.upstream, self.every = upstream, every
        self.seen = self.dropped = 0
        self._lock = threading.Lock()
        self._sock = socket.create_server(("127.0.0.1", 0))
        self.port = self._sock.getsockname()[1]
        self._threads: list = []
        self._conns: list[socket.socket] = []
        self._stop = False
        t = threading.Thread(target=self._accept, daemon=True)
        t.start()
        self._threads.append(t)

    def _accept(self) -> None:
        import threading

        while not self._stop:
            try:
                client, _ = self._sock.accept()
            except OSError:
                return
            server = socket.create_connection(("127.0.0.1", self.upstream))
            for s in (client, server):
                s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self._conns += [client, server]
            for src, dst, lossy in ((client, server, False), (server, client, True)):
                t = threading.Thread(target=self._pump, args=(src, dst, lossy), daemon=True)
                t.start()
                self._threads.append(t)

    def _keep(self, line: bytes) -> bool:
        if b" PRIVMSG " not in line:
            return True
        with self._lock:
            self.seen += 1
            drop = self.seen % self.every == 0
            self.dropped += drop
        return not drop

    def _pump(self, src: socket.socket, dst: socket.socket, lossy: bool) -> None:
        buf = b""
        try:
            while chunk := src.recv(65536):
                if not lossy:
                    dst.sendall(chunk)
                    continue
                buf += chunk
                *lines, buf = buf.split(b"\n")
                out = b"".join(line + b"\n" for line in lines if self._keep(line))
                if out:
                    dst.sendall(out)
        except OSError:
            pass
        finally:
            for s in (src, dst):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def close(self) -> None:
        """Stops the relay: every thread ends. A thread blocked in accept or recv is woken by
        shutdown, not by close (close alone left the accept thread and some pumps blocked, and
        the joins waited 5 s for each: 93 s once in a CI run)."""
        self._stop = True
        for s in (self._sock, *self._conns):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            s.close()
        for t in self._threads:
            t.join(timeout=5)
        assert not any(t.is_alive() for t in self._threads), "a relay thread outlived close()"


def test_the_ledger_counts_a_known_loss_exactly(ngircd):
    """The positive control of every 'no message lost' (IM5): a relay drops every 7th message
    the server delivers, and the generator's ledger counts exactly those as lost (a ledger
    that ignored a loss would report 0), and none as duplicated or reordered."""
    relay = LossyRelay(ngircd, every=7)
    try:
        rec = generate(relay.port, "--clients", "20", "--rate-per-s", "400", "--duration-s", "1", "--drain-s", "2")
    finally:
        relay.close()
    m = rec["metrics"]
    assert m["clients_registered"] == 20 and m["messages_sent"] == m["deliveries_expected"]
    assert relay.dropped >= 40  # about 400 messages, every 7th dropped
    assert m["messages_lost"] == relay.dropped
    assert m["messages_delivered"] == m["deliveries_expected"] - relay.dropped
    assert (m["messages_duplicated"], m["messages_reordered"]) == (0, 0)


def test_too_few_deliveries_for_the_p99_interval_is_invalid(ngircd):
    """The p99's 95 % order-statistic interval needs 368 latencies (0.99^367 > 2.5 %): a run
    that times fewer is invalid, and its interval is null; one with enough has an interval
    around its p99."""
    rec = generate(ngircd, "--clients", "4", "--rate-per-s", "100", "--duration-s", "1", "--drain-s", "1")
    m, v = rec["metrics"], rec["validation"]
    assert m["latency_p99_ci_min_deliveries"] == 368 and m["messages_delivered"] < 368
    assert not v["ok"] and "latency sample too small: " in v["reason"], v
    assert (m["latency_p99_ci_low_s"], m["latency_p99_ci_high_s"]) == (None, None)


def _sink(*flags: str, stdin=subprocess.PIPE):
    """Starts the null sink; (process, its listening line)."""
    _need("im_loadgen")
    cmd = [str(contract.executable("im_loadgen")), "im", "server", "--port", "0", *flags]
    proc = subprocess.Popen(cmd, stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return proc, json.loads(proc.stdout.readline())


def _sink_record(proc) -> dict:
    """The record of a sink told to stop (stdin stays open until it has exited by itself)."""
    proc.wait(timeout=20)
    out, err = proc.communicate(timeout=20)
    assert proc.returncode == 0, err
    rec = json.loads(out.strip().splitlines()[-1])
    records.validate_native(rec)
    return rec


@pytest.fixture
def sink():
    """A running null sink's port; told to stop (a `stop` line) after the test."""
    proc, listening = _sink()
    try:
        yield listening["port"]
    finally:
        if proc.poll() is None:
            proc.stdin.write("stop\n")
            proc.stdin.flush()
        proc.communicate(timeout=20)


class Irc:
    """A raw IRC client for the sink's transcript tests."""

    def __init__(self, port: int, nick: str):
        self.s = socket.create_connection(("127.0.0.1", port), timeout=5)
        self.buf = b""
        self.send(f"NICK {nick}", f"USER {nick} 0 * :{nick}")

    def send(self, *lines: str) -> None:
        self.s.sendall("".join(f"{line}\r\n" for line in lines).encode())

    def expect(self, part: str) -> str:
        """The next line containing part (earlier lines skipped)."""
        while True:
            while b"\r\n" not in self.buf:
                chunk = self.s.recv(65536)
                assert chunk, f"closed before {part!r}"
                self.buf += chunk
            line, self.buf = self.buf.split(b"\r\n", 1)
            if part in line.decode():
                return line.decode()


def test_the_sink_answers_what_the_generator_needs():
    proc, listening = _sink("--idle-timeout-s", "30")
    assert listening == {"event": "listening", "benchmark": "im", "role": "server", "language": "im_loadgen",
                         "address": "127.0.0.1", "port": listening["port"]}  # fmt: skip
    port = listening["port"]
    a, b, c = Irc(port, "c0"), Irc(port, "c1"), Irc(port, "c2")
    for x, n in ((a, "c0"), (b, "c1"), (c, "c2")):
        assert x.expect(" 001 ").startswith(f":irc.serverbench 001 {n} :")
    dup = Irc(port, "C1")  # nicks are case-insensitive
    dup.expect(" 433 ")
    a.send("PRIVMSG c1 :0 123 xxxx")
    assert b.expect("PRIVMSG") == ":c0!c0@127.0.0.1 PRIVMSG c1 :0 123 xxxx"
    a.send("PING :tok")
    assert a.expect("PONG").endswith(":tok")
    for x in (a, b, c):
        x.send("JOIN #g0")
    assert c.expect(" 353 ").endswith(":c0 c1 c2")
    c.expect(" 366 c2 #g0 ")
    a.send("PRIVMSG #g0 :1 456 yy")
    assert b.expect("PRIVMSG #g0") == ":c0!c0@127.0.0.1 PRIVMSG #g0 :1 456 yy"
    assert c.expect("PRIVMSG #g0") == ":c0!c0@127.0.0.1 PRIVMSG #g0 :1 456 yy"
    a.send("MEMORY")
    live = int(a.expect("NOTICE c0 :live_bytes").rsplit(" ", 1)[1])
    a.send("BOGUS")
    a.expect(" 421 ")
    c.send("QUIT :bye")
    c.expect("ERROR")
    a.send("PRIVMSG c1 :2 789 z")
    b.expect("PRIVMSG c1 :2 789 z")
    for x in (a, b, c, dup):
        x.s.close()
    proc.stdin.write("stop\n")
    proc.stdin.flush()
    rec = _sink_record(proc)
    m = rec["metrics"]
    assert m["stop_reason"] == "stop_line" and m["port"] == port
    assert (m["connections_accepted"], m["clients_registered_max"]) == (4, 3)
    assert (m["messages_routed"], m["channel_deliveries"]) == (2, 2)
    assert m["live_bytes"] == live > 0 and m["bad_lines"] == 2  # the 433 and the 421
    assert (m["sessions_started"], m["channels_killed"], m["connections_killed"]) == (None, None, 0)
    assert rec["params"]["chaos_interval_ms"] == 0 and rec["validation"]["ok"]


def test_the_sink_stops_as_every_socket_server_does():
    """stdin's end, SIGTERM and the idle timeout, each recorded as the stop reason; chaos,
    which it cannot do (no processes), is a usage error."""
    proc, _ = _sink()
    proc.stdin.close()
    out = proc.stdout.read()
    proc.wait(timeout=10)
    assert json.loads(out.strip())["metrics"]["stop_reason"] == "stdin_eof"
    proc, _ = _sink()
    proc.terminate()
    assert _sink_record(proc)["metrics"]["stop_reason"] == "signal"
    proc, _ = _sink("--idle-timeout-s", "0.2")
    assert _sink_record(proc)["metrics"]["stop_reason"] == "idle_timeout"
    cmd = [str(contract.executable("im_loadgen")), "im", "server", "--chaos-interval-ms", "100"]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=10)
    assert done.returncode == 2 and "--chaos-interval-ms" in done.stderr and done.stdout == ""


def test_every_mode_runs_against_the_sink(sink):
    lat = generate(sink, "--clients", "100", "--rate-per-s", "1000", "--duration-s", "1", "--drain-s", "1",
                   "--setup-concurrency", "32")  # fmt: skip
    _only_the_generator_may_invalidate(lat)
    m = lat["metrics"]
    assert m["messages_delivered"] == m["messages_sent"] == m["deliveries_expected"] > 368
    assert m["messages_lost"] == 0
    assert m["latency_p99_ci_low_s"] <= m["latency_p99_s"] <= m["latency_p99_ci_high_s"]
    assert 0 <= m["client_busy_share"] < 1 and m["read_lateness_p99_s"] <= m["read_lateness_max_s"]
    assert 900 <= m["inter_send_ks_gaps"] <= 1000 and m["inter_send_ks_d"] is not None  # ~1,000 sends
    fan = generate(sink, "--mode", "fanout", "--clients", "40", "--channel-size", "10", "--rate-per-s", "400",
                   "--duration-s", "0.5", "--drain-s", "1")  # fmt: skip
    _only_the_generator_may_invalidate(fan)
    assert fan["metrics"]["messages_delivered"] == 9 * fan["metrics"]["messages_sent"] > 0
    for mode in ("idle", "login"):
        rec = generate(sink, "--mode", mode, "--clients", "200", "--duration-s", "0.3")
        _only_the_generator_may_invalidate(rec)
        assert rec["metrics"]["clients_registered"] == 200
