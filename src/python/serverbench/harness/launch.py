"""One native run: a fresh process, pinned, capped, timed, classified.

`run_one(spec, ...)` starts the process (sched_setaffinity and, where possible, a memory
cgroup entered in the child before exec), waits for it with os.wait4 (rusage: peak RSS,
user and system CPU seconds), enforces the wall-clock timeout and the memory budget,
and returns the raw-log record (not yet written). A KeyboardInterrupt while the child
runs kills the child's process group, reaps it and re-raises: no record.
"""

from __future__ import annotations

import ctypes
import json
import math
import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
import weakref
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from serverbench import contract, records

STDERR_TAIL_CHARS = 4000
STDOUT_TAIL_CHARS = 2000
STDOUT_MAX_BYTES = 64 * 1024 * 1024

# Inherited variables that would change how a runtime behaves behind the harness's back.
STRIPPED_ENV = (
    "GOMAXPROCS", "GOGC", "GOMEMLIMIT", "GODEBUG",
    "ERL_FLAGS", "ERL_AFLAGS", "ERL_ZFLAGS",
    "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS",
    "SERVERBENCH_CORES", "SERVERBENCH_HEAP_MB", "SERVERBENCH_PROCESS_LIMIT",
)

# stderr patterns of a runtime that ran out of memory on its own (non-zero exit).
OOM_PATTERNS = (
    "java.lang.OutOfMemoryError",
    "fatal error: out of memory",
    "runtime: out of memory",
    "eheap_alloc: Cannot allocate",
    "Cannot allocate",
    "std::bad_alloc",
    "MemoryError",
)

PR_SET_PDEATHSIG = 1


@dataclass
class RunSpec:
    """What to run: one configuration, one trial."""

    benchmark: str
    language: str
    variant: str
    params: dict
    cores: int
    config_id: str
    timeout_s: float
    memory_budget_bytes: int | None
    heap_mb: int
    process_limit: int
    search: dict | None = None
    memory_enforcement: str = "auto"  # auto | cgroup | watchdog | none (the profile's wish)


