"""The IM load generator (src/im_loadgen/) against ngircd, the reference IRC server: every
mode gives a schema-valid record whose counts add up, and the validity rule catches a
generator that cannot keep its schedule (a rate far above what one core can send, and a
generator starved of CPU by a busy loop on its own CPU). ngircd runs from a minimal
configuration written here (flood penalties off, no per-IP limit, no DNS or ident)."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time

import pytest

from serverbench import contract, records
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
        ngircd, "--mode", "fanout", "--clients", "12", "--channel-size", "4", "--rate-per-s", "200",
        "--duration-s", "0.5", "--drain-s", "2", "--schedule", "constant",
    )  # fmt: skip
    m = rec["metrics"]
    _only_the_generator_may_invalidate(rec)
    assert m["channels_joined"] == 12
    assert m["messages_sent"] == m["messages_scheduled"] == 100  # constant: 200/s x 0.5 s
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
    """10^7 sends a second cannot leave on time from one thread: the slip rule fires, and
    the events left unsent count as scheduled, never as sent."""
    rec = generate(ngircd, "--clients", "2", "--rate-per-s", "10000000", "--duration-s", "0.3", "--drain-s", "0.5")
    m, v = rec["metrics"], rec["validation"]
    assert not v["ok"] and v["reason"].startswith("generator"), v
    assert m["schedule_slip_p99_s"] > m["schedule_slip_limit_s"]
    assert m["messages_sent"] < m["messages_scheduled"]


def test_a_generator_starved_on_its_cpu_is_invalid(ngircd):
    """The generator pinned to one CPU with a busy loop, at the lowest priority: it gets a
    sliver of the CPU, so its sends leave late (its CPU share of wall time stays low: the
    slip rule, not the CPU rule, is what catches a generator that is not scheduled)."""
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
    assert not v["ok"] and "slip" in v["reason"], v
    assert m["schedule_slip_p99_s"] > m["schedule_slip_limit_s"]


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
        self._stop = True
        self._sock.close()
        for s in self._conns:
            s.close()
        for t in self._threads:
            t.join(timeout=5)


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
