"""The production IRC servers at their best beside as shipped (src/ircd/, runtime setting
nodelay): started through serverbench-ircd-nodelay, every connection the daemon accepts has
TCP_NODELAY, read back from the socket by the preloaded shim; as shipped, none is touched.
The record's runtime.nodelay says which ran, and the harness checks it against the setting."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path

import pytest

from serverbench import contract, records
from socket_helpers import _need

pytestmark = [pytest.mark.native, pytest.mark.usefixtures("no_leftover_processes")]


def _serve(lang: str, settings: dict, report, clients: int = 3) -> dict:
    """Starts the daemon through its launcher, opens `clients` connections, stops it by the
    stop line and returns its record; the shim reports to `report`."""
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
    rec = _serve(lang, {"nodelay": "on"}, report)
    assert rec["runtime"]["nodelay"] == "on"
    # the launcher's own probe of the port is accepted too: at least the three clients
    lines = report.read_text().split()
    assert len(lines) >= 3 and set(lines) == {"nodelay=1"}, lines
    assert contract.settings_mismatch(lang, {"nodelay": "on"}, rec) is None


@pytest.mark.parametrize("lang", ["ngircd", "inspircd"])
def test_as_shipped_the_daemon_is_left_alone(lang, report):
    """The control: without the setting nothing is preloaded, nothing is reported, and a record
    claiming otherwise would be a mismatch."""
    rec = _serve(lang, {}, report)
    assert rec["runtime"]["nodelay"] == "off" and report.read_text() == ""
    assert contract.settings_mismatch(lang, {"nodelay": "on"}, rec) is not None