@dataclass
class Launcher:
    """Per-sweep launch settings shared by every run."""

    sweep_id: str
    host: dict
    allowed_cpus: list[int]
    commands: dict = field(default_factory=dict)  # language -> argv prefix override
    enforcement: str = "watchdog"  # cgroup | watchdog | none (what the machine allows)
    cgroup_parent: str | None = None
    watchdog_interval_s: float = 0.05
    tmpdir: str | None = None
    affinity_checked: int = 0
    affinity_mismatch: int = 0

    def __post_init__(self):
        if self.tmpdir is None:
            _remove_dead_tmpdirs()
            self.tmpdir = tempfile.mkdtemp(prefix=f"serverbench-run-{os.getpid()}-")
            weakref.finalize(self, shutil.rmtree, self.tmpdir, True)
        self._serial = 0

    # -- commands -------------------------------------------------------------------
    def command(self, spec: RunSpec) -> tuple[list[str], dict]:
        """(argv, env the harness sets) for one run, from spec/cli.json (or an override)."""
        lang = contract.language(spec.language)
        subst = {
            "exe": str(contract.executable(spec.language)),
            "cores": str(spec.cores),
            "heap_mb": str(spec.heap_mb),
            "process_limit": str(spec.process_limit),
        }
        override = self.commands.get(spec.language)
        prefix = [_fill(s, subst) for s in (override if override is not None else lang["command"])]
        env = {k: _fill(v, subst) for k, v in lang.get("env", {}).items()}
        if override is not None:
            # A replaced command (tests' fakes) gets every setting as an env var too,
            # since it may not have the JVM flags the real command line carries.
            env.update(SERVERBENCH_CORES=subst["cores"], SERVERBENCH_HEAP_MB=subst["heap_mb"],
                       SERVERBENCH_PROCESS_LIMIT=subst["process_limit"])
        argv = prefix + contract.native_args(spec.benchmark, spec.params, spec.variant)
        return argv, env

    def mode_for(self, spec: RunSpec) -> str:
        if not spec.memory_enforcement or spec.memory_enforcement == "none" or not spec.memory_budget_bytes:
            return "none"
        if spec.memory_enforcement == "watchdog":
            return "watchdog"
        return self.enforcement  # auto/cgroup: what this machine allows (checked before the sweep)

    def pinned(self, cores: int) -> list[int]:
        """The first C of the harness's own allowed CPUs (all of them when oversubscribing)."""
        return sorted(self.allowed_cpus)[: min(cores, len(self.allowed_cpus))]

    # -- one run --------------------------------------------------------------------
    def run_one(self, spec: RunSpec, trial: int, warmup: bool) -> tuple[dict, float]:
        """Run once; return (raw record, harness wall seconds including the child's)."""
        t_begin = time.perf_counter()
        argv, set_env = self.command(spec)
        cpus = self.pinned(spec.cores)
        budget = spec.memory_budget_bytes
        enforcement = self.mode_for(spec)
        env = {k: v for k, v in os.environ.items() if k not in STRIPPED_ENV}
        env.update(set_env)

        self._serial += 1
        cg = None
        if enforcement == "cgroup":
            cg = _Cgroup.create(self.cgroup_parent, f"serverbench-{os.getpid()}-{self._serial}", budget)
            if cg is None:  # could not create this one: fall back for this run, say so
                enforcement = "watchdog"

        out_path = os.path.join(self.tmpdir, "stdout")
        err_path = os.path.join(self.tmpdir, "stderr")
        started_utc = _utc_now()
        rec = {
            "schema_version": 1, "sweep_id": self.sweep_id, "config_id": spec.config_id, "trial": trial,
            "warmup": warmup, "benchmark": spec.benchmark, "language": spec.language, "variant": spec.variant,
            "params": dict(spec.params), "metrics": None, "validation": None, "runtime": None,
            "search": spec.search, "started_utc": started_utc, "host": self.host, "cores": spec.cores,
            "pinned_cpus": cpus, "command": argv, "env": set_env, "wall_s": None, "user_cpu_s": None,
            "system_cpu_s": None, "peak_rss_bytes": None, "exit_code": None, "signal": None,
            "status": "failed_to_start", "status_reason": None, "stdout_tail": None, "stderr_tail": "",
            "timeout_s": float(spec.timeout_s), "memory_budget_bytes": budget, "memory_enforcement": enforcement,
        }
        if spec.search is None:
            del rec["search"]

        preexec = _make_preexec(cpus, cg.procs_path if cg else None)
        with open(out_path, "wb") as fout, open(err_path, "wb") as ferr:
            own_rss = _own_rss()
            t0 = time.perf_counter()
            try:
                proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=fout, stderr=ferr, env=env,
                                        preexec_fn=preexec, start_new_session=True, close_fds=True)
            except (OSError, subprocess.SubprocessError) as e:
                rec["wall_s"] = time.perf_counter() - t0
                rec["status_reason"] = f"could not start {argv[0]!r}: {e}"
                if cg:
                    cg.remove()
                return self._finish(rec, err_path, out_path, t_begin)
            pid = proc.pid
            self._check_affinity(pid, cpus)
            mon = _Monitor(pid, t0 + spec.timeout_s, budget if enforcement == "watchdog" else None,
                           self.watchdog_interval_s, sample_hwm=(enforcement != "cgroup"))
            mon.start()
            try:
                _, status, ru = _wait4(pid)
            except BaseException:
                # Ctrl-C (or anything else): end the child, reap it, leave no record.
                mon.stop()
                _killpg(pid)
                try:
                    os.waitpid(pid, 0)
                except ChildProcessError:
                    pass
                proc.returncode = -9
                if cg:
                    cg.remove()
                raise
            t1 = time.perf_counter()
            mon.stop()
            _killpg(pid)  # leftovers of the child's group (e.g. helper processes)
            proc.returncode = status

        rec["wall_s"] = t1 - t0
        rec["user_cpu_s"] = ru.ru_utime
        rec["system_cpu_s"] = ru.ru_stime
        oom_kills = cg.oom_events() if cg else 0
        cg_peak = cg.peak() if cg else None
        rec["peak_rss_bytes"] = _peak_rss(int(ru.ru_maxrss) * 1024, own_rss, mon, cg_peak)
        if os.WIFEXITED(status):
            rec["exit_code"] = os.WEXITSTATUS(status)
        elif os.WIFSIGNALED(status):
            rec["signal"] = os.WTERMSIG(status)
        if cg:
            cg.remove()
        self._classify(rec, spec, err_path, out_path, mon, oom_kills, cg_peak)
        return self._finish(rec, err_path, out_path, t_begin)

    def _check_affinity(self, pid: int, cpus: list[int]) -> None:
        try:
            got = sorted(os.sched_getaffinity(pid))
        except OSError:
            return
        self.affinity_checked += 1
        if got != sorted(cpus):
            self.affinity_mismatch += 1

    def _finish(self, rec: dict, err_path: str, out_path: str, t_begin: float) -> tuple[dict, float]:
        rec["stderr_tail"] = _tail(err_path, STDERR_TAIL_CHARS)
        return rec, time.perf_counter() - t_begin

    def _classify(self, rec, spec, err_path, out_path, mon, oom_kills, cg_peak) -> None:
        stderr_tail = _tail(err_path, STDERR_TAIL_CHARS)
        code, sig = rec["exit_code"], rec["signal"]
        budget = spec.memory_budget_bytes
        if mon.reason == "timeout":
            rec["status"] = "timeout"
            rec["status_reason"] = f"no exit within {spec.timeout_s:g} s: killed"
            rec["stdout_tail"] = _tail(out_path, STDOUT_TAIL_CHARS)
            return
        if mon.reason == "memory":
            rec["status"] = "over_memory_budget"
            rec["status_reason"] = (f"RSS of the process tree reached {mon.peak_rss} bytes, over the budget of "
                                    f"{budget} bytes (watchdog): killed")
            rec["stdout_tail"] = _tail(out_path, STDOUT_TAIL_CHARS)
            return
        if oom_kills and (sig is not None or code not in (0,)):
            rec["status"] = "over_memory_budget"
            rec["status_reason"] = (f"killed by the kernel OOM killer in its memory cgroup (limit {budget} bytes"
                                    + (f", peak usage {cg_peak} bytes" if cg_peak else "") + ")")
            rec["stdout_tail"] = _tail(out_path, STDOUT_TAIL_CHARS)
            return
        if code not in (0, 1) or sig is not None:
            if not _runtime_oom(rec, stderr_tail, budget):
                rec["status"] = "crashed"
                if sig is not None:
                    rec["status_reason"] = f"killed by signal {sig} ({_signame(sig)})"
                elif code == contract.exit_code("usage"):
                    rec["status_reason"] = "exit 2: the program refused its command line (usage error)"
                else:
                    rec["status_reason"] = f"exit code {code}"
            rec["stdout_tail"] = _tail(out_path, STDOUT_TAIL_CHARS)
            return
        # exit 0 or 1: a record is expected (exit 1 may also be a runtime failure with no record)
        native, problem = _read_record(out_path)
        if native is None:
            if code == 1:
                if not _runtime_oom(rec, stderr_tail, budget):
                    rec["status"] = "crashed"
                    last = stderr_tail.strip().splitlines()[-1] if stderr_tail.strip() else ""
                    rec["status_reason"] = f"exit code 1 without a record: {last[:300]}" if last else \
                        "exit code 1 without a record"
            else:
                rec["status"] = "invalid"
                rec["status_reason"] = f"no valid record on stdout: {problem}"
            rec["stdout_tail"] = _tail(out_path, STDOUT_TAIL_CHARS)
            return
        mismatch = _mismatch(native, spec)
        if mismatch:
            rec["status"] = "invalid"
            rec["status_reason"] = f"record is not about the run asked for: {mismatch}"
            rec["runtime"] = native.get("runtime")
            rec["stdout_tail"] = _tail(out_path, STDOUT_TAIL_CHARS)
            return
        rec["metrics"] = native["metrics"]
        rec["validation"] = native["validation"]
        rec["runtime"] = native["runtime"]
        reported = native["runtime"].get("schedulers")
        if reported != spec.cores:
            rec["status"] = "invalid"
            rec["status_reason"] = f"runtime reports {reported} schedulers, the harness asked for {spec.cores}"
            return
        ok = bool(native["validation"].get("ok"))
        if ok and code == 0:
            rec["status"] = "ok"
        elif not ok:
            rec["status"] = "invalid"
            rec["status_reason"] = "the program's own validation failed (validation.ok false)" + \
                ("" if code == 1 else f"; exit code {code}")
        else:
            rec["status"] = "invalid"
            rec["status_reason"] = f"validation.ok is true but exit code is {code}"


