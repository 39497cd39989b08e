"""What the socket probe reads from /proc (harness/sockets/probe.py): the kernel's socket
memory and limits, the host's context switches, and a process tree's CPU ticks, context
switches and resident bytes. Every reader returns None when the file is unreadable (a
process that has just exited, a kernel without the file), never raises."""

from __future__ import annotations

import os

from serverbench.harness.running import host

PAGE_BYTES = os.sysconf("SC_PAGE_SIZE")


def read_sockstat() -> dict | None:
    """/proc/net/sockstat: {"sockets_used", "tcp_inuse", "tcp_mem_pages"} (this network
    namespace; TCP mem is in pages)."""
    out = {}
    try:
        with open("/proc/net/sockstat", encoding="ascii") as f:
            for line in f:
                head, _, rest = line.partition(":")
                vals = rest.split()
                pairs = dict(zip(vals[::2], vals[1::2]))
                if head == "sockets" and "used" in pairs:
                    out["sockets_used"] = int(pairs["used"])
                elif head == "TCP":
                    out["tcp_inuse"] = int(pairs["inuse"])
                    out["tcp_mem_pages"] = int(pairs["mem"])
    except (OSError, ValueError, KeyError):
        return None
    return out if "tcp_mem_pages" in out else None


def read_tcp_mem() -> tuple[int, int, int] | None:
    """net.ipv4.tcp_mem: (low, pressure, high) in pages."""
    try:
        lo, pressure, hi = (int(x) for x in open("/proc/sys/net/ipv4/tcp_mem").read().split())
    except (OSError, ValueError):
        return None
    return lo, pressure, hi


def read_mem_available() -> int | None:
    """MemAvailable in bytes (/proc/meminfo)."""
    return host.mem_available()


def read_host_ctxt() -> int | None:
    """Context switches of the whole machine since boot (/proc/stat `ctxt`)."""
    try:
        with open("/proc/stat", encoding="ascii") as f:
            for line in f:
                if line.startswith("ctxt "):
                    return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return None


def read_cpu_ticks(pid: int) -> tuple[int, int] | None:
    """(utime, stime) of a process, all its threads, in clock ticks (/proc/<pid>/stat)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as f:
            fields = f.read().rpartition(")")[2].split()
        return int(fields[11]), int(fields[12])  # fields 14 and 15 of the whole line
    except (OSError, ValueError, IndexError):
        return None


def read_ctx_switches(pid: int) -> tuple[int, int] | None:
    """(voluntary + nonvoluntary context switches summed over the process's threads, threads)."""
    total = threads = 0
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return None
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/status", "rb") as f:
                for line in f:
                    if line.startswith((b"voluntary_ctxt_switches:", b"nonvoluntary_ctxt_switches:")):
                        total += int(line.split()[1])
            threads += 1
        except (OSError, ValueError, IndexError):
            continue  # the thread has just exited
    return (total, threads) if threads else None


def read_rss(pid: int) -> int | None:
    """Resident bytes of a process (/proc/<pid>/statm)."""
    try:
        with open(f"/proc/{pid}/statm", "rb") as f:
            return int(f.read().split()[1]) * PAGE_BYTES
    except (OSError, ValueError, IndexError):
        return None


def process_tree(pid: int) -> list[int]:
    """The process and its descendants (a runtime's helper processes, e.g. Erlang's)."""
    try:
        import psutil

        return [pid] + [p.pid for p in psutil.Process(pid).children(recursive=True)]
    except Exception:
        return [pid]
