"""The socket-benchmark family (a benchmark with client and server roles in spec/cli.json):
one server and one client per run.

(Kept whole past ~350 lines: one run's lifecycle, from the limits to the server's reaping,
reads in one place.) One run's lifecycle is here; the limits (sockets.limits), the server process
(sockets.server), the `serve` command (sockets.serve), the /proc probe (sockets.probe), the
byte accounting (sockets.accounting) and the plan expansion (planning.socket_plan) are
modules of their own.

`run_socket_task(launcher, task)` is the socket family's runner (SOCKET, which the
recording wing hands to the Launcher):
  1. checks the limits (open files, ephemeral ports; from 1,024 connections the kernel's
     TCP memory and the host's memory floor) for task.params['connections']; a size they
     cannot hold is refused with one line (status failed_to_start);
  2. starts the server (task.options.server_language, default the client's language)
     as a fresh process in its own session, pinned to its CPUs, RLIMIT_NOFILE raised to
     the hard limit, stdin a pipe; waits for its one listening line (bounded);
  3. runs the client (task.language) pinned to the client CPUs, bounded by the timeout,
     the server sampled from /proc meanwhile (sockets.probe: saturation fields, guard);
  4. closes the server's stdin (its stop signal), waits for its record (bounded), then
     SIGTERM and SIGKILL to its process group if it has not exited; reaps it;
  5. returns ONE raw record: the client's run as the envelope plus server_language,
     placement, client_cpus, server_cpus, `server` (its record, exit, status, CPU times,
     peak RSS, stderr tail) and, for a benchmark whose package asks for them, probe.FIELDS.
     Byte accounting is checked across the two records (sockets.accounting).

task.cores is the number of CPUs of EACH side. placement 'split': server on the first
task.cores allowed CPUs, client on the next task.cores (a load generator, its package's
sockets HOOKS.client_takes_spare_cpus: on ALL the remaining ones, with one --threads worker per
CPU); 'shared': both on the
first task.cores. A KeyboardInterrupt kills both process groups, reaps them, re-raises.
No system-wide setting (sysctl) is ever changed here; `sysctl_snapshot()` reads the
ones that matter for the manifest.
"""

from __future__ import annotations

import os
import subprocess
import time
from dataclasses import replace

from serverbench import catalog, contract
from serverbench.harness.planning.task import Task
from serverbench.harness.running import classify, limits, pinned
from serverbench.harness.running.launch import Family
from serverbench.harness.sockets import accounting as sockets_bytes
from serverbench.harness.sockets import probe as sockets_probe
from serverbench.harness.sockets.cap import over_cap, server_cap
from serverbench.harness.sockets.limits import (  # noqa: F401  (re-exported: the family's API)
    SocketLimitError,
    check_connections,
    check_memory_floors,
    nofile_limits,
    placement_cpus,
    sysctl_snapshot,
)
from serverbench.harness.sockets.server import STOP_WAIT_S, TERM_WAIT_S, Server  # noqa: F401  (re-exported)
from serverbench.plugins import SocketOptions
from serverbench.rawdata.columns import Col

LISTEN_WAIT_S = 30.0  # longest wait for the listening line (JVM start-up on a busy host)
CLIENT_MARGIN_S = 5.0  # the client's own --timeout-s is this much below the run's timeout
CLIENT_TIMED_OUT = "timed out after"  # how a socket client's validation.reason says it hit --timeout-s


# ---- parameters of each role ---------------------------------------------------------
def role_params(bench: str, role: str, params: dict) -> dict:
    """The subset of params the role's flags take (host and port excluded)."""
    keys = {f.param for f in contract.flags(bench, role).values()} - {None, *contract.HARNESS_PARAMS}
    return {k: v for k, v in params.items() if k in keys}


def client_params(task: Task, client_cpus: list[int] | None = None) -> dict:
    p = role_params(task.benchmark, "client", dict(task.params))
    if contract.flag_of(task.benchmark, "client_timeout_s", "client"):  # it gives up (and reports) just before the kill
        p[Col.client_timeout_s] = max(1.0, task.timeout_s - CLIENT_MARGIN_S)
    threads = contract.flag_of(task.benchmark, "client_threads", "client")
    if threads is not None and threads.max is not None:  # the load generator: one worker thread per CPU it is pinned to
        p[Col.client_threads] = max(1, min(len(client_cpus or ()), int(threads.max)))
    per_server = catalog.benchmark(task.benchmark).socket_hooks.client_params
    if per_server is not None:  # what the benchmark sets per server (IM: its setup concurrency)
        p.update(per_server(p, task.server_language))
    return p


