"""One run of an original program, made the way the harness makes a run: pinned to the
first C of the allowed CPUs, in a memory cgroup of the sweep's budget where the machine has
one (else the RSS watchdog), ended at its wall-clock limit, its rusage kept. What happened is
one raw-log line (spec/raw-record.schema.json) for the sweep folder's original.jsonl, beside
the harness's runs.jsonl, so no other reader of the sweep mistakes it for a native run.

The line has the original's runtime as `language`, variant `paper`, settings
{"program": "original"} and `metrics` null, as any program that prints no native record. A
JVM original's settings also say which flags it ran with (programs.FLAGS_SETTING:
"authors", the JVM's defaults, or "ours", the harness's heap and stack flags, which its
`command` shows and its config_id names as a language key's setting does); a line without
that key (sweeps before it) ran as the authors ran it.
Its status is `invalid` (the schema's word for such a run; `ok` needs a native record) with
`status_reason` saying whether it printed its result line, which `stdout_tail` keeps;
`crashed`, `timeout` or `over_memory_budget` as for any run. A program that prints and keeps
running (the Scala ones never terminate their ActorSystem) is stopped once its line is out.
"""

from __future__ import annotations

import itertools
import os
import subprocess
import tempfile
import time
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path

from serverbench.harness.running import cgroups, command, environment, limits, pinned
from serverbench.harness.running.host import killpg
from serverbench.originals.programs import AUTHORS, FLAGS_SETTING, OriginalError, Program
from serverbench.rawdata import records
from serverbench.rawdata.columns import Col

FILE_NAME = "original.jsonl"
SETTINGS = {"program": "original"}
TAIL = 4000
POLL_S = 0.02
GRACE_S = 0.5  # after a non-exiting program's result line: the lines it prints next
PRINTED_REASON = "printed its result (stdout_tail), as the original does: no native record"
STOPPED = "; stopped once printed (it does not exit)"
_SERIAL = itertools.count(1)  # names each run's cgroup


def config_id(program: Program, cores: int, params: Mapping, flags: str = AUTHORS) -> str:
    """As the harness names a configuration, with `original` where the variant goes; with
    our JVM flags the language as a non-default setting names it ('scala_akka24[jvm_flags=ours]'),
    as the authors ran it the language alone (as before the flags were a choice)."""
    kv = ",".join(f"{k}={_fmt(params[k])}" for k in sorted(params))
    lang = program.language + ("" if flags == AUTHORS else f"[{FLAGS_SETTING}={flags}]")
    return f"{program.benchmark}/{lang}/original/c{cores}/{kv}"


def flags_of(rec: dict) -> str:
    """Which flags a run of an original had: its settings' FLAGS_SETTING, AUTHORS without one."""
    return (rec.get(Col.settings) or {}).get(FLAGS_SETTING, AUTHORS)


def _fmt(v) -> str:
    return f"{v:g}" if isinstance(v, float) else str(v)


def portable(path: str, artifact: Path) -> str:
    """An argument as the record names it: the artifact under the home folder as ~/...,
    else its name (no machine path in what a sweep writes)."""
    if path != str(artifact):
        return path
    try:
        return "~/" + artifact.relative_to(Path.home()).as_posix()
    except ValueError:
        return artifact.name


def value(program: Program, rec: dict) -> float | None:
    """What a run of the original reported (programs.Program.value of its stdout), None when
    it printed nothing or did not end as a printing run does."""
    return program.value(rec.get(Col.stdout_tail)) if rec.get(Col.status) == "invalid" else None


