"""`python -m serverbench serve <benchmark> --server LANG [--port P]`: one socket server in
the foreground on 127.0.0.1, so that a user can point their own client at it.

It prints the server's address, relays lines from stdin (`stop` stops it), stops it on
Ctrl-C (SIGINT), SIGTERM or after --duration-s, then prints the server's final record.
The end of stdin stops it only when stdin is a terminal (Ctrl-D): started in the
background (`< /dev/null &`, nohup, a service manager) it runs until told to stop. The server runs in
its own session (Ctrl-C reaches only this command, which stops the server by closing its
stdin), pinned to the CPUs given with --cpus, RLIMIT_NOFILE raised to the hard limit
(running.pinned, as every run's), its command and environment as in a sweep's runs
(running.command).
"""

from __future__ import annotations

import errno
import os
import signal
import socket
import subprocess
import sys
import threading

from serverbench import catalog, contract
from serverbench.harness.running import command, pinned
from serverbench.harness.running.host import killpg
from serverbench.harness.sockets.server import STOP_WAIT_S
from serverbench.rawdata.columns import Col


def register(subparsers) -> None:
    socket_benches = [b for b in contract.benchmarks() if contract.roles(b)]
    p = subparsers.add_parser(
        "serve",
        help="start one socket-benchmark server on 127.0.0.1 in the foreground",
        description="Start one server of a socket benchmark on 127.0.0.1 and print its "
        "address; type 'stop' or press Ctrl-C to stop it and print its record.",
    )
    p.add_argument("benchmark", choices=socket_benches)
    p.add_argument("--server", required=True, help="the server's language")
    p.add_argument("--port", type=int, default=0, help="TCP port (default 0: the kernel picks one)")
    p.add_argument("--cpus", default=None, help="comma-separated CPUs to pin the server to (default: all allowed)")
    p.add_argument(
        "--set",
        dest="sets",
        action="append",
        default=[],
        metavar="PARAM=VALUE",
        help="a server parameter, e.g. --set read_buffer_bytes=1",
    )
    p.add_argument("--variant", default="fair")
    p.add_argument(
        "--duration-s",
        type=float,
        default=None,
        help="stop by itself after this many seconds (> 0; default: run until told to stop)",
    )
    p.set_defaults(func=_cmd_serve)


def _usage(msg):
    from serverbench.errors import UsageError

    return UsageError(msg)


def server_argv(benchmark: str, lang: str, port: int, sets: dict, variant: str) -> tuple[list[str], dict]:
    if benchmark not in catalog.language(lang).benchmarks or "server" not in contract.language_roles(lang, benchmark):
        raise _usage(f"{lang} does not implement the {benchmark} server")
    cores = len(os.sched_getaffinity(0))
    subst = {"exe": str(contract.executable(lang)), "cores": str(cores), "heap_mb": "1024", "process_limit": "1048576"}
    prefix, env = command.command_prefix(lang, subst)
    params = {**sets, "port": port}
    return prefix + contract.native_args(benchmark, params, variant, "server"), env


def _parse_sets(sets: list[str]) -> dict:
    out = {}
    for s in sets:
        k, sep, v = s.partition("=")
        if not sep:
            raise _usage(f"--set needs PARAM=VALUE, got {s!r}")
        try:
            out[k] = int(v)
        except ValueError:
            try:
                out[k] = float(v)
            except ValueError:
                out[k] = v
    return out


def _cmd_serve(args, stdout, stderr) -> int:
    if not 0 <= args.port <= 65535:
        raise _usage(f"--port must be in 0..65535, got {args.port}")
    if args.server not in contract.languages():
        raise _usage(f"unknown language {args.server!r}; known: {', '.join(contract.languages())}")
    if args.duration_s is not None and not args.duration_s > 0:
        raise _usage(f"--duration-s must be > 0, got {args.duration_s}")
    if args.port and _in_use(args.port):
        raise _usage(f"port {args.port} on 127.0.0.1 is in use")
    sets = _parse_sets(args.sets)
    # A served server waits for the user, not for the harness: its idle timeout is the
    # longest the contract allows unless --set gives one.
    idle = contract.flag_of(args.benchmark, "idle_timeout_s", "server")
    if idle is not None and idle.max is not None and Col.idle_timeout_s not in sets:
        sets[Col.idle_timeout_s] = idle.max
    argv, env = server_argv(args.benchmark, args.server, args.port, sets, args.variant)
    cpus = [int(c) for c in args.cpus.split(",")] if args.cpus else sorted(os.sched_getaffinity(0))
    # SIGTERM is passed on to the server (its record then says so); SIGINT gets its default
    # handling back, since a shell starts `&` jobs with SIGINT ignored.
    terminated = []

    def on_term(signum, frame):
        terminated.append(signum)
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, on_term)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    proc = pinned.start(
        argv, command.child_env(env), cpus, stdin=subprocess.PIPE, stdout=subprocess.PIPE, raise_nofile=True
    )
    try:
        first = proc.stdout.readline().decode("utf-8", "replace").strip()
        if not first:
            proc.wait(timeout=10)
            print(f"error: the {args.server} server exited (code {proc.returncode}) before listening", file=stderr)
            return 1
        print(first, file=stdout)
        try:
            import json

            port = json.loads(first)[Col.port]
            print(
                f"serving {args.benchmark} ({args.server}) on 127.0.0.1:{port}; type 'stop' or press Ctrl-C to stop it",
                file=stderr,
            )
        except (ValueError, KeyError, TypeError):
            pass
        stdout.flush()
        threading.Thread(target=_relay, args=(proc, sys.stdin.isatty()), daemon=True).start()
        if args.duration_s is not None:
            timer = threading.Timer(args.duration_s, _close, args=(proc,))
            timer.daemon = True
            timer.start()
        rest = proc.stdout.read().decode("utf-8", "replace")
        proc.wait()
    except KeyboardInterrupt:
        if terminated:
            os.kill(proc.pid, signal.SIGTERM)
        else:
            _close(proc)
        try:
            rest = proc.stdout.read().decode("utf-8", "replace")
            proc.wait(timeout=STOP_WAIT_S)
        except (subprocess.TimeoutExpired, KeyboardInterrupt):
            rest = ""
            killpg(proc.pid)
            proc.wait()
    finally:
        killpg(proc.pid)
    if rest.strip():
        print(rest.strip(), file=stdout)
    return 0 if proc.returncode == 0 else 1


def _in_use(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError as e:
            return e.errno == errno.EADDRINUSE
    return False


def _relay(proc, stop_at_eof: bool) -> None:
    """Copy stdin's lines to the server; at EOF of a terminal (Ctrl-D) close its stdin, a
    stop. EOF of anything else (/dev/null, a finished pipe) leaves the server running."""
    try:
        for line in sys.stdin:
            proc.stdin.write(line.encode())
            proc.stdin.flush()
    except (OSError, ValueError):
        pass
    if stop_at_eof:
        _close(proc)


def _close(proc) -> None:
    try:
        proc.stdin.close()
    except (OSError, ValueError):
        pass