def server_params(task: Task) -> dict:
    p = role_params(task.benchmark, "server", dict(task.params))
    # a server that outlives its client ends by itself soon after the run
    if contract.flag_of(task.benchmark, "idle_timeout_s", "server"):
        p[Col.idle_timeout_s] = float(task.timeout_s + STOP_WAIT_S)  # never before the client could be done
    return p


def command(
    lau, task: Task, lang: str, role: str, params: dict, cores: int, settings: dict | None = None
) -> tuple[list[str], dict]:
    """(argv, env the harness sets) of one side, from spec/cli.json (or the launcher's
    override); settings: the server's runtime settings (task.options.server_settings, e.g.
    nodelay=on: the build the setting's value names)."""
    prefix, env = lau.prefix(
        lang,
        {
            "exe": str(contract.executable(lang, settings)),
            "cores": str(cores),
            "heap_mb": str(task.heap_mb),
            "process_limit": str(task.process_limit),
        },
    )
    return prefix + contract.native_args(task.benchmark, params, task.variant, role), env


def server_row(task: Task) -> SocketOptions:
    """The task's server row; a task built without one runs the client's own language as
    its server, split."""
    return task.options or SocketOptions(task.language)


# ---- the run's CPUs (interference is measured on them) -----------------------------------
def run_cpus(lau, task: Task) -> list[int]:
    """Every CPU the run's server and client are pinned to: harness.running.interference counts the
    other processes' CPU time on these (SOCKET.cpus); every allowed CPU when the
    placement is impossible (the run is refused)."""
    try:
        s, c = placement_cpus(lau.allowed_cpus, task.cores, server_row(task).placement, task.benchmark)
    except SocketLimitError:
        return sorted(lau.allowed_cpus)
    return sorted(set(s) | set(c))


# ---- the server process ------------------------------------------------------------------
# ---- one run ------------------------------------------------------------------------------
def run_socket_task(lau, task: Task) -> dict:
    """One server + one client for one task; the raw record (see the module docstring)."""
    row = server_row(task)
    server_lang, placement = row.server_language, row.placement
    refused: str | None = None
    try:
        server_cpus, client_cpus = placement_cpus(lau.allowed_cpus, task.cores, placement, task.benchmark)
        if Col.connections in task.params:
            check_connections(int(task.params[Col.connections]))
            check_memory_floors(int(task.params[Col.connections]), sockets_probe.host_floor_bytes(task))
    except SocketLimitError as e:
        refused, server_cpus, client_cpus = f"refused: {e}", [], []
    cparams, sparams = client_params(task, client_cpus), server_params(task)
    ccores = len(client_cpus) or task.cores
    sargv, senv = command(
        lau,
        task,
        server_lang,
        "server",
        {**sparams, "port": 0},  # the server picks a free port and says which
        task.cores,
        dict(row.server_settings),
    )
    cargv_probe, cenv = command(lau, task, task.language, "client", {**cparams, "port": 1}, ccores)
    rec = lau.base_record(task, cargv_probe, cenv, [], "none")
    rec.update(
        params=dict(cparams),
        server_language=server_lang,
        placement=placement,
        client_cpus=[],
        server_cpus=[],
        server=_server_part(server_lang, sargv, senv, []),
        **(dict.fromkeys(sockets_probe.FIELDS) if sockets_probe.has_probe_fields(task) else {}),
    )
    if refused:
        rec[Col.status_reason] = refused
        return rec
    rec.update(pinned_cpus=client_cpus, client_cpus=client_cpus, server_cpus=server_cpus)
    rec[Col.server][Col.pinned_cpus] = server_cpus
    tag = f"{lau.next_serial()}"
    s_err = os.path.join(lau.tmpdir, f"server-stderr-{tag}")
    c_out, c_err = os.path.join(lau.tmpdir, f"client-stdout-{tag}"), os.path.join(lau.tmpdir, f"client-stderr-{tag}")
    t_start = time.perf_counter()
    cap = server_cap(lau, task, rec, tag)
    try:
        srv = Server(sargv, lau.child_env(senv), server_cpus, s_err, cap.procs_path if cap else None)
    except (OSError, subprocess.SubprocessError) as e:
        rec[Col.status_reason] = f"could not start the server {sargv[0]!r}: {e}"
        if cap:
            cap.remove()
        return rec
    try:
        lau.check_affinity(srv.proc.pid, server_cpus)
        port, why = _wait_listening(srv, task.benchmark, server_lang, min(LISTEN_WAIT_S, task.timeout_s))
        if port is None:
            srv.stop()
            _fill_server(rec, srv, None, None)
            rec[Col.status] = (
                "crashed"
                if rec[Col.server][Col.exit_code] not in (None, 0) or rec[Col.server][Col.signal]
                else "failed_to_start"
            )
            rec[Col.status_reason] = f"server: {why}"
            rec[Col.stderr_tail] = ""
            return rec
        cargv, cenv = command(lau, task, task.language, "client", {**cparams, "port": port}, ccores)
        rec.update(command=cargv, env=cenv)
        left = task.timeout_s - (time.perf_counter() - t_start)
        host = contract.socket_host()
        # the load generator's runtime reports its --threads as its schedulers (classify checks them)
        ctask = replace(task, params={**cparams, "host": host}, cores=int(cparams.get(Col.client_threads, task.cores)))
        probe = sockets_probe.for_task(task, srv.proc.pid)
        _run_client(lau, rec, ctask, cargv, lau.child_env(cenv), client_cpus, c_out, c_err, max(1.0, left), probe)
        sockets_probe.apply(rec, task, probe)
        crashed_before_stop = srv.poll()
        action = srv.stop()
        _fill_server(rec, srv, action, crashed_before_stop)
    except BaseException:
        srv.kill()
        raise
    finally:
        srv.close()
        oom = cap.oom_events() if cap else 0
        if cap:
            cap.remove()
        for p in (s_err, c_out, c_err):
            try:
                os.unlink(p)
            except OSError:
                pass
    _overall_status(rec, task)
    over_cap(rec, task, oom)
    return rec


