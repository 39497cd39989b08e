"""Memory cgroups that hold one run each, so that the kernel enforces its budget.
(One module past ~350 lines: v1 and v2 share the run lifecycle and its cleanup.)

cgroup v1: a `serverbench-<pid>-<n>` child of the harness's own memory cgroup
(`memory.limit_in_bytes`, `memory.memsw.limit_in_bytes`).

cgroup v2: the unified hierarchy forbids processes in a cgroup whose children have
controllers enabled ("no internal processes"), so the runs' leaves cannot sit directly
beside the harness. `setup_v2` makes a sub-tree `<own>/serverbench-<pid>/` with `+memory`
in its `cgroup.subtree_control` and in `<own>`'s; when `<own>` holds the harness and
nothing else and refuses `+memory` (EBUSY), the harness first moves itself into the leaf
`<own>/serverbench-harness-<pid>`. If other processes share `<own>` it gives up: moving
them is not the harness's business. Each run then gets the leaf
`<own>/serverbench-<pid>/serverbench-<pid>-<n>` (`memory.max`, `memory.swap.max` = 0).

The child enters its cgroup between fork and exec (running.pinned.make_preexec writes its pid
to `procs_path`). `root` and /proc/self/cgroup's text are parameters, and writes, mkdir
and rmdir go through `_write`, `_mkdir`, `_rmdir`, so tests can use a fake tree.
"""

from __future__ import annotations

import atexit
import errno
import os
import signal
import time
from pathlib import Path

DEFAULT_ROOT = "/sys/fs/cgroup"
PREFIX = "serverbench-"
PROBE_BYTES = 64 * 1024 * 1024  # any limit will do: the probe only checks it can be written


def _write(path: str, text: str) -> None:
    fd = os.open(path, os.O_WRONLY)  # no O_CREAT: a missing interface file is an error
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


def _mkdir(path: str) -> None:
    os.mkdir(path)


def _rmdir(path: str) -> None:
    os.rmdir(path)


def write_int(path: str, value) -> None:
    _write(path, str(value))


def _words(path: str) -> list[str]:
    try:
        return Path(path).read_text().split()
    except OSError:
        return []


def proc_cgroup_text(text: str | None = None) -> str:
    try:
        return Path("/proc/self/cgroup").read_text() if text is None else text
    except OSError:
        return ""


class _Cgroup:
    limit_file = swap_file = ""

    def __init__(self, path: str):
        self.path = path
        self.procs_path = os.path.join(path, "cgroup.procs")

    def _read(self, name: str) -> int | None:
        try:
            return int(Path(self.path, name).read_text().strip())
        except (OSError, ValueError):
            return None

    def _count(self, name: str, key: str) -> int:
        """The value of `key` in a flat-keyed file such as memory.events ('oom_kill 1')."""
        try:
            for line in Path(self.path, name).read_text().splitlines():
                k, _, v = line.partition(" ")
                if k == key:
                    return int(v)
        except (OSError, ValueError):
            pass
        return 0

    @classmethod
    def create(cls, parent: str | None, name: str, budget: int):
        if not parent:
            return None
        path = os.path.join(parent, name)
        try:
            _mkdir(path)
        except FileExistsError:
            pass
        except OSError:
            return None
        cg = cls(path)
        try:
            write_int(os.path.join(path, cls.limit_file), budget)
        except OSError:
            cg.remove()
            return None
        try:  # no swapping past the budget either, where swap accounting exists
            write_int(os.path.join(path, cls.swap_file), cls.swap_limit(budget))
        except OSError:
            pass
        return cg

    @staticmethod
    def swap_limit(budget: int) -> int:
        raise NotImplementedError

    def remove(self) -> None:
        """rmdir, killing what is still inside when the kernel says it is busy."""
        for _ in range(50):
            try:
                _rmdir(self.path)
                return
            except FileNotFoundError:
                return
            except OSError:
                pass
            try:
                pids = Path(self.procs_path).read_text().split()
            except OSError:
                pids = []
            for p in pids:
                try:
                    os.kill(int(p), signal.SIGKILL)
                except (ProcessLookupError, ValueError, PermissionError):
                    pass
            time.sleep(0.01)


