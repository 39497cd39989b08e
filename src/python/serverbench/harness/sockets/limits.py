"""Limits of the socket family (harness.sockets): open files, ephemeral ports, the kernel's
TCP memory and the host's memory floor before a large run, CPU placement, and a read-only
snapshot of the system-wide settings for the manifest. Nothing here changes a system-wide
setting (sysctl); the children's RLIMIT_NOFILE soft limit is raised to the hard limit in
the child, before exec (running.pinned)."""

from __future__ import annotations

import resource

from serverbench import catalog
from serverbench.harness.running import host
from serverbench.harness.sockets import probe as sockets_probe
from serverbench.plugins import PLACEMENTS

FD_OVERHEAD = 64  # descriptors a runtime needs besides its connections
SYSCTLS = host.SOCKET_SYSCTLS


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


def check_memory_floors(connections: int, host_floor: int) -> None:
    """Before a run of at least sockets_probe.GUARD_MIN_CONNECTIONS connections: raise
    SocketLimitError (naming the floor) if the kernel's TCP memory is already at
    sockets_probe.TCP_HIGH_FRACTION of net.ipv4.tcp_mem's hard limit or MemAvailable is below the host floor. The
    same floors are watched during the run (sockets_probe.Probe)."""
    if connections < sockets_probe.GUARD_MIN_CONNECTIONS:
        return
    why = sockets_probe.floor_crossed(host_floor)
    if why:
        raise SocketLimitError(f"{connections} connections: {why.replace('fell below', 'is below')}")


def placement_cpus(
    allowed: list[int], cores: int, placement: str, benchmark: str | None = None
) -> tuple[list[int], list[int]]:
    """(server_cpus, client_cpus) for a placement; SocketLimitError if impossible.

    `cores` CPUs per side. Split, for a benchmark whose client is a load generator rather
    than a language under test (its package's sockets HOOKS.client_takes_spare_cpus: the echo
    flood): the client gets every allowed CPU the server does not use (at least `cores`),
    and one worker thread per CPU (client_params)."""
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
    if benchmark is not None and catalog.benchmark(benchmark).socket_hooks.client_takes_spare_cpus:
        return cpus[:cores], cpus[cores:]
    return cpus[:cores], cpus[cores : 2 * cores]


def sysctl_snapshot() -> dict:
    """The system-wide settings that bound socket benchmarks, read only (for the manifest)."""
    return host.sysctl_snapshot(SYSCTLS)
