"""Limits on one child process (started by running.pinned: pinned, dying with the
harness): the wall-clock deadline, the memory budget (which enforcement this machine
allows, checked against each runtime's floor; the cgroups themselves are
harness.running.cgroups), an RSS watchdog, and the host's memory floor (MemAvailable must stay
above it)."""

from __future__ import annotations

import threading
import time
from typing import Any

from serverbench import catalog, jdks
from serverbench.harness.planning import task as task_mod
from serverbench.harness.planning.values import ProfileError
from serverbench.harness.running import cgroups, jvm
from serverbench.harness.running.host import killpg

MiB = 1024**2
# Budget floors checked before a sweep. Start-up measured on this machine (peak cgroup
# usage of `<command> --version`): C 0.4 MiB, Go 1, Python 6-22, Node 7, Erlang 33;
# Java 40, Scala 47-51, Akka 77 MiB with the heap mostly untouched. Below 16 MiB most
# runtimes cannot start (less is most likely a unit slip); a JVM needs its heap + 32 MiB.
MIN_BUDGET_BYTES = 16 * MiB
JVM_NON_HEAP_BYTES = 32 * MiB


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
                from serverbench.harness.running.host import mem_available

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


def detect_enforcement(
    requested: str = "auto", root: str = cgroups.DEFAULT_ROOT, proc_cgroup: str | None = None
) -> tuple[str, str | None, str]:
    """(mode, cgroup parent or None, how it was found) for memory budgets on this machine.

    auto and cgroup try, in order: a cgroup v1 memory child of the harness's own cgroup;
    a cgroup v2 leaf in a sub-tree of the harness's own cgroup (cgroups.setup_v2); then
    (auto) the psutil RSS watchdog; else none. A systemd-run scope (MemoryMax=) is not
    implemented (docs/harness.md says why). `root` and `proc_cgroup` (the text of
    /proc/self/cgroup) are for tests' fake trees."""
    notes = []
    if requested in ("auto", "cgroup"):
        parent = cgroups.own_v1_memory(root, proc_cgroup)
        if parent:
            why = cgroups.probe_v1(parent)
            if why is None:
                return "cgroup", parent, "cgroup v1 memory child of the harness's cgroup"
            notes.append(why)
        else:
            notes.append("no cgroup v1 memory controller for this process")
        sub, how = cgroups.setup_v2(root, proc_cgroup)
        if sub:
            return "cgroup", sub, how
        notes.append(how)
        if requested == "cgroup":
            raise RuntimeError("; ".join(notes) + "; memory_enforcement = 'cgroup' is not possible here")
    note = "".join(n + "; " for n in notes)
    if requested in ("auto", "watchdog"):
        try:
            import psutil  # noqa: F401

            return "watchdog", None, note + "psutil RSS watchdog"
        except ImportError:
            if requested == "watchdog":
                raise RuntimeError("memory_enforcement = 'watchdog' needs psutil") from None
    return "none", None, note + "no enforcement"


def mechanism(mode: str, parent: str | None) -> str:
    """What enforces budgets, for the manifest: cgroup1 | cgroup2 | watchdog | none."""
    if mode != "cgroup":
        return mode
    return "cgroup2" if cgroups.is_v2(parent) else "cgroup1"


def budget_floor(prefix: list[str], heap_mb: int) -> tuple[int, str]:
    """(the least budget a run of this command can start in, why)."""
    if jvm.is_jvm(prefix):
        return heap_mb * MiB + JVM_NON_HEAP_BYTES, (
            f"a JVM gets a {heap_mb} MiB heap (-Xms/-Xmx, from heap_fraction x budget, at least "
            f"{heap_mb_floor()} MiB) and needs about {JVM_NON_HEAP_BYTES // MiB} MiB beside it"
        )
    return MIN_BUDGET_BYTES, "below it most runtimes here cannot even start (Python, Node, Erlang: 6-33 MiB)"


def heap_mb_floor() -> int:
    return task_mod.heap_mb(1, 1.0)  # the smallest heap task.heap_mb ever gives


def check_budgets(plan, commands: dict, mode: str, parent: str | None) -> None:
    """Bad budgets get a clear error before anything runs: below what the run's runtime
    needs to start, or (under a cgroup) a limit the kernel refuses (written to a probe)."""
    runs = [(t.config_id, t) for t in plan.tasks if t.family == "process"]
    runs += [(s.key, s.task(1, 0)) for s in plan.searches]
    probed: set[int] = set()
    for where, t in runs:
        budget = t.memory_budget_bytes
        if not budget or t.memory_enforcement == "none":
            continue
        prefix = commands.get(t.language) or jdks.fill(list(catalog.language(t.language).command))
        floor, why = budget_floor(prefix, t.heap_mb)
        if budget < floor:
            raise ProfileError(
                f"{where}: memory budget {budget} bytes ({budget / MiB:g} MiB) is below the floor of "
                f"{floor} bytes ({floor / MiB:g} MiB) for {t.language}: {why}"
            )
        if mode == "cgroup" and t.memory_enforcement != "watchdog" and budget not in probed:
            probed.add(budget)
            refused = cgroups.refusal(parent, budget)
            if refused:
                raise ProfileError(f"{where}: memory budget {budget} bytes ({budget / MiB:g} MiB): {refused}")