def _server_part(lang, argv, env, cpus) -> dict:
    unknown = dict.fromkeys(("port", "record", "exit_code", "signal"))
    unmeasured = dict.fromkeys(("wall_s", "user_cpu_s", "system_cpu_s", "peak_rss_bytes"))
    head = {"language": lang, "command": argv, "env": env, "pinned_cpus": cpus, **unknown}
    return {**head, "status": "failed_to_start", "status_reason": None, **unmeasured, "stderr_tail": ""}


def _wait_listening(srv: Server, bench: str, lang: str, wait_s: float) -> tuple[int | None, str]:
    import json

    line = srv.read_line(time.perf_counter() + wait_s)
    if line is None:
        if srv.poll():
            return None, "exited before listening (" + _exit_text(srv.status) + "): " + _last_line(
                classify.tail(srv.err_path, 2000)
            )
        return None, f"no listening line within {wait_s:g} s"
    try:
        ev = json.loads(line)
        ok = (
            ev.get("event") == "listening"
            and ev.get(Col.benchmark) == bench
            and ev.get(Col.language) == lang
            and ev.get("address") == "127.0.0.1"
            and isinstance(ev.get(Col.port), int)
            and 0 < ev[Col.port] < 65536
        )
    except (json.JSONDecodeError, AttributeError):
        ok = False
    if not ok:
        return None, f"first stdout line is not the listening line: {line[:200]!r}"
    return ev[Col.port], ""


def _run_client(lau, rec, ctask, argv, env, cpus, out_path, err_path, timeout_s, probe) -> None:
    with open(out_path, "wb") as fout, open(err_path, "wb") as ferr:
        t0 = time.perf_counter()
        try:
            proc = pinned.start(argv, env, cpus, stdout=fout, stderr=ferr, raise_nofile=True)
        except (OSError, subprocess.SubprocessError) as e:
            rec[Col.status_reason] = f"could not start the client {argv[0]!r}: {e}"
            return
        lau.check_affinity(proc.pid, cpus)
        mon = limits.Monitor(proc.pid, t0 + timeout_s, None, lau.watchdog_interval_s)
        mon.start()
        probe.start(proc.pid, t0)
        status, ru, _ = pinned.wait(proc, mon.stop, probe.stop)
    rec.update(
        wall_s=time.perf_counter() - t0,
        user_cpu_s=ru.ru_utime,
        system_cpu_s=ru.ru_stime,
        peak_rss_bytes=int(ru.ru_maxrss) * 1024 or None,
        minor_page_faults=int(ru.ru_minflt),
        major_page_faults=int(ru.ru_majflt),
    )
    if os.WIFEXITED(status):
        rec[Col.exit_code] = os.WEXITSTATUS(status)
    elif os.WIFSIGNALED(status):
        rec[Col.signal] = os.WTERMSIG(status)
    classify.classify(rec, replace(ctask, timeout_s=timeout_s), out_path, err_path, classify.Seen(mon.reason))
    rec[Col.stderr_tail] = classify.tail(err_path, classify.STDERR_TAIL_CHARS)
    rec[Col.params] = {k: v for k, v in ctask.params.items() if k != "host"}


