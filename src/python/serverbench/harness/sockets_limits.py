"""Limits of the socket family (harness.sockets): open files, ephemeral ports, the kernel's
TCP memory and the host's memory floor before a large run, CPU placement, and a read-only
snapshot of the system-wide settings for the manifest. Nothing here changes a system-wide
setting (sysctl); the children's RLIMIT_NOFILE soft limit is raised to the hard limit in
the child, before exec."""

from __future__ import annotations

import resource

from serverbench import plugins
from serverbench.harness import host, limits, sockets_probe

PLACEMENTS = ("split", "shared")
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
    than a language under test (its package's sockets.CLIENT_TAKES_SPARE_CPUS: the echo
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
    if getattr(plugins.part(benchmark, "sockets") if benchmark else None, "CLIENT_TAKES_SPARE_CPUS", False):
        return cpus[:cores], cpus[cores:]
    return cpus[:cores], cpus[cores : 2 * cores]


def sysctl_snapshot() -> dict:
    """The system-wide settings that bound socket benchmarks, read only (for the manifest)."""
    return host.sysctl_snapshot(SYSCTLS)


def preexec_for(cpus: list[int]):
    base = limits.make_preexec(cpus, None)

    def preexec():
        base()
        _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))

    return preexec


# ---- planning: one profile table -> one task per client x server x placement -------------
def expand(bench: str, client: str, variant: str, params: dict, options: dict) -> list[tuple[str, dict]]:
    """[(variant, task options)] for one client language and one parameter point.

    Profile options (the table's `options`): server_languages = [...] (default: the client's
    own language), placements = ["split", "shared"] (default ["split"]), and for
    tcp_pingpong original_buffer_pairs = ["scala/scala", "go/go"]: a point with
    read_buffer_bytes < 4 runs only for these client/server pairs, as variant "paper" (the
    original's buffer on purpose; without the option such a point runs as asked and is
    recorded `invalid`). Servers that do not implement the benchmark's server are left out."""
    from serverbench import contract

    servers = options.get("server_languages") or [options.get("server_language", client)]
    placements = options.get("placements") or [options.get("placement", "split")]
    rest = {
        k: v
        for k, v in options.items()
        if k not in ("server_languages", "placements", "server_language", "placement", "original_buffer_pairs")
    }
    pairs = options.get("original_buffer_pairs")
    out = []
    for server in servers:
        if "server" not in contract.language_roles(server, bench):
            continue
        v = variant
        hook = plugins.part(bench, "sockets")
        if pairs is not None and hook is not None and getattr(hook, "runs_the_original_bug", lambda p: False)(params):
            if f"{client}/{server}" not in pairs:
                continue
            v = "paper"
        for placement in placements:
            out.append((v, {**rest, "server_language": server, "placement": placement}))
    return out


# Set by the harness from the run itself (sockets.client_params / server_params: the run's
# timeout, the load generator's CPU count), so not part of what a configuration measures:
# left out of config_id and group_id, as the timeout is for every other benchmark.
HARNESS_SET_PARAMS = ("client_timeout_s", "idle_timeout_s", "client_threads")


def measured_params(params: dict) -> dict:
    """A socket task's params without the ones the harness sets itself."""
    return {k: v for k, v in params.items() if k not in HARNESS_SET_PARAMS}


def options_id(options: dict) -> str:
    """What config_id must add for a socket task: the server and the placement."""
    return "".join(f"/{k}={options[k]}" for k in ("server_language", "placement") if k in options)


def expand_plan(plan):
    """A plan whose socket tasks carry list-valued options -> one task per client x server
    x placement (see expand), each with its own config_id and group_id (without the
    timeouts and the load generator's threads: HARNESS_SET_PARAMS). Other tasks are kept
    as they are. Idempotent (an expanded task has no list-valued options left)."""
    from dataclasses import replace

    from serverbench.harness.task import config_id, group_id

    out = []
    for t in plan.tasks:
        if t.family != "socket" or "server_language" in t.options:
            out.append(t)
            continue
        for variant, opts in expand(t.benchmark, t.language, t.variant, t.params, t.options):
            out.append(
                replace(
                    t,
                    variant=variant,
                    options=opts,
                    config_id=config_id(t.benchmark, t.language, variant, t.cores, measured_params(t.params))
                    + options_id(opts),
                    group_id=group_id(t.benchmark, variant, t.cores, measured_params(t.params), opts),
                )
            )
    plan.tasks = out
    return plan