# ---------------------------------------------------------------------------------------
def _runtime_oom(rec: dict, stderr_tail: str, budget) -> bool:
    """A run under a budget whose runtime reported running out of memory on its own:
    mark it over_memory_budget and say so."""
    oom = next((p for p in OOM_PATTERNS if p in stderr_tail), None) if budget else None
    if oom:
        rec["status"] = "over_memory_budget"
        rec["status_reason"] = f"the runtime ran out of memory ({oom!r} on stderr; budget {budget} bytes)"
    return oom is not None


def _fill(template: str, subst: dict) -> str:
    for k, v in subst.items():
        template = template.replace("{" + k + "}", v)
    return template


def _utc_now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _signame(sig: int) -> str:
    try:
        return signal.Signals(sig).name
    except ValueError:
        return "unknown"


def _wait4(pid: int):
    while True:
        try:
            return os.wait4(pid, 0)
        except InterruptedError:  # pragma: no cover (PEP 475 retries already)
            continue


def _killpg(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _tail(path: str, chars: int) -> str:
    try:
        size = os.path.getsize(path)
        with open(path, "rb") as f:
            if size > chars * 4:
                f.seek(size - chars * 4)
            data = f.read()
    except OSError:
        return ""
    return data.decode("utf-8", errors="replace")[-chars:]


def _own_rss() -> int:
    try:
        with open("/proc/self/statm", "rb") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def _peak_rss(ru_maxrss: int, own_rss: int, mon: "_Monitor", cg_peak: int | None) -> int | None:
    """The child's peak RSS. ru_maxrss of a forked child starts at the harness's own RSS at
    fork (Linux keeps the pre-exec high-water mark), so it is the child's peak only when it
    is clearly above that; otherwise the peak is below the harness's RSS and is taken from
    the cgroup's peak usage or the sampled VmHWM / process-tree RSS (a lower bound)."""
    if ru_maxrss > own_rss * 1.02 + 1024 * 1024:
        return ru_maxrss
    other = max(cg_peak or 0, mon.hwm, mon.peak_rss)
    return other if other > 0 else None


def _read_record(path: str) -> tuple[dict | None, str | None]:
    """(native record, None) when stdout is exactly one valid record, else (None, why)."""
    size = os.path.getsize(path)
    if size == 0:
        return None, "stdout is empty"
    if size > STDOUT_MAX_BYTES:
        return None, f"stdout is {size} bytes"
    with open(path, "rb") as f:
        data = f.read()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None, "stdout is not UTF-8"
    body = text[:-1] if text.endswith("\n") else text
    if body.endswith("\r"):
        body = body[:-1]
    if "\n" in body:
        return None, f"stdout has {body.count(chr(10)) + 1} lines, expected exactly one"
    try:
        obj = json.loads(body)
    except json.JSONDecodeError as e:
        return None, f"not JSON ({e.msg} at column {e.colno})"
    err = records.native_errors(obj)
    if err:
        return None, f"not a valid native record ({err})"
    return obj, None


def _same(a, b) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return math.isclose(float(a), float(b), rel_tol=1e-12, abs_tol=0.0)
    return a == b


def _mismatch(native: dict, spec: RunSpec) -> str | None:
    for key, want in (("benchmark", spec.benchmark), ("language", spec.language), ("variant", spec.variant)):
        if native.get(key) != want:
            return f"{key} is {native.get(key)!r}, asked {want!r}"
    got = native.get("params", {})
    if set(got) != set(spec.params):
        return f"params keys {sorted(got)} differ from {sorted(spec.params)}"
    for k, v in spec.params.items():
        if not _same(got[k], v):
            return f"params.{k} is {got[k]!r}, asked {v!r}"
    return None


def _make_preexec(cpus: list[int], cgroup_procs: str | None):
    """Runs in the child between fork and exec: affinity, cgroup, die with the harness."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        prctl = libc.prctl
    except (OSError, AttributeError):  # pragma: no cover
        prctl = None
    cpuset = set(cpus)
    procs = cgroup_procs.encode() if cgroup_procs else None

    def preexec():
        os.sched_setaffinity(0, cpuset)
        if procs is not None:
            fd = os.open(procs, os.O_WRONLY)
            try:
                os.write(fd, str(os.getpid()).encode())
            finally:
                os.close(fd)
        if prctl is not None:
            prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)

    return preexec


class _Monitor:
    """A thread that ends the child's process group at the deadline, and (watchdog
    mode) samples the RSS of the child's process tree and ends it past the budget."""

    def __init__(self, pid: int, deadline: float, budget: int | None, interval: float, sample_hwm: bool = True):
        self.pid, self.deadline, self.budget, self.interval = pid, deadline, budget, interval
        self.sample_hwm = sample_hwm
        self.hwm = 0
        self.reason: str | None = None
        self.peak_rss = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="serverbench-monitor", daemon=True)
        self._proc = None

    def start(self):
        self._thread.start()

    def stop(self):
        self._stop.set()
        self._thread.join()

    def _loop(self):
        if self.budget is not None:
            try:
                import psutil

                self._proc = psutil.Process(self.pid)
            except Exception:
                self._proc = None
        while True:
            now = time.perf_counter()
            remaining = self.deadline - now
            if remaining <= 0:
                self.reason = "timeout"
                _killpg(self.pid)
                return
            sampling = self._proc is not None or self.sample_hwm
            if self.sample_hwm:
                self._read_hwm()
            wait = min(remaining, self.interval) if sampling else remaining
            if self._stop.wait(wait):
                return
            if self._proc is not None:
                rss = self._tree_rss()
                if rss > self.peak_rss:
                    self.peak_rss = rss
                if rss > self.budget:
                    self.reason = "memory"
                    _killpg(self.pid)
                    return

    def _read_hwm(self) -> None:
        try:
            with open(f"/proc/{self.pid}/status", "rb") as f:
                for line in f:
                    if line.startswith(b"VmHWM:"):
                        self.hwm = max(self.hwm, int(line.split()[1]) * 1024)
                        return
        except (OSError, ValueError):
            pass

    def _tree_rss(self) -> int:
        import psutil

        total = 0
        try:
            procs = [self._proc] + self._proc.children(recursive=True)
        except psutil.Error:
            return 0
        for p in procs:
            try:
                total += p.memory_info().rss
            except psutil.Error:
                pass
        return total


