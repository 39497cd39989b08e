"""The im conformance transcript (tests/conformance/im-transcript.txt) on every im server
of spec/cli.json that implements docs/im.md's subset, and on ngircd, its reference
behaviour. InspIRCd is loaded by the benchmark but is not held to the transcript: it
answers a PRIVMSG without parameters with 461, not RFC 2812's 411 (checked below, so that
the exception is noticed if it goes away)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from serverbench import contract

sys.path.insert(0, str(Path(__file__).resolve().parent))
import im_transcript  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
SERVERS = tuple(  # every IM server but the generator's null sink, which answers only what the generator needs
    lang
    for lang in contract.languages()
    if "server" in contract.language_roles(lang, "im") and "client" not in contract.language_roles(lang, "im")
)
NOT_HELD = {"inspircd": "461 for a PRIVMSG without parameters (RFC 2812: 411)"}
DAEMONS = ("ngircd", "inspircd")


def start(lang: str) -> tuple[subprocess.Popen, int]:
    """The server by its spec/cli.json command (placeholders for one core), and its port."""
    exe = contract.executable(lang)
    if not exe.exists():
        pytest.skip(f"{lang} is not built (scripts/build.sh {lang})")
    if lang in DAEMONS and not (shutil.which(lang) or shutil.which(lang, path="/usr/sbin")):
        pytest.skip(f"{lang} is not installed (scripts/setup.sh)")
    values = {"exe": str(exe), "cores": "1", "heap_mb": "512", "process_limit": "1048576"}

    def fill(text: str) -> str:
        for k, v in values.items():
            text = text.replace("{" + k + "}", v)
        return text

    spec = contract.language(lang)
    cmd = [fill(a) for a in spec["command"]]
    env = {**os.environ, **{k: fill(v) for k, v in spec.get("env", {}).items()}}
    args = ["im", "server", "--port", "0", "--idle-timeout-s", "30"]
    p = subprocess.Popen(cmd + args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env, cwd=ROOT)
    line = p.stdout.readline()
    if not line:
        p.kill()
        raise AssertionError(f"{lang} printed no listening line (exit {p.wait()})")
    return p, json.loads(line)["port"]


def stop(p: subprocess.Popen) -> dict:
    out, _ = p.communicate("stop\n", timeout=30)
    assert p.returncode == 0, f"exit {p.returncode}"
    return json.loads(out.strip().splitlines()[-1])


@pytest.mark.native
@pytest.mark.parametrize("lang", [s for s in SERVERS if s not in NOT_HELD])
def test_the_transcript_passes(lang):
    p, port = start(lang)
    try:
        n = im_transcript.run(port)
    finally:
        rec = stop(p)
    assert n == len(im_transcript.steps())
    assert rec["benchmark"] == "im" and rec["language"] == lang and rec["validation"]["ok"]
    assert rec["metrics"]["stop_reason"] == "stop_line"
    if rec["metrics"]["messages_routed"] is not None:  # our servers count; a daemon's record has null
        assert rec["metrics"]["messages_routed"] == 2  # the transcript's two one-to-one PRIVMSGs
        assert rec["metrics"]["clients_registered_max"] == 2


@pytest.mark.native
@pytest.mark.parametrize("lang", sorted(NOT_HELD))
def test_a_server_not_held_to_the_transcript_still_differs(lang):
    p, port = start(lang)
    try:
        with pytest.raises(im_transcript.TranscriptError, match="461"):
            im_transcript.run(port)
    finally:
        stop(p)


def test_every_daemon_is_an_im_server_of_the_spec():
    assert set(DAEMONS) <= set(SERVERS)
    assert all(contract.language(d).get("production") for d in DAEMONS)


@pytest.mark.native
@pytest.mark.parametrize("how", ["stop", "eof", "signal"])
@pytest.mark.parametrize("lang", DAEMONS)
def test_a_daemon_stops_with_nothing_left(lang, how):
    """The launcher's lifecycle: a connected client, then the stop; the daemon is gone, its
    port closed and its temporary folder removed, and the record says why it stopped."""
    import signal
    import socket
    import time

    import psutil

    p, port = start(lang)
    daemons = [c for c in psutil.Process(p.pid).children(recursive=True)]
    conn = socket.create_connection(("127.0.0.1", port))
    if how == "signal":
        p.send_signal(signal.SIGTERM)
        out, _ = p.communicate(timeout=30)
    else:
        out, _ = p.communicate("stop\n" if how == "stop" else "", timeout=30)
    conn.close()
    rec = json.loads(out.strip().splitlines()[-1])
    assert p.returncode == 0 and rec["validation"]["ok"]
    assert rec["metrics"]["stop_reason"] == {"stop": "stop_line", "eof": "stdin_eof", "signal": "signal"}[how]
    assert rec["metrics"]["messages_routed"] is None  # a daemon keeps no counters we could report
    assert daemons and not any(d.is_running() for d in daemons)
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            time.sleep(0.1)
        except ConnectionRefusedError:
            break
    else:
        raise AssertionError(f"{lang}: port {port} still accepts after the stop")


def test_a_line_matches_by_command_nick_and_parameters():
    parse, expect = im_transcript.Line.parse, im_transcript.Expect.parse
    assert expect("001 alice").matches(parse(":irc.x 001 alice :Welcome to the Internet Relay Network"))
    assert not expect("001 alice").matches(parse(":irc.x 001 bob :Welcome"))
    assert not expect("001 alice").matches(parse(":irc.x 002 alice :Your host"))
    # a trailing parameter in the expectation: every parameter compared, exactly
    assert expect(":alice PRIVMSG bob :hi there").matches(parse(":alice!~a@127.0.0.1 PRIVMSG bob :hi there"))
    assert not expect(":alice PRIVMSG bob :hi there").matches(parse(":alice!a@h PRIVMSG bob :hi there!"))
    assert not expect(":alice PRIVMSG bob :hi").matches(parse(":mallory!a@h PRIVMSG bob :hi"))
    # JOIN's channel as a middle or a trailing parameter is the same parameter
    assert expect(":bob JOIN :#c").matches(parse(":bob!b@h JOIN #c"))
    # names as a set, channel-mode prefixes dropped
    assert expect("353 bob = #c :alice bob").matches(parse(":s 353 bob = #c :bob @alice"))
    assert not expect("353 bob = #c :alice bob").matches(parse(":s 353 bob = #c :bob"))


def test_the_transcript_reads_every_step(tmp_path):
    bad = tmp_path / "t.txt"
    bad.write_text("connect A\nA? what\n")
    with pytest.raises(OSError):  # nothing listens on port 1
        im_transcript.run(1, path=bad)
    assert [s for _, s in im_transcript.steps(bad)] == ["connect A", "A? what"]
    assert len(im_transcript.steps()) > 50
