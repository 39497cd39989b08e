"""The socket family's plan: one profile table's socket tasks -> one task per client x
server x placement x settings row of the table's options (ServerTable), each with its own
config_id and group_id (planning.plan calls expand_tasks; the socket wing runs the tasks)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from types import MappingProxyType

from serverbench import catalog, contract
from serverbench.harness.planning.task import Task, config_id, group_id
from serverbench.harness.planning.values import ProfileError, languages, runtime_settings
from serverbench.plugins import PLACEMENTS, SocketOptions
from serverbench.rawdata.columns import Col


@dataclass(frozen=True)
class ServerTable:
    """A socket table's `options` in a profile, checked: the servers its client runs against
    (None: the client's own language), the placements, for tcp_pingpong the client/server
    pairs that run the original's 1-byte buffer on purpose (original_buffer_pairs = ["scala/scala",
    "go/go"]: a point with read_buffer_bytes < 4 runs only for these pairs, as variant
    "paper"; without the option such a point runs as asked and is recorded `invalid`), and
    runtime settings per server, each combination a row of its own
    (server_settings = { ngircd = { nodelay = ["off", "on"] } })."""

    server_languages: tuple[str, ...] | None = None
    placements: tuple[str, ...] = ("split",)
    original_buffer_pairs: tuple[str, ...] | None = None
    server_settings: Mapping[str, Mapping[str, tuple]] = field(default_factory=dict)

    @classmethod
    def of(cls, options: Mapping, where: str) -> ServerTable:
        """The table's options, or ProfileError naming what is wrong (an unknown key, an
        unknown server or setting, a placement other than split and shared, an original-buffer
        pair that is not client/server of known languages)."""
        known = [f.name for f in fields(cls)]
        unknown = sorted(set(options) - set(known))
        if unknown:
            raise ProfileError(f"{where}: unknown option {', '.join(unknown)}; known: {', '.join(known)}")
        servers = options.get(Col.server_languages)
        placements = _strings(options.get(Col.placements) or cls.placements)
        bad = [p for p in placements if p not in PLACEMENTS]
        if bad:
            raise ProfileError(f"{where}.placements: {bad[0]!r} is not one of {', '.join(PLACEMENTS)}")
        pairs = options.get(Col.original_buffer_pairs)
        for pair in _strings(pairs or ()):  # a pair named wrongly would silently run nothing
            halves = pair.split("/")
            if len(halves) != 2:
                raise ProfileError(f"{where}.original_buffer_pairs: {pair!r} is not client/server (e.g. go/go)")
            languages(halves, f"{where}.original_buffer_pairs")
        settings = runtime_settings(options.get(Col.server_settings) or {}, f"{where}.server_settings")
        return cls(
            None if servers is None else tuple(languages(_strings(servers), f"{where}.server_languages")),
            placements,
            None if pairs is None else _strings(pairs),
            MappingProxyType({k: MappingProxyType({n: tuple(v) for n, v in t.items()}) for k, t in settings.items()}),
        )


def _strings(v) -> tuple[str, ...]:
    """A TOML list of names (a bare name: a list of one)."""
    return (v,) if isinstance(v, str) else tuple(v)


def expand(
    bench: str, client: str, variant: str, params: Mapping, table: ServerTable
) -> list[tuple[str, SocketOptions]]:
    """[(variant, server row)] for one client language and one parameter point: every
    server of the table (default: the client's own language) that implements the
    benchmark's server, in every placement and every combination of its settings."""
    out = []
    for server in table.server_languages or (client,):
        if "server" not in contract.language_roles(server, bench):
            continue
        v = variant
        bug = catalog.benchmark(bench).socket_hooks.runs_the_original_bug
        if table.original_buffer_pairs is not None and bug is not None and bug(params):
            if f"{client}/{server}" not in table.original_buffer_pairs:
                continue
            v = "paper"
        for placement in table.placements:
            for chosen in server_settings(server, table):
                out.append((v, SocketOptions(server, placement, chosen)))
    return out


def server_settings(server: str, table: ServerTable) -> list[dict]:
    """The runtime settings a server runs with, one dict per row: server_settings =
    { ngircd = { nodelay = ["off", "on"] } } gives ngircd twice ({} = as shipped, then
    {"nodelay": "on"}); a setting at its default is left out (so an as-shipped row keeps the
    config_id it always had). [{}] for a server the option does not name."""
    chosen = table.server_settings.get(server) or {}
    defaults = dict(catalog.language(server).setting_defaults)
    rows: list[dict] = [{}]
    for name in sorted(chosen):
        rows = [{**r, name: v} for r in rows for v in chosen[name]]
    out = [{k: v for k, v in r.items() if defaults.get(k) != v} for r in rows]
    return [dict(t) for t in dict.fromkeys(tuple(sorted(r.items())) for r in out)]


# Set by the harness from the run itself (sockets.client_params / server_params: the run's
# timeout, the load generator's CPU count), so not part of what a configuration measures:
# left out of config_id and group_id, as the timeout is for every other benchmark.
HARNESS_SET_PARAMS = ("client_timeout_s", "idle_timeout_s", "client_threads", "setup_concurrency")


def round_param(bench: str) -> str | None:
    """The parameter a benchmark's package says takes the round, the trial number, in
    every run (its sockets HOOKS.round_param; IM: seed): set per trial, left out of the ids."""
    return catalog.benchmark(bench).socket_hooks.round_param


def measured_params(params: Mapping, bench: str | None = None) -> dict:
    """A socket task's params without the ones the harness sets itself (and the round's)."""
    skip = (*HARNESS_SET_PARAMS, round_param(bench) if bench else None)
    return {k: v for k, v in params.items() if k not in skip}


def options_id(options: SocketOptions) -> str:
    """What config_id must add for a socket task: the server, the placement and the
    server's runtime settings when it has any (server_settings=nodelay=on)."""
    out = f"/server_language={options.server_language}/placement={options.placement}"
    chosen = options.server_settings
    if chosen:
        out += "/server_settings=" + ",".join(f"{k}={chosen[k]}" for k in sorted(chosen))
    return out


def expand_tasks(tasks: list[Task], options: Mapping, where: str) -> list[Task]:
    """A socket table's tasks (one per trial of each parameter point, without a server)
    -> one task per client x server x placement x settings row of the table's options (see
    expand), in the same order, each with its own config_id and group_id (without the
    timeouts and the load generator's threads: HARNESS_SET_PARAMS). A benchmark's round
    parameter (round_param) takes the task's trial."""
    table = ServerTable.of(options, where)
    out = []
    for t in tasks:
        rp = round_param(t.benchmark)
        params = {**t.params, rp: t.trial} if rp else t.params
        ident = measured_params(params, t.benchmark)
        for variant, opts in expand(t.benchmark, t.language, t.variant, params, table):
            out.append(
                replace(
                    t,
                    variant=variant,
                    params=params,
                    options=opts,
                    config_id=config_id(t.benchmark, t.language, variant, t.cores, ident) + options_id(opts),
                    group_id=group_id(t.benchmark, variant, t.cores, ident, opts),
                )
            )
    return out


def check_split(plan, machine: int, oversubscribe: bool) -> None:
    """Refuse, at planning, a socket task or search whose split placement needs more CPUs
    than the machine lets the harness use (cores per side x 2: the server's and the
    client's), naming it: the run would otherwise fail only when its turn came."""
    items = [(t.config_id, t.cores, t.options) for t in plan.tasks]
    items += [(s.key, s.cores, s.options) for s in plan.searches]
    for name, cores, options in items:
        if not oversubscribe and options is not None and options.placement == "split" and 2 * cores > machine:
            raise ProfileError(
                f"{name}: placement split with {cores} CPU(s) per side needs {2 * cores} CPUs; this machine "
                f"lets the harness use {machine}; use --oversubscribe to plan anyway"
            )
