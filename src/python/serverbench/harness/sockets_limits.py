"""Limits of the socket family (harness.sockets): open files, ephemeral ports, CPU
placement, and a read-only snapshot of the system-wide settings for the manifest. Nothing
here changes a system-wide setting (sysctl); the children's RLIMIT_NOFILE soft limit is
raised to the hard limit in the child, before exec."""

from __future__ import annotations

import resource

from serverbench.harness import limits

PLACEMENTS = ("split", "shared")
FD_OVERHEAD = 64  # descriptors a runtime needs besides its connections
SYSCTLS = (
    "net/core/somaxconn",
    "net/ipv4/ip_local_port_range",
    "net/ipv4/tcp_tw_reuse",
    "net/ipv4/tcp_max_syn_backlog",
    "fs/file-max",
)


class SocketLimitError(ValueError):
    """A size or placement this machine's limits cannot hold (one line, names the limit)."""


def nofile_limits() -> tuple[int, int]:
    return resource.getrlimit(resource.RLIMIT_NOFILE)


def ephemeral_ports() -> int | None:
    try:
        lo, hi = open("/proc/sys/net/ipv4/ip_local_port_range").read().split()
        return int(hi) - int(lo) + 1
    except (OSError, ValueError):
        return None


def check_connections(connections: int) -> None:
    """Raise SocketLimitError if `connections` concurrent loopback connections cannot be
    held: open files per process (after raising the soft limit to the hard one) and the
    ephemeral port range (every client connection takes one local port)."""
    if connections < 1:
        raise SocketLimitError(f"connections must be at least 1, got {connections}")
    _, hard = nofile_limits()
    need = connections + FD_OVERHEAD
    if hard != resource.RLIM_INFINITY and need > hard:
        raise SocketLimitError(
            f"{connections} connections need about {need} open files per process; RLIMIT_NOFILE hard limit is {hard}"
        )
    ports = ephemeral_ports()
    if ports is not None and connections > ports:
        raise SocketLimitError(
            f"{connections} connections need {connections} local ports; net.ipv4.ip_local_port_range holds {ports}"
        )


def placement_cpus(allowed: list[int], cores: int, placement: str) -> tuple[list[int], list[int]]:
    """(server_cpus, client_cpus) for a placement; SocketLimitError if impossible."""
    cpus = sorted(allowed)
    if placement not in PLACEMENTS:
        raise SocketLimitError(f"placement must be one of {', '.join(PLACEMENTS)}, got {placement!r}")
    if placement == "shared":
        if cores > len(cpus):
            raise SocketLimitError(
                f"placement shared with {cores} CPU(s) per side needs {cores} CPUs; the harness may use {len(cpus)}"
            )
        return cpus[:cores], cpus[:cores]
    if 2 * cores > len(cpus):
        raise SocketLimitError(
            f"placement split with {cores} CPU(s) per side needs {2 * cores} CPUs; the harness may use {len(cpus)}"
        )
    return cpus[:cores], cpus[cores : 2 * cores]


def sysctl_snapshot() -> dict:
    """The system-wide settings that bound socket benchmarks, read only (for the manifest)."""
    out = {}
    for name in SYSCTLS:
        try:
            out[name.replace("/", ".")] = " ".join(open(f"/proc/sys/{name}").read().split())
        except OSError:
            out[name.replace("/", ".")] = None
    return out


def preexec_for(cpus: list[int]):
    base = limits.make_preexec(cpus, None)

    def preexec():
        base()
        _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))

    return preexec