class CgroupV1(_Cgroup):
    """A cgroup v1 memory child of the harness's own memory cgroup, one per run."""

    limit_file, swap_file = "memory.limit_in_bytes", "memory.memsw.limit_in_bytes"

    @staticmethod
    def swap_limit(budget: int) -> int:
        return budget  # memsw counts memory + swap

    def oom_events(self) -> int:
        n = self._count("memory.oom_control", "oom_kill")
        if n == 0:
            # failcnt counts allocations refused at the limit; a signal-killed child with
            # failures is the OOM killer on kernels without oom_kill.
            fail, peak, limit = self._read("memory.failcnt"), self.peak(), self._read("memory.limit_in_bytes")
            n = 1 if fail and peak and limit and peak >= limit * 0.95 else 0
        return n

    def peak(self) -> int | None:
        return self._read("memory.max_usage_in_bytes")


class CgroupV2(_Cgroup):
    """A leaf of the harness's cgroup v2 sub-tree, one per run (memory.swap.max is absent
    without swap accounting: then only RAM is limited)."""

    limit_file, swap_file = "memory.max", "memory.swap.max"

    @staticmethod
    def swap_limit(budget: int) -> int:
        return 0  # swap.max counts swap alone

    def oom_events(self) -> int:
        # memory.events counts this leaf and below; oom_kill = processes the OOM killer ended
        return self._count("memory.events", "oom_kill")

    def peak(self) -> int | None:
        return self._read("memory.peak")  # Linux >= 5.19; None before


def is_v2(parent: str | None) -> bool:
    """A v2 directory has cgroup.subtree_control; a v1 memory directory has limit_in_bytes."""
    return bool(parent) and os.path.exists(os.path.join(parent or "", "cgroup.subtree_control"))


def create(parent: str | None, name: str, budget: int) -> CgroupV1 | CgroupV2 | None:
    """The run's cgroup under `parent` (v1 or v2, as the parent is), or None."""
    return (CgroupV2 if is_v2(parent) else CgroupV1).create(parent, name, budget)


def refusal(parent: str | None, budget: int) -> str | None:
    """Why the kernel refuses `budget` as a limit under `parent` (a probe cgroup), or None."""
    kind = CgroupV2 if is_v2(parent) else CgroupV1
    probe = os.path.join(parent or "", f"{PREFIX}budget-{os.getpid()}")
    limit = kind.limit_file
    try:
        _mkdir(probe)
    except FileExistsError:
        pass
    except OSError as e:
        return f"cannot create a probe cgroup under {parent} ({e.strerror})"
    try:
        write_int(os.path.join(probe, limit), budget)
        return None
    except OSError as e:
        return f"the kernel refused it as {limit} ({e.strerror})"
    finally:
        kind(probe).remove()


# -- v1 ---------------------------------------------------------------------------------
def own_v1_memory(root: str = DEFAULT_ROOT, proc_cgroup: str | None = None) -> str | None:
    """The harness's own cgroup v1 memory directory, or None."""
    for line in proc_cgroup_text(proc_cgroup).splitlines():
        parts = line.split(":", 2)
        if len(parts) == 3 and "memory" in parts[1].split(","):
            d = os.path.join(root, "memory", parts[2].lstrip("/"))
            if os.path.isdir(d):
                return d
    return None


def probe_v1(parent: str) -> str | None:
    """None when a limited memory child can be made under `parent`, else why not."""
    probe = os.path.join(parent, f"{PREFIX}probe-{os.getpid()}")
    try:
        _mkdir(probe)
        try:
            write_int(os.path.join(probe, CgroupV1.limit_file), PROBE_BYTES)
            return None
        finally:
            _rmdir(probe)
    except OSError as e:
        return f"cannot create a memory cgroup under the harness's cgroup ({e.strerror})"


# -- v2 ---------------------------------------------------------------------------------
def own_v2(root: str = DEFAULT_ROOT, proc_cgroup: str | None = None) -> str | None:
    """The harness's own cgroup in a unified hierarchy mounted at `root`, or None (no
    `0::` line, or `root` is not the v2 mount: on a hybrid machine it is a tmpfs)."""
    if not os.path.exists(os.path.join(root, "cgroup.controllers")):
        return None
    for line in proc_cgroup_text(proc_cgroup).splitlines():
        if line.startswith("0::"):
            return os.path.join(root, line[3:].strip().lstrip("/"))
    return None


