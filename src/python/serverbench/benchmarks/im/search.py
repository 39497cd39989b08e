"""IM's rate search and its chaos second stage (IM_PROTOCOL.md, protocol 3, parts 1 and 6).
The harness runs the search as any declared search (harness.planning.search: the plan item;
harness.running.searching: the steps, then the stage); what is IM's is here. It imports
nothing of the harness or the analysis (plugins.part("im", "search")).

The search: per server, the offered rate steps 1,000 x sqrt(2)^k, k = 0..14, upwards; a
step passes when the run is valid (status ok: not generator-limited, the server did not
fail, the message accounting holds), lost no message and its p99 delivery latency is within
the largest sensitivity SLO (20 ms); the search stops at the first step that does not pass.

The stage: for each of our servers (not ngircd/InspIRCd: no session processes to kill),
after its search, `stage_trials` rounds of a chaos run (chaos_interval_ms) and a no-chaos run
at the largest grid rate <= half the server's sustainable rate at stage_slo_s (at least the
grid's first rate), resolved from this sweep's own search steps."""

from __future__ import annotations

import json

from serverbench import paths

GiB = 1024**3


def _design() -> dict:
    """The IM design of the newest protocol (spec/protocol.json "im", frozen as protocol 3
    before any IM data): the grid, the SLOs and the rounds come from there, never typed twice."""
    with open(paths.spec_dir() / "protocol.json", encoding="utf-8") as f:
        return json.load(f)["im"]


IM = _design()
TABLE = "im_rate"  # the profile table ([im_rate]) and the first part of a step's config_id
NAME = "im_rate"  # the raw record's search.name
PARAM = "rate_per_s"  # the parameter the search grows
GEOMETRIC = True  # step k runs round(start x factor^k): the grid, not a compounding of rounded steps
ROUND_PARAM = "seed"  # a step runs with seed 1 (the first round); a stage run with its round
FIXED_PARAMS = True  # [im_rate] holds one value of every other im parameter (clients, payload, ...)
# a step passes only within the largest sensitivity SLO (the protocol's rate_search)
SLO_S = max(IM["slo"]["sensitivity_p99_s"])
# Settings of [im_rate] that are IM's own; the others are the harness's search defaults.
DEFAULTS = {
    "start": IM["rate_grid"]["start_per_s"],
    "factor": IM["rate_grid"]["factor"],
    "max_steps": IM["rate_grid"]["steps"],  # k = 0..14: 1,000 ... 128,000
    "refine_steps": 0,  # a grid: no bisection between the last pass and the failure
    "timeout_bisect_steps": 0,
    "budget_bytes": IM["memory_budget_bytes"],
    "slo_s": SLO_S,
    # the chaos stage after each search: our five servers (the daemons have no session processes)
    "stage_languages": ["erlang", "go", "scala_akka", "scala_pekko", "rust_tokio"],
    "stage_trials": IM["rounds_deciding"],
    "stage_chaos_interval_ms": 1000,
    "stage_slo_s": IM["slo"]["p99_s"],
}
BYTES_PER_STEP_UNIT = None  # no memory model: the estimate stops at the generator's ceiling (estimated_steps)
# The generator's CPU per message at 1,000 clients (one send and one receive: 2 x 18 us of
# client_cpu_per_message_s, against Go on the shared 2-core VM before any IM sweep; docs/im.md
# "The generator's cost" has later measurements, 20-50 us): its CPU share reaches
# generator_cpu_limit near 0.9 / 36 us = 25,000 msg/s, where a step is generator-limited and
# the search stops (censored), whatever the server.
GENERATOR_CPU_PER_MESSAGE_S = 36e-6
STAGE_TABLE = "im_chaos"  # the first part of a stage run's config_id
STAGE_RULE = "im_chaos"  # the raw record's resolved_from.rule
CHAOS_PARAM = "chaos_interval_ms"
# the generator's two reasons for an invalid run (src/im_loadgen/src/record.rs): such a step
# censors the search (the server was not shown to fail); the analysis's own copy of the rule
# is benchmarks/im/tables.py GENERATOR_LIMITED
GENERATOR_LIMITED = ("generator CPU share", "generator schedule slip")


def estimated_steps(settings: dict) -> int:
    """The plan's estimate: the grid's steps up to the generator's ceiling and the one
    after it (a search stops at its first failing step; a server may fail earlier)."""
    from serverbench import contract

    ceiling = contract.cli_contract()["benchmarks"]["im"]["generator_cpu_limit"] / GENERATOR_CPU_PER_MESSAGE_S
    return min(int(settings["max_steps"]), sum(1 for r in grid(settings) if r <= ceiling) + 1)


def generator_limited(rec: dict) -> bool:
    reason = str(rec.get("status_reason") or "")
    return rec.get("status") == "invalid" and any(g in reason for g in GENERATOR_LIMITED)


