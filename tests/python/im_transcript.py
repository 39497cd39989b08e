"""Runs the im conformance transcript (tests/conformance/im-transcript.txt, whose header
is its grammar) against a server listening on 127.0.0.1: every client a real socket, every
expectation a line read with a deadline. Used by test_im_transcript.py on each im server."""

from __future__ import annotations

import socket
import time
from dataclasses import dataclass, field
from pathlib import Path

TRANSCRIPT = Path(__file__).resolve().parents[1] / "conformance" / "im-transcript.txt"
WAIT_S = 15.0  # a deadline for a line that should come at once: generous for a JVM warming up on a busy machine
# what a server may send on its own, skipped while waiting for an expected line
SKIPPED_NUMERICS = {"002", "003", "004", "005", "042", "250", "251", "252", "253", "254", "255", "265", "266",
                    "332", "333", "372", "375", "376", "422"}  # fmt: skip
SKIPPED_COMMANDS = {"NOTICE", "MODE"}
MODE_PREFIXES = "~&@%+"


class TranscriptError(AssertionError):
    pass


@dataclass
class Line:
    """One IRC line: the prefix's nick (or the server's name), the command, the parameters."""

    nick: str | None
    command: str
    params: list[str]
    raw: str

    @classmethod
    def parse(cls, raw: str) -> Line:
        s, nick = raw, None
        if s.startswith(":"):
            prefix, _, s = s[1:].partition(" ")
            nick = prefix.split("!", 1)[0]
        head, colon, trailing = s.partition(" :")
        words = head.split()
        params = words[1:] + ([trailing] if colon else [])
        return cls(nick, words[0].upper() if words else "", params, raw)


@dataclass
class Expect:
    nick: str | None
    command: str
    params: list[str]
    exact: bool  # the last parameter was written with ':': compare all of them

    @classmethod
    def parse(cls, text: str) -> Expect:
        line = Line.parse(text)
        return cls(line.nick, line.command, line.params, " :" in text or text.startswith(":") and " :" in text)

    def matches(self, got: Line) -> bool:
        if got.command != self.command or (self.nick is not None and (got.nick or "").lower() != self.nick.lower()):
            return False
        if self.command == "353":
            names = lambda ps: {n.lstrip(MODE_PREFIXES).lower() for n in ps[-1].split()}  # noqa: E731
            return got.params[:-1] == self.params[:-1] and names(got.params) == names(self.params)
        if self.exact:
            return [p.lower() if i == 0 else p for i, p in enumerate(got.params)] == [
                p.lower() if i == 0 else p for i, p in enumerate(self.params)
            ]
        return [p.lower() for p in got.params[: len(self.params)]] == [p.lower() for p in self.params]


def skippable(line: Line) -> bool:
    return line.command in SKIPPED_NUMERICS or line.command in SKIPPED_COMMANDS


@dataclass
class Client:
    name: str
    sock: socket.socket
    buf: bytes = b""
    seen: list[str] = field(default_factory=list)

    def send(self, text: str) -> None:
        self.sock.sendall(text.encode() + b"\r\n")

    def next_line(self, deadline: float) -> str | None:
        """The next line, or None when the server closed the connection."""
        while b"\n" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TranscriptError(
                    f"client {self.name}: nothing more within {WAIT_S:.0f} s; it saw {self.seen[-5:]}"
                )
            self.sock.settimeout(left)
            try:
                data = self.sock.recv(65536)
            except TimeoutError:
                continue
            except ConnectionResetError:
                data = b""
            if not data:
                return None
            self.buf += data
        raw, _, self.buf = self.buf.partition(b"\n")
        text = raw.decode(errors="replace").rstrip("\r")
        self.seen.append(text)
        return text

    def expect(self, want: Expect, step: str) -> None:
        deadline = time.monotonic() + WAIT_S
        while True:
            text = self.next_line(deadline)
            if text is None:
                raise TranscriptError(f"{step}: client {self.name} was disconnected; it saw {self.seen[-5:]}")
            got = Line.parse(text)
            if want.matches(got):
                return
            if not skippable(got):
                raise TranscriptError(f"{step}: client {self.name} got {text!r}")

    def expect_closed(self, step: str) -> None:
        deadline = time.monotonic() + WAIT_S
        while True:
            text = self.next_line(deadline)
            if text is None:
                return
            if not skippable(Line.parse(text)) and not text.startswith("ERROR"):
                raise TranscriptError(f"{step}: client {self.name} got {text!r} instead of being closed")


def steps(path: Path = TRANSCRIPT) -> list[tuple[int, str]]:
    out = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.strip() and not line.startswith("#"):
            out.append((n, line))
    return out


def run(port: int, host: str = "127.0.0.1", path: Path = TRANSCRIPT) -> int:
    """Runs the transcript; returns the number of steps. Raises TranscriptError at the first
    step the server fails, naming the transcript line."""
    clients: dict[str, Client] = {}
    try:
        for n, line in steps(path):
            step = f"{path.name}:{n} {line!r}"
            if line.startswith("connect "):
                name = line.split()[1]
                clients[name] = Client(name, socket.create_connection((host, port), timeout=WAIT_S))
                continue
            who, op, rest = line[0], line[1], line[2:].strip()
            c = clients[who]
            if op == ">":
                c.send(rest)
            elif op == "<":
                c.expect(Expect.parse(rest), step)
            elif op == "!" and rest == "closed":
                c.expect_closed(step)
            else:
                raise ValueError(f"{step}: not a transcript step")
        return len(steps(path))
    finally:
        for c in clients.values():
            c.sock.close()