class _Cgroup:
    """A cgroup v1 memory child of the harness's own memory cgroup, one per run."""

    def __init__(self, path: str):
        self.path = path
        self.procs_path = os.path.join(path, "cgroup.procs")

    @classmethod
    def create(cls, parent: str | None, name: str, budget: int) -> "_Cgroup | None":
        if not parent:
            return None
        path = os.path.join(parent, name)
        try:
            os.mkdir(path)
        except FileExistsError:
            pass
        except OSError:
            return None
        cg = cls(path)
        try:
            _write(os.path.join(path, "memory.limit_in_bytes"), budget)
        except OSError:
            cg.remove()
            return None
        try:  # no swapping past the budget either, where swap accounting exists
            _write(os.path.join(path, "memory.memsw.limit_in_bytes"), budget)
        except OSError:
            pass
        return cg

    def oom_events(self) -> int:
        n = 0
        try:
            for line in Path(self.path, "memory.oom_control").read_text().splitlines():
                k, _, v = line.partition(" ")
                if k == "oom_kill":
                    n = int(v)
        except (OSError, ValueError):
            pass
        if n == 0:
            try:
                # failcnt counts allocations refused at the limit; a signal-killed
                # child with failures is the OOM killer on kernels without oom_kill.
                fail = int(Path(self.path, "memory.failcnt").read_text().strip() or 0)
                n = 1 if fail > 0 and self._usage_at_limit() else 0
            except (OSError, ValueError):
                pass
        return n

    def _usage_at_limit(self) -> bool:
        try:
            peak = int(Path(self.path, "memory.max_usage_in_bytes").read_text().strip())
            limit = int(Path(self.path, "memory.limit_in_bytes").read_text().strip())
            return peak >= limit * 0.95
        except (OSError, ValueError):
            return False

    def peak(self) -> int | None:
        try:
            return int(Path(self.path, "memory.max_usage_in_bytes").read_text().strip())
        except (OSError, ValueError):
            return None

    def remove(self) -> None:
        for _ in range(50):
            try:
                pids = Path(self.procs_path).read_text().split()
            except OSError:
                pids = []
            for p in pids:
                try:
                    os.kill(int(p), signal.SIGKILL)
                except (ProcessLookupError, ValueError, PermissionError):
                    pass
            try:
                os.rmdir(self.path)
                return
            except FileNotFoundError:
                return
            except OSError:
                time.sleep(0.01)