def judge(rec: dict, settings: dict) -> tuple[bool, str | None, bool]:
    """(passed, why not, establishes) for one step's raw record: why not names the first
    failing part; establishes is True when the failure is the server's (p99 over, a lost
    message, the server failed or crashed, accounting), False when the step was
    generator-limited or timed out (the search is then censored)."""
    status = rec.get("status")
    if status != "ok":
        why = f"status {status}: {rec.get('status_reason')}"
        return False, why, not (generator_limited(rec) or status == "timeout")
    m = rec.get("metrics") or {}
    lost = m.get("messages_lost") or 0
    if lost > 0:
        return False, f"lost {lost} messages", True
    p99 = m.get("latency_p99_s")
    if p99 is None:
        return False, "no latency measured (nothing delivered)", True
    if p99 > settings["slo_s"]:
        return False, f"p99 {p99:.6g} s > {settings['slo_s']:g} s", True
    return True, None, False


def grid(settings: dict) -> list[int]:
    """The search's rates: round(start x factor^k), k = 0 .. max_steps - 1."""
    return [round(settings["start"] * settings["factor"] ** k) for k in range(settings["max_steps"])]


def sustainable(steps: list[dict], slo_s: float) -> float | None:
    """The largest rate of the leading run of passing steps (in step order) whose p99 is
    within slo_s; None when the first step already misses it."""
    best = None
    for r in sorted(steps, key=lambda r: r["search"]["step"]):
        if not r["search"].get("passed"):
            break
        p99 = (r.get("metrics") or {}).get("latency_p99_s")
        if p99 is None or p99 > slo_s:
            break
        best = r["params"][PARAM]
    return best


def chaos_rate(settings: dict, steps: list[dict]) -> dict:
    """The stage's rate and why: the largest grid rate <= half the sustainable rate at
    stage_slo_s, at least the grid's first rate (resolved_from, as recorded)."""
    slo = settings["stage_slo_s"]
    rates = grid(settings)
    s = sustainable(steps, slo)
    fitting = [g for g in rates if s is not None and g <= s / 2]
    rate = max(fitting) if fitting else rates[0]
    stopped = max(steps, key=lambda r: r["search"]["step"]) if steps else None
    established = bool(stopped and not stopped["search"].get("passed") and stopped["search"].get("establishes"))
    if s is None:
        why = f"no step met p99 <= {slo:g} s: the grid's first rate, {rates[0]}/s"
    elif fitting:
        why = f"the largest grid rate <= half the sustainable rate at {slo:g} s ({s:g}/s / 2 = {s / 2:g}/s)"
    else:
        why = f"half the sustainable rate at {slo:g} s ({s:g}/s / 2) is below the grid: its first rate, {rates[0]}/s"
    return {
        "rule": STAGE_RULE,
        "search": NAME,
        "slo_s": slo,
        "sustainable_rate_per_s": s,
        "established": established,
        "steps": len(steps),
        "rate_per_s": rate,
        "reason": why,
    }


def stage(settings: dict, server: str, steps: list[dict]) -> list[dict]:
    """The stage's runs for one server's finished search, in order: per round k, a chaos
    run and a no-chaos run (which goes first alternates with k). Each is {"params" (to
    replace in the search's fixed params), "trial", "resolved_from"}; [] for a server not in
    stage_languages."""
    if server not in settings["stage_languages"] or not steps:
        return []
    why = {**chaos_rate(settings, steps), "server_language": server}
    out = []
    for k in range(1, settings["stage_trials"] + 1):
        pair = [settings["stage_chaos_interval_ms"], 0]
        for chaos in pair if k % 2 else pair[::-1]:
            params = {PARAM: why["rate_per_s"], CHAOS_PARAM: chaos}
            out.append({"params": params, "trial": k, "resolved_from": why})
    return out


def stage_runs(settings: dict, server: str) -> int:
    """How many runs the stage adds after this server's search (for the plan's estimate)."""
    return 2 * settings["stage_trials"] if server in settings["stage_languages"] else 0


def check(settings: dict) -> str | None:
    """Why the [im_rate] table's IM settings are wrong, or None (the harness checks the rest)."""
    for k in ("slo_s", "stage_slo_s"):
        v = settings[k]
        if isinstance(v, bool) or not isinstance(v, (int, float)) or v <= 0:
            return f"{TABLE}.{k} must be a positive number of seconds, got {v!r}"
    for k in ("stage_trials", "stage_chaos_interval_ms"):
        v = settings[k]
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            return f"{TABLE}.{k} must be a positive integer, got {v!r}"
    langs = settings["stage_languages"]
    if not isinstance(langs, list) or not all(isinstance(x, str) for x in langs):
        return f"{TABLE}.stage_languages must be a list of languages, got {langs!r}"
    return None
