"""Host helpers every harness layer may use: memory (/proc/meminfo), process groups, and the
socket-related system settings (sysctl, read only). A leaf: it imports the standard library
only, so the generic manifest (environment), the limits and the socket family all depend on
it instead of on each other."""

from __future__ import annotations

import os
import signal
from pathlib import Path

# The system-wide settings that bound socket benchmarks (recorded in the manifest, never changed).
SOCKET_SYSCTLS = (
    "net/core/somaxconn",
    "net/ipv4/ip_local_port_range",
    "net/ipv4/tcp_tw_reuse",
    "net/ipv4/tcp_max_syn_backlog",
    "fs/file-max",
)


def meminfo(key: str) -> int | None:
    """A /proc/meminfo field in bytes, None when unreadable."""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith(key + ":"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def mem_total() -> int:
    return int(meminfo("MemTotal") or os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))


def mem_available() -> int:
    """MemAvailable in bytes (MemTotal when the kernel does not say)."""
    v = meminfo("MemAvailable")
    return v if v is not None else mem_total()


def killpg(pid: int) -> None:
    """SIGKILL a process group the harness started (gone or not ours: nothing to do)."""
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def sysctl_snapshot(names=SOCKET_SYSCTLS) -> dict:
    """System settings, read only (for the manifest): dotted name -> value, None if unreadable."""
    out = {}
    for name in names:
        try:
            out[name.replace("/", ".")] = " ".join(open(f"/proc/sys/{name}").read().split())
        except OSError:
            out[name.replace("/", ".")] = None
    return out
