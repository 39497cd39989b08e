"""IM's searches (protocol 5's `im` design: serverbench.protocol.designing("im");
docs/im.md): the generator's capacity certification against the null sink, the replicated
rate search (IM4), the chaos search and its loss runs (IM5), the fan-out searches and IM2's
memory-cap search. The harness runs them (harness.planning.search: the plan items;
harness.running.replicated: scout, replicated steps, bisection, re-runs); what is IM's is
here: which searches a profile's [im_rate] table makes (`searches`), the step rule
(`judge_run`, `judge_step`), the re-run rule (`rerun_reason`; the im grid's runs follow it
too, `grid_rerun_reason`) and the loss runs
(`loss_runs`). The results read back from the raw records (for the report) are
search_results.py; its settings, typed, settings.py. It imports nothing of the harness or
the analysis. (Kept whole past ~350 lines: the searches' plan, step rule and re-run rule
read one settings table together.)

Its raw records' `search` fields: docs/harness.md "IM's replicated searches"."""

from __future__ import annotations

import statistics
from collections.abc import Mapping
from dataclasses import dataclass, replace
from functools import partial

from serverbench import plugins, protocol
from serverbench.benchmarks.im.columns import Col
from serverbench.benchmarks.im.settings import Settings

IM = protocol.designing("im")
_S, _GRID, _CHAOS, _MEM = IM[Col.search], IM["rate_grid"], IM["chaos"], IM["memory"]
TABLE = "im_rate"  # the profile table ([im_rate]) that holds every IM search's settings
NAME = "im_rate"  # the rate search's raw search.name
PARAM = "rate_per_s"
BYTES_PER_STEP_UNIT = None
OURS = ["erlang", "go", "scala_akka", "scala_pekko", "rust_tokio"]
SINK = "im_loadgen"  # the null sink: the generator's own server role (spec/cli.json)


@dataclass(frozen=True, slots=True)
class Kind:
    """One search kind: its raw search.name, the parameter it grows, its place in a sweep."""

    name: str
    param: str
    order: int


# kind -> its Kind, capacity first
KINDS = {
    "capacity": Kind("im_capacity", "rate_per_s", 0),
    "rate": Kind("im_rate", "rate_per_s", 1),
    "chaos": Kind("im_chaos_rate", "rate_per_s", 2),
    "fanout": Kind("im_fanout", "rate_per_s", 3),
    "memory": Kind("im_memory", "clients", 4),
}
LOSS_NAME = "im_chaos_loss"  # the chaos loss runs' search.name and resolved_from.rule
# the generator's fan-out capacity per channel size: the capacity search (its rule) in fan-out
# mode against the null sink, first in the fanout piece; it censors the servers' fan-out rates
FANOUT_CAPACITY_NAME = "im_fanout_capacity"
NAMES = tuple(k.name for k in KINDS.values()) + (FANOUT_CAPACITY_NAME, LOSS_NAME)
DEFAULTS = {
    "kinds": list(KINDS),  # which searches the table makes (a piece sets a subset)
    "start": _GRID["start_per_s"],
    "factor": _GRID[Col.factor],
    "max_per_s": _GRID[Col.max_per_s],
    "max_steps": 64,  # not a limit here: the grid ends at max_per_s
    "scout_factor": _GRID[Col.scout_factor],
    "step_runs": _S[Col.step_runs],
    "bisect_ratio": _S[Col.bisect_ratio],
    "slo_s": _S["slo_p99_s"],
    "reruns": 2,  # im.search.reruns: at most twice (three attempts)
    "refine_steps": 0,
    "timeout_bisect_steps": 0,
    "budget_bytes": IM[Col.memory_budget_bytes],
    "headroom": IM["generator"][Col.headroom],
    "chaos_languages": list(OURS),
    "chaos_target": _CHAOS["target"],
    "chaos_pick": _CHAOS["pick"],
    "chaos_search_kills_per_s": _CHAOS["search_kills_per_s"],
    "chaos_kills_per_s": list(_CHAOS["kills_per_s"]),
    "chaos_queued_kills_per_s": _CHAOS["queued_control_kills_per_s"],
    "chaos_loss_target": _CHAOS["loss_target"],
    "chaos_rounds": _CHAOS[Col.rounds],
    "fanout_channel_sizes": list(IM["fanout"]["channel_sizes"]),
    "memory_caps_bytes": list(_MEM["caps_bytes"]),
    "memory_heap_fraction": _MEM[Col.heap_fraction],
    "memory_start_clients": _MEM["start_clients"],
    "memory_clients_max": _MEM["clients_max"],
    "memory_bisect_ratio": _MEM[Col.bisect_ratio],
    "memory_hold_s": _MEM["hold_s"],
    "memory_timeout_s": 240.0,  # the daemons register 19,000 clients in ~110-180 s
    "memory_settings": False,  # the memory search runs each server as shipped only (no nodelay rows)
}


