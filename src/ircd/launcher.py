"""Starts a production IRC server (ngircd or InspIRCd, Debian's packages) for the im
benchmark as the harness starts ours (docs/sockets.md, docs/im.md): the same command line
(spec/cli.json's im server flags, parsed by the Python servers' sbcommon), the same
lifecycle (bind 127.0.0.1, one listening line, stop on stdin EOF / "stop" / SIGTERM / idle
timeout, one record line). The daemon runs in the foreground as this process's child on a
configuration written from the template beside this file into a temporary folder, and is
stopped (SIGTERM, then SIGKILL) and its folder removed before the record is printed.

A daemon keeps no counters the record could report (sessions, routed messages): those
metrics are null. It has no chat-session, channel or connection processes either, so
--chaos-interval-ms (whatever --chaos-target and --chaos-pick say) has nothing to kill: the
flags are accepted and copied into the record's params, the run goes on, and the record says
so (sessions_killed, channels_killed, connections_killed, chaos_dropped_messages null). It
answers no MEMORY command (ngircd: 421), so live_bytes is null too.

Run as shipped, each daemon leaves Nagle's algorithm on for its clients (neither has a
setting for it). Started through serverbench-ircd-nodelay (the runtime setting nodelay=on,
spec/cli.json), the daemon gets TCP_NODELAY on every connection it accepts from an
LD_PRELOAD shim (nodelay/nodelay.c), which `--version` builds with the C compiler (so that
scripts/build.sh's runtime check builds it); the record's runtime.nodelay says which ran."""

from __future__ import annotations

import ctypes
import json
import os
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "python_servers"))
import sbcommon  # noqa: E402  (the command line and lifecycle helpers every Python-run server shares)

BENCH = "im"
NODELAY_ENV = "SERVERBENCH_IRCD_NODELAY"  # set to 1 by serverbench-ircd-nodelay
SHIM_SOURCE = os.path.join(HERE, "nodelay", "nodelay.c")
SHIM = os.path.join(HERE, "nodelay", "build", "nodelay.so")
LINE_BYTES = sbcommon.CLI["benchmarks"][BENCH]["line_max_bytes"]
START_TIMEOUT_S = 10.0
STOP_GRACE_S = 5.0
TICK_S = 0.1


def daemon_path(name: str) -> str | None:
    """The daemon's executable: on PATH, or in /usr/sbin (not on a normal user's PATH)."""
    return shutil.which(name) or shutil.which(name, path="/usr/sbin:/usr/local/sbin")


def version(lang: str) -> str:
    exe = daemon_path(lang)
    if exe is None:
        raise FileNotFoundError(f"{lang} is not installed (scripts/setup.sh installs Debian's package)")
    out = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=10)
    return (out.stdout or out.stderr).splitlines()[0].strip()


def nodelay_on() -> bool:
    return os.environ.get(NODELAY_ENV) == "1"


def runtime(lang: str) -> dict:
    return {"name": lang, "version": version(lang), "schedulers": 1, "nodelay": "on" if nodelay_on() else "off"}


