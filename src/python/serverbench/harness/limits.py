"""Limits on one child process: CPU pinning and death-with-the-harness (in the child
before exec), the wall-clock deadline, the memory budget (a cgroup v1 memory child, or
an RSS watchdog), and the host's memory floor (MemAvailable must stay above it)."""

from __future__ import annotations

import ctypes
import os
import signal
import threading
import time
from pathlib import Path
from typing import Any

PR_SET_PDEATHSIG = 1


def killpg(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def make_preexec(cpus: list[int], cgroup_procs: str | None):
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


class Monitor:
    """A thread that ends the child's process group at the deadline; in watchdog mode it
    samples the RSS of the child's process tree and ends it past the budget; with a host
    floor it ends it when the machine's MemAvailable falls below the floor.

    extra_check() -> why or None (e.g. a JVM's GC log showing its heap exhausted) ends it
    as "memory" too, with `detail` saying why.

    reason: None | "timeout" | "memory" | "host_memory"."""

    def __init__(
        self,
        pid: int,
        deadline: float,
        budget: int | None,
        interval: float,
        sample_hwm: bool = True,
        host_floor: int | None = None,
        extra_check=None,
    ):
        self.pid, self.deadline, self.budget, self.interval = pid, deadline, budget, interval
        self.sample_hwm = sample_hwm
        self.host_floor = host_floor
        self.extra_check = extra_check
        self.detail: str | None = None
        self.hwm = 0
        self.reason: str | None = None
        self.peak_rss = 0
        self.min_mem_available: int | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="serverbench-monitor", daemon=True)
        self._proc: Any = None  # psutil.Process of the child, in watchdog mode

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
            remaining = self.deadline - time.perf_counter()
            if remaining <= 0:
                return self._end("timeout")
            sampling = (
                self._proc is not None or self.sample_hwm or self.host_floor is not None or self.extra_check is not None
            )
            if self.sample_hwm:
                self._read_hwm()
            if self._stop.wait(min(remaining, self.interval) if sampling else remaining):
                return
            if self._proc is not None:
                rss = self._tree_rss()
                self.peak_rss = max(self.peak_rss, rss)
                if rss > self.budget:
                    return self._end("memory")
            if self.host_floor is not None:
                from serverbench.harness.environment import mem_available

                avail = mem_available()
                if self.min_mem_available is None or avail < self.min_mem_available:
                    self.min_mem_available = avail
                if avail < self.host_floor:
                    return self._end("host_memory")
            if self.extra_check is not None:
                why = self.extra_check()
                if why:
                    self.detail = why
                    return self._end("memory")

    def _end(self, reason: str) -> None:
        self.reason = reason
        killpg(self.pid)

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

        root = self._proc
        if root is None:
            return 0
        try:
            procs = [root] + root.children(recursive=True)
        except psutil.Error:
            return 0
        total = 0
        for p in procs:
            try:
                total += p.memory_info().rss
            except psutil.Error:
                pass
        return total


class Cgroup:
    """A cgroup v1 memory child of the harness's own memory cgroup, one per run."""

    def __init__(self, path: str):
        self.path = path
        self.procs_path = os.path.join(path, "cgroup.procs")

    @classmethod
    def create(cls, parent: str | None, name: str, budget: int) -> Cgroup | None:
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
            write_int(os.path.join(path, "memory.limit_in_bytes"), budget)
        except OSError:
            cg.remove()
            return None
        try:  # no swapping past the budget either, where swap accounting exists
            write_int(os.path.join(path, "memory.memsw.limit_in_bytes"), budget)
        except OSError:
            pass
        return cg

    def _read(self, name: str) -> int | None:
        try:
            return int(Path(self.path, name).read_text().strip())
        except (OSError, ValueError):
            return None

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
            # failcnt counts allocations refused at the limit; a signal-killed child with
            # failures is the OOM killer on kernels without oom_kill.
            fail, peak, limit = self._read("memory.failcnt"), self.peak(), self._read("memory.limit_in_bytes")
            n = 1 if fail and peak and limit and peak >= limit * 0.95 else 0
        return n

    def peak(self) -> int | None:
        return self._read("memory.max_usage_in_bytes")

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


def write_int(path: str, value) -> None:
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
                    write_int(os.path.join(probe, "memory.limit_in_bytes"), 64 * 1024 * 1024)
                    return "cgroup", parent, "cgroup v1 memory child of the harness's cgroup"
                finally:
                    os.rmdir(probe)
            except OSError as e:
                note = f"cannot create a memory cgroup under the harness's cgroup ({e.strerror}); "
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
        if owner.isdigit() and alive(int(owner)):
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
