"""The socket family's plan: one profile table's socket tasks -> one task per client x
server x placement, each with its own config_id and group_id (planning.plan calls
expand_plan; the socket wing runs the tasks)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from serverbench import catalog, contract
from serverbench.harness.planning.task import config_id, group_id
from serverbench.harness.planning.values import ProfileError


def expand(bench: str, client: str, variant: str, params: Mapping, options: Mapping) -> list[tuple[str, dict]]:
    """[(variant, task options)] for one client language and one parameter point.

    Profile options (the table's `options`): server_languages = [...] (default: the client's
    own language), placements = ["split", "shared"] (default ["split"]), and for
    tcp_pingpong original_buffer_pairs = ["scala/scala", "go/go"]: a point with
    read_buffer_bytes < 4 runs only for these client/server pairs, as variant "paper" (the
    original's buffer on purpose; without the option such a point runs as asked and is
    recorded `invalid`). Servers that do not implement the benchmark's server are left out."""
    servers = options.get("server_languages") or [options.get("server_language", client)]
    placements = options.get("placements") or [options.get("placement", "split")]
    rest = {
        k: v
        for k, v in options.items()
        if k
        not in (
            "server_languages",
            "placements",
            "server_language",
            "placement",
            "original_buffer_pairs",
            "server_settings",
        )
    }
    pairs = options.get("original_buffer_pairs")
    out = []
    for server in servers:
        if "server" not in contract.language_roles(server, bench):
            continue
        v = variant
        bug = catalog.benchmark(bench).socket_hooks.runs_the_original_bug
        if pairs is not None and bug is not None and bug(params):
            if f"{client}/{server}" not in pairs:
                continue
            v = "paper"
        for placement in placements:
            for chosen in server_settings(server, options):
                extra = {"server_settings": chosen} if chosen else {}
                out.append((v, {**rest, "server_language": server, "placement": placement, **extra}))
    return out


def server_settings(server: str, options: Mapping) -> list[dict]:
    """The runtime settings a server runs with, one dict per row: options.server_settings =
    { ngircd = { nodelay = ["off", "on"] } } gives ngircd twice ({} = as shipped, then
    {"nodelay": "on"}); a setting at its default is left out (so an as-shipped row keeps the
    config_id it always had). [{}] for a server the option does not name."""
    table = (options.get("server_settings") or {}).get(server) or {}
    if not isinstance(table, Mapping):
        return [{}]
    defaults = dict(catalog.language(server).setting_defaults)
    rows: list[dict] = [{}]
    for name in sorted(table):
        values = table[name] if isinstance(table[name], (list, tuple)) else [table[name]]
        rows = [{**r, name: v} for r in rows for v in values]
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


def options_id(options: Mapping) -> str:
    """What config_id must add for a socket task: the server, the placement and the
    server's runtime settings when it has any (server_settings=nodelay=on)."""
    out = "".join(f"/{k}={options[k]}" for k in ("server_language", "placement") if k in options)
    chosen = options.get("server_settings") or {}
    if chosen:
        out += "/server_settings=" + ",".join(f"{k}={chosen[k]}" for k in sorted(chosen))
    return out


def expand_plan(plan):
    """A plan whose socket tasks carry list-valued options -> one task per client x server
    x placement (see expand), each with its own config_id and group_id (without the
    timeouts and the load generator's threads: HARNESS_SET_PARAMS). Other tasks are kept
    as they are. A benchmark's round parameter (round_param) takes the task's trial.
    Idempotent (an expanded task has no list-valued options left)."""
    out = []
    for t in plan.tasks:
        if t.family != "socket" or "server_language" in t.options:
            out.append(t)
            continue
        rp = round_param(t.benchmark)
        params = {**t.params, rp: t.trial} if rp else t.params
        ident = measured_params(params, t.benchmark)
        for variant, opts in expand(t.benchmark, t.language, t.variant, params, t.options):
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
    plan.tasks = out
    return plan


def check_split(plan, machine: int, oversubscribe: bool) -> None:
    """Refuse, at planning, a socket task or search whose split placement needs more CPUs
    than the machine lets the harness use (cores per side x 2: the server's and the
    client's), naming it: the run would otherwise fail only when its turn came."""
    items = [(t.config_id, t.benchmark, t.cores, t.options) for t in plan.tasks]
    items += [(s.key, s.declared.benchmark, s.cores, s.options) for s in plan.searches]
    for name, bench, cores, options in items:
        split = (options or {}).get("placement", "split") == "split"
        if not oversubscribe and split and contract.family(bench) == "socket" and 2 * cores > machine:
            raise ProfileError(
                f"{name}: placement split with {cores} CPU(s) per side needs {2 * cores} CPUs; this machine "
                f"lets the harness use {machine}; use --oversubscribe to plan anyway"
            )
