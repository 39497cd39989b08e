"""One run: a fresh process, pinned, capped, timed, classified.

`Launcher.run(task)` runs the task by its family (a `Family`: "process", `run_process`
below, is every Launcher's; the recording wing hands it the socket family's too, imported
from harness.sockets.run), samples the load average, CPU steal and other processes' CPU
time on the run's CPUs around it (running.interference), and returns the raw-log record
(not yet written). `run_process` starts the process (running.pinned: sched_setaffinity
and, where possible, a memory cgroup entered in the child before exec), waits with
os.wait4 (rusage: peak RSS, CPU seconds, page faults), enforces the timeout, the memory
budget and the host's memory floor, and classifies the outcome. A KeyboardInterrupt while
the child runs kills the child's process group, reaps it and re-raises: no record.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
import weakref
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime

from serverbench import contract
from serverbench.harness.planning.resolved import thaw
from serverbench.harness.planning.task import Task
from serverbench.harness.running import cgroups, classify, command, environment, interference, jvm, limits, pinned
from serverbench.rawdata.columns import Col


@dataclass(frozen=True)
class Family:
    """How the runs of one benchmark family (spec/cli.json's benchmarks.<id>.family) are
    made: run(launcher, task) -> the raw record; cpus(launcher, task) -> every CPU the run
    uses (interference is measured on them)."""

    run: Callable[[Launcher, Task], dict]
    cpus: Callable[[Launcher, Task], list[int]]


@dataclass
class Launcher:
    """Per-sweep launch settings shared by every run."""

    sweep_id: str
    host: dict
    allowed_cpus: list[int]
    commands: dict = field(default_factory=dict)  # language -> argv prefix override (tests' fakes)
    enforcement: str = "watchdog"  # cgroup | watchdog | none (what the machine allows)
    cgroup_parent: str | None = None  # v1 memory cgroup or v2 sub-tree (harness.running.cgroups)
    watchdog_interval_s: float = 0.05
    tmpdir: str | None = None
    affinity_checked: int = 0
    affinity_mismatch: int = 0
    # family -> how its runs are made; "process" is always there (FAMILIES below)
    families: Mapping[str, Family] = field(default_factory=dict)

    def __post_init__(self):
        self.families = {**FAMILIES, **self.families}
        if self.tmpdir is None:
            _remove_dead_tmpdirs()
            self.tmpdir = tempfile.mkdtemp(prefix=f"serverbench-run-{os.getpid()}-")
            weakref.finalize(self, shutil.rmtree, self.tmpdir, True)
        self._serial = 0

    # -- commands -------------------------------------------------------------------
    def command(self, task: Task, role: str | None = None) -> tuple[list[str], dict]:
        """(argv, env the harness sets) for one run, from spec/cli.json (or an override)."""
        subst = {
            "exe": str(contract.executable(task.language, task.settings)),
            "cores": str(task.cores),
            "heap_mb": str(task.heap_mb),
            "process_limit": str(task.process_limit),
        }
        prefix, env = self.prefix(task.language, subst)
        if task.language not in self.commands:  # a tests' fake command has no such arguments
            omit = {command.fill(a, subst) for a in contract.omitted_args(task.language, task.settings)}
            prefix = [a for a in prefix if a not in omit]
        if jvm.is_jvm(prefix) and task.memory_budget_bytes:
            gc_log = os.path.join(self.tmpdir or ".", jvm.GC_LOG_NAME) if task.search else None
            prefix = prefix[:1] + jvm.options(bool(task.search), gc_log) + prefix[1:]
        return prefix + contract.native_args(task.benchmark, dict(task.params), task.variant, role), env

    def version_command(self, lang: str) -> tuple[list[str], dict]:
        """(argv, full env) of `<exe> --version`."""
        subst = {"exe": str(contract.executable(lang)), "cores": "1", "heap_mb": "256", "process_limit": "1048576"}
        prefix, env = self.prefix(lang, subst)
        return prefix + ["--version"], self.child_env(env)

    def prefix(self, lang: str, subst: dict) -> tuple[list[str], dict]:
        """(argv prefix, env the harness sets) of a language's command: spec/cli.json's (or
        this launcher's override, which gets every setting as an env var too), with subst's
        {exe}, {cores}, {heap_mb} and {process_limit} filled in."""
        return command.command_prefix(lang, subst, self.commands.get(lang))

    @staticmethod
    def child_env(set_env: dict) -> dict:
        return command.child_env(set_env)

    def next_serial(self) -> int:
        """A number no earlier run of this launcher had: names a run's cgroup and files."""
        self._serial += 1
        return self._serial

    def family(self, name: str) -> Family:
        if name not in self.families:
            raise ValueError(f"no runner for the benchmark family {name!r}; known: {', '.join(self.families)}")
        return self.families[name]

    def mode_for(self, task: Task) -> str:
        if not task.memory_enforcement or task.memory_enforcement == "none" or not task.memory_budget_bytes:
            return "none"
        if task.memory_enforcement == "watchdog":
            return "watchdog"
        return self.enforcement  # auto/cgroup: what this machine allows (checked before the sweep)

    def pinned(self, cores: int) -> list[int]:
        """The first C of the harness's own allowed CPUs (all of them when oversubscribing)."""
        return sorted(self.allowed_cpus)[: min(cores, len(self.allowed_cpus))]

    def base_record(self, task: Task, argv: list, set_env: dict, cpus: list, enforcement: str) -> dict:
        """A raw record with everything known before the run; status failed_to_start."""
        rec = {
            "schema_version": 1,
            "sweep_id": self.sweep_id,
            "config_id": task.config_id,
            "trial": task.trial,
            "warmup": task.warmup,
            "stage": task.stage,
            "benchmark": task.benchmark,
            "language": task.language,
            "variant": task.variant,
            "params": task.record_params,
            "metrics": None,
            "validation": None,
            "runtime": None,
            "search": thaw(task.search),
            "started_utc": _utc_now(),
            "host": self.host,
            "cores": task.cores,
            "pinned_cpus": cpus,
            "command": argv,
            "env": set_env,
            "wall_s": None,
            "user_cpu_s": None,
            "system_cpu_s": None,
            "peak_rss_bytes": None,
            "exit_code": None,
            "signal": None,
            "status": "failed_to_start",
            "status_reason": None,
            "stdout_tail": None,
            "stderr_tail": "",
            "timeout_s": float(task.timeout_s),
            "memory_budget_bytes": task.memory_budget_bytes,
            "memory_enforcement": enforcement,
            "minor_page_faults": None,
            "major_page_faults": None,
        }
        if task.search is None:
            del rec[Col.search]
        if task.resolved_from is not None:
            rec[Col.resolved_from] = thaw(task.resolved_from)
        if task.settings:
            rec[Col.settings] = thaw(task.settings)
        return rec

    def check_affinity(self, pid: int, cpus: list[int]) -> None:
        try:
            got = sorted(os.sched_getaffinity(pid))
        except OSError:
            return
        self.affinity_checked += 1
        if got != sorted(cpus):
            self.affinity_mismatch += 1

    # -- one run --------------------------------------------------------------------
    def run(self, task: Task) -> tuple[dict, float]:
        """Run once (by the task's family); return (raw record, harness wall seconds).
        Interference (harness.running.interference) is measured on the run's CPUs for every family:
        a process run's pinned CPUs, a socket run's server and client CPUs."""
        t_begin = time.perf_counter()
        family = self.family(task.family)
        process = family.run is run_process
        cpus = family.cpus(self, task)
        with interference.harness_off(cpus, self.allowed_cpus) as off:
            before = environment.contention_before(cpus)
            busy = interference.busy_ticks(cpus)
            harness0, t0 = interference.harness_cpu_s(), time.perf_counter()
            rec = family.run(self, task)
            window, harness_s = time.perf_counter() - t0, interference.harness_cpu_s() - harness0
            busy_after = interference.busy_ticks(cpus)
            rec.update(environment.contention_fields(before, cpus))
        if process:
            rec.update(interference.fields(busy, busy_after, cpus, rec), harness_cpus=off)
        else:  # the whole run is the window; the harness's share is the run's own unless it moved off
            extra = {"window_s": window, "harness_s": harness_s if off is None else 0.0}
            rec.update(interference.fields(busy, busy_after, cpus, rec, **extra), harness_cpus=off)
        return rec, time.perf_counter() - t_begin


def run_process(lau: Launcher, task: Task) -> dict:
    """One native process for one task: the 'process' family."""
    argv, set_env = lau.command(task)
    cpus = lau.pinned(task.cores)
    budget = task.memory_budget_bytes
    enforcement = lau.mode_for(task)
    serial = lau.next_serial()
    cg = None
    if enforcement == "cgroup":
        cg = cgroups.create(lau.cgroup_parent, f"{cgroups.PREFIX}{os.getpid()}-{serial}", budget)
        if cg is None:  # could not create this one: fall back for this run, say so
            enforcement = "watchdog"
    rec = lau.base_record(task, argv, set_env, cpus, enforcement)
    out_path, err_path = os.path.join(lau.tmpdir, "stdout"), os.path.join(lau.tmpdir, "stderr")
    gc_log = os.path.join(lau.tmpdir or ".", jvm.GC_LOG_NAME)
    watch = jvm.GcThrashWatch(gc_log) if any(a == f"-Xlog:gc:file={gc_log}" for a in argv) else None
    if watch is not None and os.path.exists(gc_log):
        os.unlink(gc_log)
    with open(out_path, "wb") as fout, open(err_path, "wb") as ferr:
        own_rss = _own_rss()
        t0 = time.perf_counter()
        try:
            proc = pinned.start(
                argv, lau.child_env(set_env), cpus, stdout=fout, stderr=ferr, cgroup_procs=cg.procs_path if cg else None
            )
        except (OSError, subprocess.SubprocessError) as e:
            rec[Col.wall_s] = time.perf_counter() - t0
            rec[Col.status_reason] = f"could not start {argv[0]!r}: {e}"
            if cg:
                cg.remove()
            rec[Col.stderr_tail] = classify.tail(err_path, classify.STDERR_TAIL_CHARS)
            return rec
        pid = proc.pid
        lau.check_affinity(pid, cpus)
        mon = limits.Monitor(
            pid,
            t0 + task.timeout_s,
            budget if enforcement == "watchdog" else None,
            lau.watchdog_interval_s,
            sample_hwm=(cg is None or cg.peak() is None),  # v2 before Linux 5.19 has no memory.peak
            host_floor=task.host_floor_bytes,
            extra_check=watch.check if watch else None,
        )
        mon.start()
        try:
            status, ru, t1 = pinned.wait(proc, mon.stop)
        except BaseException:  # Ctrl-C (or anything else): the child is ended and reaped; no record
            if cg:
                cg.remove()
            raise
    rec.update(
        wall_s=t1 - t0,
        user_cpu_s=ru.ru_utime,
        system_cpu_s=ru.ru_stime,
        minor_page_faults=int(ru.ru_minflt),
        major_page_faults=int(ru.ru_majflt),
        involuntary_context_switches=int(ru.ru_nivcsw),
    )
    oom_kills = cg.oom_events() if cg else 0
    cg_peak = cg.peak() if cg else None
    rec[Col.peak_rss_bytes] = _peak_rss(int(ru.ru_maxrss) * 1024, own_rss, mon, cg_peak)
    if os.WIFEXITED(status):
        rec[Col.exit_code] = os.WEXITSTATUS(status)
    elif os.WIFSIGNALED(status):
        rec[Col.signal] = os.WTERMSIG(status)
    if cg:
        cg.remove()
    classify.classify(
        rec,
        task,
        out_path,
        err_path,
        classify.Seen(mon.reason, mon.peak_rss, oom_kills, cg_peak, task.host_floor_bytes, mon.detail),
    )
    rec[Col.stderr_tail] = classify.tail(err_path, classify.STDERR_TAIL_CHARS)
    return rec


def _utc_now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _own_rss() -> int:
    try:
        with open("/proc/self/statm", "rb") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def _peak_rss(ru_maxrss: int, own_rss: int, mon: limits.Monitor, cg_peak: int | None) -> int | None:
    """The child's peak RSS. ru_maxrss of a forked child starts at the harness's own RSS at
    fork (Linux keeps the pre-exec high-water mark), so it is the child's peak only when it
    is clearly above that; otherwise the peak is below the harness's RSS and is taken from
    the cgroup's peak usage or the sampled VmHWM / process-tree RSS (a lower bound)."""
    if ru_maxrss > own_rss * 1.02 + 1024 * 1024:
        return ru_maxrss
    other = max(cg_peak or 0, mon.hwm, mon.peak_rss)
    return other if other > 0 else None


def _remove_dead_tmpdirs() -> None:
    """Remove stdout/stderr folders left by harnesses that were killed (their pid is gone)."""
    base = tempfile.gettempdir()
    try:
        entries = os.listdir(base)
    except OSError:
        return
    for name in entries:
        parts = name.split("-")
        if (
            len(parts) >= 4
            and name.startswith("serverbench-run-")
            and parts[2].isdigit()
            and not cgroups.alive(int(parts[2]))
        ):
            shutil.rmtree(os.path.join(base, name), ignore_errors=True)


# Every Launcher's families; the recording wing adds the socket family (harness.sockets.run).
FAMILIES: dict[str, Family] = {"process": Family(run_process, lambda lau, task: lau.pinned(task.cores))}