def _write(path: str, value) -> None:
    fd = os.open(path, os.O_WRONLY)
    try:
        os.write(fd, str(value).encode())
    finally:
        os.close(fd)


def own_memory_cgroup() -> str | None:
    """The harness's own cgroup v1 memory directory, or None."""
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        parts = line.split(":", 2)
        if len(parts) == 3 and "memory" in parts[1].split(","):
            d = os.path.join("/sys/fs/cgroup/memory", parts[2].lstrip("/"))
            if os.path.isdir(d):
                return d
    return None


def detect_enforcement(requested: str = "auto") -> tuple[str, str | None, str]:
    """(mode, cgroup parent or None, how it was found) for memory budgets on this machine.

    auto: a cgroup v1 memory child of the harness's own cgroup if one can be created and
    limited (probed once); else the psutil RSS watchdog; else none."""
    note = ""
    if requested in ("auto", "cgroup"):
        parent = own_memory_cgroup()
        if parent:
            probe = os.path.join(parent, f"serverbench-probe-{os.getpid()}")
            try:
                os.mkdir(probe)
                try:
                    _write(os.path.join(probe, "memory.limit_in_bytes"), 64 * 1024 * 1024)
                    return "cgroup", parent, f"cgroup v1 memory child of {parent}"
                finally:
                    os.rmdir(probe)
            except OSError as e:
                note = f"cannot create a memory cgroup under {parent} ({e.strerror}); "
        else:
            note = "no cgroup v1 memory controller for this process; "
        if requested == "cgroup":
            raise RuntimeError(note + "memory_enforcement = 'cgroup' is not possible here")
    if requested in ("auto", "cgroup", "watchdog"):
        try:
            import psutil  # noqa: F401

            return "watchdog", None, note + "psutil RSS watchdog"
        except ImportError:
            if requested == "watchdog":
                raise RuntimeError("memory_enforcement = 'watchdog' needs psutil") from None
    return "none", None, note + "no enforcement"


def cleanup_stale_cgroups(parent: str | None) -> int:
    """Remove empty serverbench-* cgroups left by a harness that was killed."""
    if not parent:
        return 0
    n = 0
    try:
        names = os.listdir(parent)
    except OSError:
        return 0
    for name in names:
        if not name.startswith("serverbench-"):
            continue
        owner = name.split("-")[-2] if name.count("-") >= 2 else ""
        if owner.isdigit() and _alive(int(owner)):
            continue
        d = os.path.join(parent, name)
        try:
            if Path(d, "cgroup.procs").read_text().strip():
                continue
            os.rmdir(d)
            n += 1
        except OSError:
            pass
    return n


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _remove_dead_tmpdirs() -> None:
    """Remove stdout/stderr folders left by harnesses that were killed (their pid is gone)."""
    base = tempfile.gettempdir()
    try:
        names = os.listdir(base)
    except OSError:
        return
    for name in names:
        parts = name.split("-")
        if len(parts) >= 4 and name.startswith("serverbench-run-") and parts[2].isdigit() \
                and not _alive(int(parts[2])):
            shutil.rmtree(os.path.join(base, name), ignore_errors=True)