def _enable_memory(d: str) -> None:
    if "memory" not in _words(os.path.join(d, "cgroup.subtree_control")):
        _write(os.path.join(d, "cgroup.subtree_control"), "+memory")


def setup_v2(root: str = DEFAULT_ROOT, proc_cgroup: str | None = None) -> tuple[str | None, str]:
    """(the sub-tree the runs' leaves go in, how) or (None, why not); see the module doc."""
    own = own_v2(root, proc_cgroup)
    if own is None:
        return None, "no cgroup v2 hierarchy for this process"
    if "memory" not in _words(os.path.join(own, "cgroup.controllers")):
        return None, f"the memory controller is not delegated to {own} (cgroup.controllers)"
    pid = os.getpid()
    cleanup_stale(own)
    moved = ""
    try:
        _enable_memory(own)
    except OSError as e:
        if e.errno != errno.EBUSY:
            return None, f"cannot enable +memory in {own}/cgroup.subtree_control ({e.strerror})"
        others = [p for p in _words(os.path.join(own, "cgroup.procs")) if p != str(pid)]
        if others:
            return None, (
                f"{own} holds {len(others)} other process(es), so +memory cannot be enabled for its "
                "children (cgroup v2: no internal processes); start the harness in a cgroup of its own"
            )
        leaf = os.path.join(own, f"{PREFIX}harness-{pid}")
        try:
            if not os.path.isdir(leaf):
                _mkdir(leaf)
            write_int(os.path.join(leaf, "cgroup.procs"), pid)
            _enable_memory(own)
        except OSError as e2:
            return None, f"cannot move the harness into {leaf} to enable +memory in {own} ({e2.strerror})"
        moved = f"; the harness moved itself into {leaf} (no internal processes)"
    sub = os.path.join(own, f"{PREFIX}{pid}")
    try:
        if not os.path.isdir(sub):
            _mkdir(sub)
        _enable_memory(sub)
    except OSError as e:
        CgroupV2(sub).remove()
        return None, f"cannot make a memory sub-tree {sub} ({e.strerror})"
    probe = CgroupV2.create(sub, f"{PREFIX}probe-{pid}", PROBE_BYTES)
    if probe is None:
        CgroupV2(sub).remove()
        return None, f"cannot set memory.max in a child of {sub}"
    swap = os.path.exists(os.path.join(probe.path, "memory.swap.max"))
    probe.remove()
    atexit.register(_rmdir_quietly, sub)  # its leaves are gone by then; a crash leaves it to cleanup_stale
    limits = "memory.max, memory.swap.max=0" if swap else "memory.max; no memory.swap.max, so swap is not limited"
    return sub, f"cgroup v2 memory child under {sub} ({limits}){moved}"


def _rmdir_quietly(path: str) -> None:
    try:
        _rmdir(path)
    except OSError:
        pass


# -- both -------------------------------------------------------------------------------
def _owner(name: str) -> int | None:
    """The harness pid in serverbench-<pid>[-<n>], serverbench-harness-<pid>, ...-probe-<pid>."""
    for part in name[len(PREFIX) :].split("-"):
        if part.isdigit():
            return int(part)
    return None


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def cleanup_stale(parent: str | None) -> int:
    """Remove empty serverbench-* cgroups (and sub-trees) of harnesses that are gone."""
    if not parent:
        return 0
    try:
        names = os.listdir(parent)
    except OSError:
        return 0
    n = 0
    for name in names:
        d = os.path.join(parent, name)
        owner = _owner(name)
        if not name.startswith(PREFIX) or not os.path.isdir(d) or (owner is not None and alive(owner)):
            continue
        n += cleanup_stale(d)  # a dead harness's v2 sub-tree: its leaves first
        try:
            if Path(d, "cgroup.procs").read_text().strip():
                continue
            _rmdir(d)
            n += 1
        except OSError:
            pass
    return n