# what a plan expects a search to find (its estimate only): the generator's ceiling near
# 25,000 msg/s (docs/im.md "The generator's cost"); the sink's certified capacity; fan-out's
# deliveries (rate x (size - 1)) near 100,000/s; the JVMs' idle clients within 128 MiB
EXPECTED = {
    "rate": 25_000,
    "chaos": 12_000,
    "capacity": 100_000,
    "fanout_deliveries": 100_000,
    "fanout_capacity_deliveries": 400_000,
    "memory": 8_000,
}
GENERATOR_PREFIX = "generator"  # a reason starting so: the generator limited the run (im.generator_limited)


def grid(settings: Mapping | Settings) -> list[int]:
    """The rate grid: round(start x factor^k) up to max_per_s."""
    s, out, k = Settings.of(settings), [], 0
    while True:
        r = round(s.start * s.factor**k)
        if r > s.max_per_s * (1 + 1e-9):
            return out
        out.append(r)
        k += 1


def searches(settings: Mapping | Settings, rows: list[plugins.SocketOptions]) -> list[plugins.SearchSpec]:
    """The searches one [im_rate] table makes, in order. rows: the table's server rows."""
    s, out = Settings.of(settings), []
    chaos_off = {"chaos_interval_ms": 0}
    for kind in s.kinds:
        k = KINDS[kind]
        spec = partial(plugins.SearchSpec, kind, k.name, k.param, k.order)
        sink = plugins.SocketOptions(SINK, rows[0].placement if rows else "split")
        if kind == "capacity":
            out.append(spec(sink, dict(chaos_off)))
        if kind == "fanout":  # the generator's own fan-out capacity first, judged as capacity
            cap = KINDS[Col.capacity]
            for size in s.fanout_channel_sizes:
                p = {**chaos_off, "mode": "fanout", "channel_size": size}
                tag = f"/channel_size={size}"
                out.append(plugins.SearchSpec("capacity", FANOUT_CAPACITY_NAME, k.param, cap.order, sink, p, tag))
        for row in rows:
            server, shipped = row.server_language, not row.server_settings
            if kind == "rate":
                out.append(spec(row, dict(chaos_off)))
            elif kind == "chaos" and server in s.chaos_languages and shipped:
                ms = chaos_interval_ms(s.chaos_search_kills_per_s)
                p = {"chaos_interval_ms": ms, "chaos_target": s.chaos_target, "chaos_pick": s.chaos_pick}
                out.append(spec(row, p))
            elif kind == "fanout":
                for size in s.fanout_channel_sizes:
                    p = {**chaos_off, "mode": "fanout", "channel_size": size}
                    out.append(spec(row, p, f"/channel_size={size}"))
            elif kind == "memory" and (shipped or s.memory_settings):
                for cap_bytes in s.memory_caps_bytes:
                    # idle mode sends nothing, but the generator's record carries every
                    # parameter: the rate is the grid's start, as its command says
                    p = {**chaos_off, "mode": "idle", "duration_s": s.memory_hold_s, "warmup_s": 0, PARAM: s.start}
                    limits = {"heap_fraction": s.memory_heap_fraction, "timeout_s": s.memory_timeout_s}
                    opts = replace(row, server_cap=True)
                    out.append(spec(opts, p, f"/cap_bytes={cap_bytes}", budget_bytes=cap_bytes, **limits))
    return out


def chaos_interval_ms(kills_per_s: float) -> int:
    """The server's --chaos-interval-ms for a kill rate: 1000 / kills per second."""
    return round(1000 / kills_per_s)


# ---- the re-run rule (im.search.reruns) ---------------------------------------------------
def generator_reason(rec: dict) -> str:
    """The generator's own validity reason of a run (its record's validation.reason), or,
    for a record without one, what the harness's status_reason quotes of it."""
    said = (rec.get(Col.validation) or {}).get(Col.reason)
    if isinstance(said, str):
        return said
    reason = str(rec.get(Col.status_reason) or "")
    return reason.split("(validation.ok false): ", 1)[-1]


def generator_limited(rec: dict) -> bool:
    """An invalid run whose reason starts with 'generator' (the generator limited it)."""
    return rec.get(Col.status) == "invalid" and generator_reason(rec).startswith(GENERATOR_PREFIX)


def rerun_reason(rec: dict, kind: str) -> str | None:
    """Why a search run is re-run: "generator" (invalid, the reason starting 'generator'),
    "interfered" (the harness flagged it, whatever its status), or None. Reads only the
    status, the reason's prefix, the interference flag and the search's kind: never a
    latency, loss or rate. In the capacity search a generator-limited run is the failure the
    search looks for, so only interference re-runs it (else a failing step costs 9 runs)."""
    if kind != "capacity" and generator_limited(rec):
        return "generator"
    if rec.get(Col.interfered) is True:
        return "interfered"
    return None