def _exit_text(status) -> str:
    if status is None:
        return "still running"
    if os.WIFSIGNALED(status):
        return f"killed by signal {os.WTERMSIG(status)} ({classify.signame(os.WTERMSIG(status))})"
    return f"exit code {os.WEXITSTATUS(status)}"


def _last_line(text: str) -> str:
    lines = text.strip().splitlines()
    return lines[-1][:300] if lines else ""


def _fill_server(rec: dict, srv: Server, action: str | None, crashed_before_stop: bool | None) -> None:
    """The server part of the raw record from the reaped server."""
    import json

    s = rec[Col.server]
    st, ru = srv.status, srv.rusage
    s.update(
        wall_s=srv.wall_s,
        user_cpu_s=ru.ru_utime,
        system_cpu_s=ru.ru_stime,
        peak_rss_bytes=int(ru.ru_maxrss) * 1024 or None,
        stderr_tail=classify.tail(srv.err_path, classify.STDERR_TAIL_CHARS),
    )
    if os.WIFEXITED(st):
        s[Col.exit_code] = os.WEXITSTATUS(st)
    else:
        s[Col.signal] = os.WTERMSIG(st)
    body = srv.buf.decode("utf-8", "replace").strip()
    native = None
    if body:
        try:
            native = json.loads(body.splitlines()[-1])
        except json.JSONDecodeError:
            native = None
    from serverbench.rawdata import records

    problem = records.native_errors(native) if native is not None else "no record on stdout"
    if crashed_before_stop:
        s[Col.status], s[Col.status_reason] = "crashed", "the server exited during the run (" + _exit_text(st) + ")"
    elif action is not None:
        s[Col.status], s[Col.status_reason] = "crashed", f"the harness stopped it: {action}"
    elif s[Col.signal] is not None or s[Col.exit_code] != 0:
        s[Col.status], s[Col.status_reason] = "crashed", _exit_text(st)
    elif problem:
        s[Col.status], s[Col.status_reason] = "invalid", f"server record: {problem}"
    else:
        s[Col.record] = native
        s[Col.port] = native[Col.metrics].get(Col.port)
        ok = bool(native[Col.validation][Col.ok])
        s[Col.status] = "ok" if ok else "invalid"
        s[Col.status_reason] = None if ok else f"server validation failed: {native[Col.validation].get(Col.reason)}"
    if s[Col.record] is None and native is not None and not problem:
        s[Col.record] = native


def _overall_status(rec: dict, task: Task) -> None:
    """The run's status from both sides; cross-check the byte accounting."""
    s = rec[Col.server]
    status, server_status = rec[Col.status], s[Col.status]

    def server_said() -> str:  # only when the server's side is the reason: it has one then
        return f"server ({s[Col.language]}): {s[Col.status_reason]}"

    if server_status == "crashed" and status in ("ok", "invalid"):
        rec[Col.status], rec[Col.status_reason] = "crashed", server_said()
        return
    said = str((rec.get(Col.validation) or {}).get(Col.reason) or "")
    if status == "invalid" and said.startswith(CLIENT_TIMED_OUT):
        # the client stopped itself at its own limit (the run's timeout - CLIENT_MARGIN_S) so as
        # to report how far it got: that is the run's timeout, not wrong work
        rec[Col.status], rec[Col.status_reason] = (
            "timeout",
            f"client: {said} (the run's limit less {CLIENT_MARGIN_S:g} s)",
        )
        return
    if status != "ok":
        if status == "crashed" and server_status == "crashed":
            rec[Col.status_reason] = f"{rec[Col.status_reason]}; {server_said()}"
        return
    if server_status != "ok":
        rec[Col.status], rec[Col.status_reason] = "invalid", server_said()
        return
    why = sockets_bytes.mismatch(task.benchmark, task.params, rec[Col.metrics], s[Col.record][Col.metrics])
    if why:  # the server's own counters against the client's (sockets_bytes: which tolerance, why)
        rec[Col.status], rec[Col.status_reason] = "invalid", why


# The socket family's runner and its CPUs (the recording wing hands it to the Launcher).
SOCKET = Family(run_socket_task, run_cpus)