def run(
    program: Program,
    sweep_id: str,
    trial: int,
    cores: int,
    params: dict,
    host: dict,
    allowed_cpus: list[int],
    timeout_s: float,
    budget_bytes: int | None = None,
    enforcement: str = "none",
    cgroup_parent: str | None = None,
    process_limit: int = 1_048_576,
    where: Path | None = None,
    flags: str = AUTHORS,
    heap_mb: int = 0,
) -> dict:
    """One run of `program`; its raw record (checked against the raw schema). `enforcement`
    is what limits.detect_enforcement found for this machine (cgroup, watchdog or none);
    `flags` and `heap_mb` as programs.Program.command takes them."""
    artifact = program.path(where)
    argv, set_env = program.command(artifact, cores, params, process_limit, flags, heap_mb)
    cpus = sorted(allowed_cpus)[: min(cores, len(allowed_cpus))]
    cg = None
    if enforcement == "cgroup" and budget_bytes:
        cg = cgroups.create(cgroup_parent, f"{cgroups.PREFIX}original-{os.getpid()}-{next(_SERIAL)}", budget_bytes)
    mode = "cgroup" if cg else ("watchdog" if enforcement in ("cgroup", "watchdog") and budget_bytes else "none")
    rec = {
        "schema_version": 1,
        "sweep_id": sweep_id,
        "config_id": config_id(program, cores, params, flags),
        "trial": trial,
        "warmup": False,
        "benchmark": program.benchmark,
        "language": program.language,
        "variant": "paper",
        "knobs": None,
        "params": dict(params),
        "settings": {**SETTINGS, **({FLAGS_SETTING: flags} if program.jvm else {})},
        "metrics": None,
        "validation": None,
        "runtime": None,
        "started_utc": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
        "host": host,
        "cores": cores,
        "pinned_cpus": cpus,
        "command": [portable(a, artifact) for a in argv],
        "env": set_env,
        "timeout_s": float(timeout_s),
        "memory_budget_bytes": budget_bytes if mode != "none" else None,
        "memory_enforcement": mode,
    }
    with tempfile.TemporaryDirectory(prefix="serverbench-original-") as tmp:
        out_path, err_path = os.path.join(tmp, "stdout"), os.path.join(tmp, "stderr")
        with open(out_path, "wb") as fout, open(err_path, "wb") as ferr:
            before = environment.contention_before(cpus)
            t0 = time.perf_counter()
            try:
                proc = pinned.start(
                    argv,
                    command.child_env(set_env),
                    cpus,
                    stdout=fout,
                    stderr=ferr,
                    cgroup_procs=cg.procs_path if cg else None,
                )
            except (OSError, subprocess.SubprocessError) as e:
                if cg:
                    cg.remove()
                raise OriginalError(f"could not start {argv[0]!r}: {e}") from None
            mon = limits.Monitor(
                proc.pid, t0 + timeout_s, budget_bytes if mode == "watchdog" else None, 0.05, sample_hwm=cg is None
            )
            mon.start()
            status, ru, stopped = _wait(proc, program, out_path, mon)
            wall = time.perf_counter() - t0
            rec.update(environment.contention_fields(before, cpus))
        out, err = _read(out_path), _read(err_path)
    oom = cg.oom_events() if cg else 0
    peak = cg.peak() if cg else None
    if cg:
        cg.remove()
    exit_code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else None
    sig = os.WTERMSIG(status) if os.WIFSIGNALED(status) else None
    rec.update(
        wall_s=wall,
        user_cpu_s=ru.ru_utime,
        system_cpu_s=ru.ru_stime,
        peak_rss_bytes=peak or (max(mon.hwm, mon.peak_rss) or None),
        exit_code=exit_code,
        signal=sig,
        stdout_tail=out[-TAIL:],
        stderr_tail=err[-TAIL:],
    )
    rec.update(classify(program, out, exit_code, sig, mon.reason, oom, stopped))
    problem = records.raw_errors(rec)
    if problem:
        raise OriginalError(f"the original's record does not meet the raw schema: {problem}")
    return rec


def _read(path: str) -> str:
    with open(path, "rb") as f:
        return f.read().decode("utf-8", "replace")


def _wait(proc, program: Program, out_path: str, mon: limits.Monitor):
    """(wait status, rusage, whether the runner stopped it) once the child is gone; a program
    that does not exit is ended GRACE_S after its result line. On any raise (Ctrl-C) the
    child's group is ended and reaped, and the exception goes on."""
    stopped = False
    try:
        while True:
            pid, status, ru = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if not program.exits and not stopped and program.value(_read(out_path)) is not None:
                time.sleep(GRACE_S)
                killpg(proc.pid)
                stopped = True
            time.sleep(POLL_S)
    except BaseException:
        mon.stop()
        killpg(proc.pid)
        try:
            os.waitpid(proc.pid, 0)
        except ChildProcessError:
            pass
        raise
    mon.stop()
    killpg(proc.pid)  # what is left of its group
    return status, ru, stopped


def classify(
    program: Program, stdout: str, exit_code: int | None, sig: int | None, limit: str | None, oom: int, stopped: bool
) -> dict:
    """status and status_reason of a finished run of an original."""
    if limit == "timeout":
        return {"status": "timeout", "status_reason": "wall-clock limit"}
    if limit == "memory" or oom:
        return {"status": "over_memory_budget", "status_reason": "memory budget exceeded"}
    printed = program.value(stdout) is not None
    if stopped and printed:
        return {"status": "invalid", "status_reason": PRINTED_REASON + STOPPED}
    if sig is not None:
        return {"status": "crashed", "status_reason": f"killed by signal {sig}"}
    if exit_code:
        return {"status": "crashed", "status_reason": f"exit code {exit_code}"}
    if not printed:
        return {"status": "invalid", "status_reason": "printed no result line (for maxSpeakers: System.exit ran first)"}
    return {"status": "invalid", "status_reason": PRINTED_REASON}