def grid_rerun_reason(rec: dict) -> str | None:
    """The same rule for IM's plain grid runs (the storm piece's latency, login and idle runs;
    the harness asks for it as HOOKS.grid_rerun): no search kind, so a generator-limited run is re-run."""
    return rerun_reason(rec, "grid")


# ---- the step rule (im.search.step_rule; capacity: every run valid; memory: held) ----------
def judge_run(rec: dict, kind: str, settings: Mapping | Settings) -> tuple[str, str | None]:
    """One run (its final attempt) alone: ("pass" | "fail" | "censored", why not). A run
    still generator-limited or interfered after its re-runs censors (the capacity search
    excepted: there a generator-limited run is the failure it looks for)."""
    status, m, slo_s = rec.get(Col.status), rec.get(Col.metrics) or {}, Settings.of(settings).slo_s
    why = f"status {status}: {rec.get(Col.status_reason)}"
    limited = generator_limited(rec)
    if kind == "capacity" and limited:
        return "fail", why
    if limited and kind != "memory" and (over := over_despite_generator(m, slo_s)):
        return "fail", over
    if rerun_reason(rec, kind):
        return "censored", f"{rerun_reason(rec, kind)} after its re-runs ({why})"
    if status == "failed_to_start":
        return "censored", why  # not shown to be the server's failure (e.g. refused by a limit)
    if status != "ok":
        return "fail", why
    if kind == "memory":
        want, got = rec.get(Col.params, {}).get(Col.clients), m.get(Col.clients_registered)
        if got is not None and want is not None and got < want:
            return "fail", f"{got} of {want} clients registered"
        return "pass", None
    lost = m.get(Col.messages_lost) or 0
    if lost > 0 and kind != "chaos" and kind != "capacity":
        return "fail", f"lost {lost} messages"
    if kind == "capacity":
        return "pass", None
    p99 = m.get(Col.latency_p99_s)
    if p99 is None:
        return "fail", "no latency measured (nothing delivered)"
    if p99 > slo_s:
        return "fail", f"p99 {p99:.6g} s > {slo_s:g} s"
    return "pass", None


def over_despite_generator(m: dict, slo_s: float) -> str | None:
    """Why a run the generator limited is still over the SLO on the server, or None. Its
    latencies are measured from the scheduled send to the read, so the generator adds at
    most its worst send slip plus its worst read lateness to each: a p99 above the SLO by
    more than both is the server's (at saturation the server's bursts make the generator's
    sends and reads late, and such a run would otherwise censor the step). A p99 within it
    stays censored: a slipping generator may have offered less than the rate."""
    p99, slip, late = m.get(Col.latency_p99_s), m.get(Col.schedule_slip_max_s), m.get(Col.read_lateness_max_s)
    if p99 is None or slip is None or late is None or p99 - slip - late <= slo_s:
        return None
    worst = f"the generator's worst slip {slip:.6g} s and read lateness {late:.6g} s"
    return f"p99 {p99:.6g} s > {slo_s:g} s even less {worst}"


def judge_step(final: list[dict], kind: str, settings: Mapping | Settings) -> dict:
    """A step from its runs' final attempts: {"outcome", "why_not", "median_p99_s", "runs"
    (their p99s)}. Fails when a run failed on the server (a loss with chaos off, a server
    failure), or when more than half of the runs are over the SLO (valid, or limited and over
    by more than the generator's error: over_despite_generator); else censored
    when a run is still generator-limited or interfered; else the median p99 decides (the
    capacity and memory searches: every run valid, held)."""
    s = Settings.of(settings)
    verdicts = [judge_run(r, kind, s) for r in final]
    slo_s = s.slo_s
    p99s = [(r.get(Col.metrics) or {}).get(Col.latency_p99_s) for r in final]
    med = statistics.median(p99s) if p99s and all(p is not None for p in p99s) else None
    out = {"outcome": "pass", "why_not": None, "median_p99_s": med, "runs": p99s}
    server_fail = [w for v, w in verdicts if v == "fail" and not str(w).startswith("p99 ")]
    censored = [w for v, w in verdicts if v == "censored"]
    if server_fail:
        return {**out, "outcome": "fail", "why_not": server_fail[0]}
    if censored:
        # the valid runs may decide the median alone: more than half of the runs over the SLO
        # fails the step whatever the censored runs would have shown
        over = [p for (v, _), p in zip(verdicts, p99s) if v != "censored" and p is not None and p > slo_s]
        if kind not in ("capacity", "memory") and 2 * len(over) > len(final):
            why = f"{len(over)} of {len(final)} runs' p99 > {slo_s:g} s (the others censored)"
            return {**out, "outcome": "fail", "why_not": why}
        return {**out, "outcome": "censored", "why_not": censored[0]}
    if kind in ("capacity", "memory"):
        return out
    if med is None:
        return {**out, "outcome": "fail", "why_not": "no latency measured (nothing delivered)"}
    if med > slo_s:
        return {**out, "outcome": "fail", "why_not": f"median p99 {med:.6g} s > {slo_s:g} s"}
    return out