def shim() -> str:
    """The TCP_NODELAY shim, compiled when missing or older than its source (an atomic rename,
    so that two launchers never load half a file); FileNotFoundError without a C compiler."""
    if os.path.exists(SHIM) and os.path.getmtime(SHIM) >= os.path.getmtime(SHIM_SOURCE):
        return SHIM
    cc = shutil.which(os.environ.get("CC") or "gcc")
    if cc is None:
        raise FileNotFoundError("the TCP_NODELAY shim needs a C compiler (gcc; scripts/setup.sh installs it)")
    os.makedirs(os.path.dirname(SHIM), exist_ok=True)
    tmp = f"{SHIM}.{os.getpid()}.tmp"
    done = subprocess.run(
        [cc, "-shared", "-fPIC", "-O2", "-Wall", "-Wextra", "-o", tmp, SHIM_SOURCE, "-ldl"],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        raise FileNotFoundError(f"the TCP_NODELAY shim did not compile: {done.stderr.strip()}")
    os.replace(tmp, SHIM)
    return SHIM


def daemon_env() -> dict:
    """The daemon's environment: this one, with the shim preloaded under nodelay=on."""
    env = dict(os.environ)
    if nodelay_on():
        env["LD_PRELOAD"] = " ".join(x for x in (shim(), env.get("LD_PRELOAD", "")) if x)
    return env


def free_port() -> int:
    """A port the kernel just gave out on 127.0.0.1 (the daemons take a fixed port)."""
    with socket.socket() as s:
        s.bind((sbcommon.HOST, 0))
        return s.getsockname()[1]


def write_config(lang: str, rundir: str, port: int, sendq_lines: int) -> str:
    with open(os.path.join(HERE, f"{lang}.conf.in"), encoding="utf-8") as f:
        text = f.read()
    text = (
        text.replace("@PORT@", str(port))
        .replace("@RUNDIR@", rundir)
        .replace("@SENDQ_BYTES@", str(sendq_lines * LINE_BYTES))
        .replace("@UID@", str(os.getuid()))
        .replace("@GID@", str(os.getgid()))
    )
    path = os.path.join(rundir, f"{lang}.conf")
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return path


def command(lang: str, conf: str) -> list[str]:
    exe = daemon_path(lang)
    if exe is None:
        raise FileNotFoundError(f"{lang} is not installed (scripts/setup.sh installs Debian's package)")
    if lang == "ngircd":
        return [exe, "--nodaemon", "--config", conf]
    root = ["--runasroot"] if os.geteuid() == 0 else []  # InspIRCd refuses root without it
    return [exe, "--nofork", *root, f"--config={conf}"]


def die_with_parent() -> None:
    """In the daemon's child before exec: the kernel sends it SIGTERM when this launcher dies,
    even by SIGKILL, so that no daemon outlives its run (prctl PR_SET_PDEATHSIG, Linux)."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(1, signal.SIGTERM, 0, 0, 0)  # 1 = PR_SET_PDEATHSIG


def established(port: int) -> bool:
    """Whether a client connection to port is open (/proc/net/tcp: local port, state
    ESTABLISHED); it stops at the first, since the kernel writes the table as it is read."""
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table, encoding="ascii") as f:
                next(f)
                for line in f:
                    fields = line.split()
                    if int(fields[1].rsplit(":", 1)[1], 16) == port and fields[3] == "01":
                        return True
        except OSError:
            continue
    return False


def wait_listening(proc: subprocess.Popen, port: int) -> str | None:
    """None once the daemon accepts on port; else why not."""
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return f"the daemon exited with {proc.returncode} before listening"
        try:
            with socket.create_connection((sbcommon.HOST, port), timeout=0.5):
                return None
        except OSError:
            time.sleep(0.05)
    return f"the daemon did not listen on port {port} within {START_TIMEOUT_S:.0f} s"


def stop(proc: subprocess.Popen) -> int | None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(STOP_GRACE_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    return proc.returncode


def serve(lang: str, params: dict, variant: str) -> int:
    port = params["port"] or free_port()
    rundir = tempfile.mkdtemp(prefix=f"serverbench-{lang}-")
    stopped: list[str] = []
    signal.signal(signal.SIGTERM, lambda *_: stopped.append("signal"))
    proc = None
    try:
        conf = write_config(lang, rundir, port, int(params["sendq_lines"]))
        t0 = time.monotonic()
        proc = subprocess.Popen(
            command(lang, conf),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=sys.stderr,
            cwd=rundir,
            env=daemon_env(),
            preexec_fn=die_with_parent,
        )
        why = wait_listening(proc, port)
        if why:
            print(f"error: {lang}: {why}", file=sys.stderr)
            return 1
        sys.stdout.write(
            json.dumps(
                {"event": "listening", "benchmark": BENCH, "role": "server", "language": lang,
                 "address": sbcommon.HOST, "port": port}
            ) + "\n"
        )  # fmt: skip
        sys.stdout.flush()
        reason, failed = watch(proc, port, params["idle_timeout_s"], stopped)
        stop(proc)  # how the daemon exits on our SIGTERM (ngircd 0, InspIRCd its own code) is no failure
        record(lang, params, variant, port, reason, t0, failed)
        return 0
    finally:
        if proc is not None:
            stop(proc)
        shutil.rmtree(rundir, ignore_errors=True)


def watch(proc: subprocess.Popen, port: int, idle_s: float, stopped: list[str]) -> tuple[str, str | None]:
    """Waits for a stop; (stop_reason, why the run failed or None)."""
    idle_since = checked = time.monotonic()
    # the connection table is read at most once a second (a tenth of a shorter idle timeout):
    # with 10^4 clients, reading it every tick took a tenth of a CPU from the daemon
    every_s = max(TICK_S, min(1.0, idle_s / 10))
    while True:
        if stopped:
            return stopped[0], None
        if proc.poll() is not None:
            return "signal", f"the daemon exited with {proc.returncode} during the run"
        ready, _, _ = select.select([sys.stdin], [], [], TICK_S)
        if stopped:  # a SIGTERM that interrupted the wait comes first
            return stopped[0], None
        if ready:
            reason = sbcommon.stdin_stop(sys.stdin.buffer.readline())
            if reason:
                return reason, None
        now = time.monotonic()
        if now - checked < every_s:
            continue
        checked = now
        if established(port):
            idle_since = now
        elif now - idle_since >= idle_s:
            return "idle_timeout", None


PARAMS = ("port", "idle_timeout_s", "sendq_lines", "chaos_interval_ms", "chaos_target", "chaos_pick", "seed")


def record(lang: str, params: dict, variant: str, port: int, reason: str, t0: float, failed: str | None) -> None:
    counters = ("connections_accepted", "clients_registered_max", "messages_routed", "channel_deliveries",
                "sessions_started", "sessions_killed", "sessions_restarted", "channels_killed", "channels_restarted",
                "connections_killed", "chaos_dropped_messages", "live_bytes", "sendq_disconnects", "bad_lines",
                "connection_errors")  # fmt: skip
    rec = {
        "benchmark": BENCH,
        "role": "server",
        "language": lang,
        "variant": variant,
        "params": {k: params[k] for k in PARAMS},
        "metrics": {"elapsed_s": time.monotonic() - t0, "port": port, **dict.fromkeys(counters), "stop_reason": reason},
        "validation": {"ok": failed is None, "reason": failed},
        "runtime": runtime(lang),
    }
    sys.stdout.write(json.dumps(rec) + "\n")
    sys.stdout.flush()


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in ("ngircd", "inspircd"):
        print("error: usage: serverbench-ircd {ngircd|inspircd} im server [flags] | --version", file=sys.stderr)
        return 2
    lang, rest = argv[0], argv[1:]
    try:
        if rest == ["--version"]:
            shim()  # built here, so that scripts/build.sh's runtime check builds it
            print(json.dumps({"program": "serverbench", "program_version": sbcommon.VERSION, "language": lang,
                              "runtime": runtime(lang)}))  # fmt: skip
            return 0
        if rest in (["--help"], ["-h"]):
            print(f"usage: serverbench-ircd {lang} im server [--port P] [--idle-timeout-s T] [--sendq-lines N]"
                  " [--chaos-interval-ms T] [--chaos-target session|channel|connection|any]"
                  " [--chaos-pick random|queued] [--seed S]")  # fmt: skip
            return 0
        parsed = sbcommon.parse(lang, rest)  # every other command line, bad ones as the contract says
    except sbcommon.Usage as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except FileNotFoundError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    assert parsed is not None
    _, params, variant = parsed
    return serve(lang, params, variant)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
