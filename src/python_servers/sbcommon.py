"""Shared by the Python echo servers: the command line (from spec/cli.json, so the flags
are the ones every language takes) and the lifecycle (docs/sockets.md):
the listening line, stop on stdin EOF / the line "stop" / SIGTERM / idle timeout, the
final record. Each runtime module supplies only its echo loop."""

from __future__ import annotations

import json
import os
import sys
import time
from dataclasses import dataclass, field

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CLI = json.load(open(os.path.join(ROOT, "spec", "cli.json"), encoding="utf-8"))
HOST = CLI["sockets"]["host"]
BACKLOG = 4096  # the kernel caps it at net.core.somaxconn
BENCH = "echo_flood"
VERSION = "0.1.0"


class Usage(Exception):
    pass


def _value(name: str, spec: dict, text: str):
    if text == "":
        raise Usage(f"{name}: empty value")
    t = spec["type"]
    if t == "enum":
        if text not in spec["values"]:
            raise Usage(f"{name}: unknown value '{text}' (one of {', '.join(spec['values'])})")
        return text
    try:
        if t == "int":
            if not text.lstrip("-").isdigit():
                raise ValueError
            v: float = int(text)
        else:
            v = float(text)
            if v != v or v in (float("inf"), float("-inf")):
                raise ValueError
    except ValueError:
        raise Usage(f"{name}: '{text}' is not {'an integer' if t == 'int' else 'a finite number'}") from None
    if (
        ("min" in spec and v < spec["min"])
        or ("min_exclusive" in spec and v <= spec["min_exclusive"])
        or ("max" in spec and v > spec["max"])
    ):
        raise Usage(f"{name}: '{text}' is out of range")
    return v


def parse(lang: str, argv: list[str]) -> tuple[str, dict, str] | None:
    """(role, params, variant), or None after --version/--help. Raises Usage."""
    L = CLI["languages"][lang]
    if not argv:
        raise Usage("missing sub-command (echo_flood, --version, --help)")
    if argv[0] == "--version":
        if len(argv) > 1:
            raise Usage(f"--version takes no argument, got '{argv[1]}'")
        print(
            json.dumps(
                {"program": "serverbench", "program_version": VERSION, "language": lang, "runtime": runtime(lang)}
            )
        )
        return None
    if argv[0] in ("--help", "-h"):
        usage = f"usage: serverbench-py {lang} echo_flood server [--port P] [--idle-timeout-s T]"
        print(f"{usage}\nbenchmarks: {', '.join(L['benchmarks'])}")
        return None
    bench = argv[0]
    if bench not in CLI["benchmarks"]:
        raise Usage(f"unknown sub-command '{bench}'")
    if bench not in L["benchmarks"]:
        raise Usage(f"language {lang} does not implement the benchmark {bench}")
    roles = CLI["benchmarks"][bench]["roles"]
    if len(argv) < 2:
        raise Usage(f"{bench} needs a role: {' or '.join(roles)}")
    role = argv[1]
    if role not in roles:
        raise Usage(f"{bench}: unknown role '{role}'")
    if role not in L.get("roles", {}).get(bench, list(roles)):
        raise Usage(f"language {lang} does not implement the {role} role of {bench}")
    flags = roles[role]["flags"]
    given: dict[str, object] = {}
    i, args = 0, argv[2:]
    while i < len(args):
        a = args[i]
        name, eq, val = a.partition("=") if a.startswith("--") else (a, "", "")
        if name not in flags:
            raise Usage(f"unknown flag or argument '{a}' for {bench} {role}")
        if name in given:
            raise Usage(f"{name} given twice")
        if not eq:
            if i + 1 >= len(args) or args[i + 1].startswith("--"):
                raise Usage(f"{name}: missing value")
            i += 1
            val = args[i]
        given[name] = _value(name, flags[name], val)
        i += 1
    params, variant = {}, "fair"
    for name, spec in flags.items():
        v = given.get(name, spec.get("default"))
        if v is None and spec.get("required"):
            raise Usage(f"{name} is required for {bench} {role}")
        if spec.get("param") is None:
            variant = str(v)
            if variant not in L.get("variants", CLI["implemented_variants"]):
                raise Usage(f"--variant: '{variant}' is not built for {lang} {bench}")
        elif v is not None:
            params[spec["param"]] = v
    return role, params, variant


def runtime(lang: str) -> dict:
    ver = "python " + sys.version.split()[0]
    if lang == "twisted":
        import twisted

        ver = f"twisted {twisted.__version__}, {ver}"
    elif lang == "eventlet":
        import eventlet

        ver = f"eventlet {eventlet.__version__}, {ver}"
    return {"name": lang, "version": ver, "schedulers": 1}


@dataclass
class Counters:
    """What every server counts; bytes_written = bytes echoed."""

    accepted: int = 0
    bytes_read: int = 0
    bytes_written: int = 0
    errors: int = 0
    open: int = 0
    idle_since: float = field(default_factory=time.monotonic)

    def closed(self) -> None:
        self.open -= 1
        if self.open == 0:
            self.idle_since = time.monotonic()


def listening(lang: str, port: int) -> None:
    line = {"event": "listening", "benchmark": BENCH, "role": "server", "language": lang, "address": HOST, "port": port}
    sys.stdout.write(json.dumps(line) + "\n")
    sys.stdout.flush()


def record(lang: str, params: dict, variant: str, c: Counters, port: int, reason: str, t0: float) -> None:
    rec = {
        "benchmark": BENCH,
        "role": "server",
        "language": lang,
        "variant": variant,
        "params": {"port": params["port"], "idle_timeout_s": params["idle_timeout_s"]},
        "metrics": {
            "elapsed_s": time.monotonic() - t0,
            "port": port,
            "connections_accepted": c.accepted,
            "bytes_read": c.bytes_read,
            "bytes_written": c.bytes_written,
            "connection_errors": c.errors,
            "stop_reason": reason,
        },
        "validation": {"ok": True, "reason": None},
        "runtime": runtime(lang),
    }
    sys.stdout.write(json.dumps(rec) + "\n")
    sys.stdout.flush()


def stdin_stop(line: bytes) -> str | None:
    """The stop reason a chunk read from stdin gives (b'' = EOF)."""
    if line == b"":
        return "stdin_eof"
    return "stop_line" if line.strip() == b"stop" else None