# ---- the chaos loss runs (im.chaos.rule (2)) ------------------------------------------------
def loss_runs(settings: Mapping | Settings, kind: str, server: str, result: dict) -> list[plugins.FollowUp]:
    """After a chaos search: rounds runs at each of chaos_kills_per_s (target any, pick
    random), and rounds each of session kills picked at random and queued at
    chaos_queued_kills_per_s, at half the chaos-sustainable rate
    (at least the grid's start); [] for other kinds."""
    if kind != "chaos":
        return []
    t, s = Settings.of(settings), result.get("value")
    rate = max(t.start, round(s / 2)) if s else t.start
    why = f"half the chaos-sustainable rate ({s:g}/s / 2)" if s and s / 2 >= t.start else "the grid's start"
    # any IM process at each kill rate (shown); sessions, random (IM5(b)'s deciding runs) and
    # queued (the control), at the control's rate
    plan = [(k, "random", t.chaos_target) for k in t.chaos_kills_per_s]
    at, target = t.chaos_queued_kills_per_s, t.chaos_loss_target
    plan += [(at, "random", target), (at, "queued", target)]
    out = []
    for kills, pick, tgt in plan:
        for r in range(1, t.chaos_rounds + 1):
            params = {
                PARAM: rate,
                "chaos_interval_ms": chaos_interval_ms(kills),
                "chaos_target": tgt,
                "chaos_pick": pick,
            }
            resolved = {
                "rule": LOSS_NAME,
                "search": KINDS["chaos"].name,
                "server_language": server,
                "chaos_sustainable_rate_per_s": s,
                "bound": result.get("bound"),
                "rate_per_s": rate,
                "kills_per_s": kills,
                "chaos_target": tgt,
                "chaos_pick": pick,
                "reason": why,
            }
            out.append(plugins.FollowUp(params, r, resolved))
    return out


def expected_value(kind: str, params: dict, settings: Mapping | Settings, server: str | None, budget: int) -> float:
    """What the plan expects the search to find (its estimate only): a daemon (no
    processes, small per-client state) holds clients_max idle clients in either cap."""
    if kind == "fanout":
        return EXPECTED["fanout_deliveries"] / max(1, int(params.get(Col.channel_size, 10)) - 1)
    if kind == "capacity" and params.get(Col.mode) == "fanout":
        return EXPECTED["fanout_capacity_deliveries"] / max(1, int(params.get(Col.channel_size, 10)) - 1)
    if kind == "memory":
        most = Settings.of(settings).memory_clients_max
        return most if server not in OURS else min(most, EXPECTED["memory"] * budget / _MEM["caps_bytes"][0])
    return EXPECTED[kind]


def check(settings: dict) -> str | None:
    """Why the [im_rate] table's IM settings are wrong, or None (the harness checks the rest)."""
    bad = sorted(set(settings[Col.kinds]) - set(KINDS)) if isinstance(settings[Col.kinds], list) else ["?"]
    if bad:
        return f"{TABLE}.kinds: unknown {', '.join(bad)} (known: {', '.join(KINDS)})"
    for k in ("slo_s", "bisect_ratio", "scout_factor", "max_per_s", "headroom", "memory_hold_s"):
        v = settings[k]
        if isinstance(v, bool) or not isinstance(v, (int, float)) or v <= 0:
            return f"{TABLE}.{k} must be a positive number, got {v!r}"
    for k in ("step_runs", "chaos_rounds", "memory_start_clients", "memory_clients_max"):
        v = settings[k]
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            return f"{TABLE}.{k} must be a positive integer, got {v!r}"
    if settings[Col.bisect_ratio] <= 1 or settings[Col.memory_bisect_ratio] <= 1:
        return f"{TABLE}.bisect_ratio and memory_bisect_ratio must be above 1"
    langs = settings[Col.chaos_languages]
    if not isinstance(langs, list) or not all(isinstance(x, str) for x in langs):
        return f"{TABLE}.chaos_languages must be a list of languages, got {langs!r}"
    return None


# a geometric grid; run r of a step runs with seed r (so servers' runs pair); [im_rate] holds
# one value of every other im parameter (clients, payload, ...); the grid's runs are re-run
# by the searches' rule, as often (im.search.reruns)
HOOKS = plugins.SearchHooks(
    geometric=True,
    round_param="seed",
    fixed_params=True,
    check=check,
    grid_rerun=grid_rerun_reason,
    grid_reruns=DEFAULTS[Col.reruns],
)
