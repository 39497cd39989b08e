"""The socket family's plan: one profile table's socket tasks -> one task per client x
server x placement, each with its own config_id and group_id (planning.plan calls
expand_plan; the socket wing runs the tasks)."""

from __future__ import annotations

from dataclasses import replace

from serverbench import contract, plugins
from serverbench.harness.planning.task import config_id, group_id


def expand(bench: str, client: str, variant: str, params: dict, options: dict) -> list[tuple[str, dict]]:
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
