"""Synthetic raw records of a protocol-5 IM sweep (the searches of /tmp/notes/search-records.md,
as the harness writes them): the generator's capacity against the null sink, the replicated
rate search (scout, grid steps of 3 runs, bisection to a ratio of 1.1) with and without
chaos, the loss runs with the queued-kill control, fan-out and memory-cap searches. Every
attempt is a line; a re-run's earlier attempt carries its reason."""

from __future__ import annotations

import math

import im_fakes as F

START, TOP, RATIO = 1000.0, 1_024_000.0, 1.1
GRID = [START * math.sqrt(2) ** k for k in range(21)]
MiB = 2**20


def _line(name, server, step, phase, run, attempt, value, *, param="rate_per_s", p99=1e-3, lost=0, final=True,
          rerun=None, rerun_of=None, verdict="pass", decided=None, nodelay=False, extra_params=None, chaos_ms=0,
          reason=None, server_metrics=None, resolved=None, search_extra=None):  # fmt: skip
    params = {param: float(value) if param == "rate_per_s" else int(value), "duration_s": 10.0, **(extra_params or {})}
    if param == "clients":
        params |= {"mode": "idle", "duration_s": 5.0}
    m = F.client_metrics(latency_p99_s=p99, messages_lost=lost)
    if param == "clients":
        m = F.client_metrics(clients_connected=int(value), clients_registered=int(value))
    search = {"name": name, "step": step, "phase": phase, "run": run, "attempt": attempt, "budget_bytes": 2**31}
    search |= {"final": final, "rerun_reason": rerun, "rerun_of": rerun_of, "run_verdict": verdict}
    search["why_not"] = None if verdict == "pass" else ("generator schedule slip" if reason else f"p99 {p99} s")
    if nodelay:
        search["server_settings"] = {"nodelay": "on"}
    search |= decided or {}
    search |= search_extra or {}
    rec = F.record(server, run, params, m, reason=reason, chaos_ms=chaos_ms, search=search)
    rec["config_id"] = rec["config_id"].replace("im_rate/", f"{name}/", 1) + ("/server_settings=nodelay=on" * nodelay)
    rec["trial"] = run
    if search_extra and "cap_bytes" in search_extra:  # a memory probe's cap is part of its configuration
        rec["config_id"] = rec["config_id"].replace("/fair/c1/", f"/fair/c1/budget_bytes={search_extra['cap_bytes']}/")
    if resolved:  # the loss runs' pick is a parameter of their configuration
        rec["config_id"] += f"/chaos_target={resolved.get('chaos_target')}/chaos_pick={resolved['chaos_pick']}"
    if server_metrics:
        rec["server"]["record"]["metrics"].update(server_metrics)
    if resolved:
        rec["resolved_from"] = resolved
    return rec


def search(name, server, limit, *, censor_at=None, rerun_at=None, nodelay=False, chaos_ms=0, size=None, pass_p99=1e-3):
    """A replicated rate search: a step at rate r passes when r <= limit (its runs' p99
    pass_p99), fails above it, and is censored (generator-limited after 3 attempts) from
    censor_at on; rerun_at: a rate whose first run is re-run once (interfered) and then passes
    or fails as the rest."""
    out, step = [], 0
    kw = {"nodelay": nodelay, "chaos_ms": chaos_ms}
    if size is not None:
        kw["extra_params"] = {"mode": "fanout", "channel_size": size}

    def outcome(r):
        if censor_at is not None and r >= censor_at * (1 - 1e-9):
            return "censored"
        return "pass" if r <= limit * (1 + 1e-9) else "fail"

    def run_step(r, phase, runs):
        nonlocal step
        o = outcome(r)
        for run in range(1, runs + 1):
            last = run == runs
            p99 = pass_p99 if o != "fail" else 30e-3
            decided = {"passed": o == "pass", "establishes": o == "fail"} if last else None
            if decided is not None:
                decided["step_verdict"] = {"outcome": o, "median_p99_s": p99, "rate_per_s": r}
            if rerun_at is not None and abs(r - rerun_at) < 1 and run == 1 and phase != "scout":
                out.append(_line(name, server, step, phase, run, 1, r, final=False, rerun="interfered", **kw))
                out.append(_line(name, server, step, phase, run, 2, r, p99=p99, verdict=o, rerun_of="interfered",
                                 decided=decided, **kw))  # fmt: skip
                continue
            if o == "censored":
                for att in (1, 2, 3):
                    out.append(_line(name, server, step, phase, run, att, r, final=att == 3, rerun="generator",
                                     rerun_of="generator" if att > 1 else None, verdict="censored",
                                     reason=F.SLIP, decided=decided if att == 3 else None, **kw))  # fmt: skip
                continue
            out.append(_line(name, server, step, phase, run, 1, r, p99=p99, verdict=o, decided=decided, **kw))
        step += 1
        return o

    r, last_pass = START, None
    while r <= TOP:  # the scout
        if run_step(r, "scout", 1) != "pass":
            break
        last_pass, r = r, r * 2
    k = GRID.index(min(GRID, key=lambda g: abs(g - (last_pass or START))))
    p = f = None
    while 0 <= k < len(GRID):
        o = run_step(GRID[k], "grid", 3)
        if o == "censored":
            return out
        if o == "pass":
            p = GRID[k]
            if f is not None:
                break
            k += 1
        else:
            f = GRID[k]
            if p is not None:
                break
            k -= 1
    while p is not None and f is not None and f / p > RATIO:
        mid = math.sqrt(p * f)
        o = run_step(mid, "bisect", 3)
        if o == "censored":
            return out
        p, f = (mid, f) if o == "pass" else (p, mid)
    return out


def memory(server, cap, held, clients_max=19000):
    """IM2's probes within a cap: one run a probe, doubling from 1,000 then bisection."""
    out, step, p, f, n = [], 0, None, None, 1000

    def probe(n):
        nonlocal step
        ok = n <= held
        d = {"passed": ok, "establishes": not ok, "step_verdict": {"outcome": "pass" if ok else "fail", "clients": n}}
        phase = "double" if f is None else "bisect"
        rec = _line("im_memory", server, step, phase, 1, 1, n, param="clients", verdict="pass" if ok else "fail",
                    decided=d, search_extra={"cap_bytes": cap, "budget_bytes": cap})  # fmt: skip
        out.append(rec)
        step += 1
        return ok

    while f is None:
        if probe(n):
            p = n
            if n >= clients_max:
                return out
            n = min(2 * n, clients_max)
        else:
            f = n
    while p is not None and f / p > RATIO:
        mid = int(round(math.sqrt(p * f)))
        if probe(mid):
            p = mid
        else:
            f = mid
    return out


def loss(server, lost, control_lost, rate=2000.0, dropped=50, session_lost=None):
    """IM5 (b): 3 rounds at 1, 10 and 100 kills/s (any process, random), lost[kps] per run;
    3 of session kills at 10/s (random), session_lost (default lost[10]) per run; and the
    queued-kill control at 10/s losing control_lost per run."""
    out = []
    plan = [("random", k, "any", lost.get(k, 0)) for k in (1, 10, 100)]
    session = lost.get(10, 0) if session_lost is None else session_lost
    plan += [("random", 10, "session", session), ("queued", 10, "session", control_lost)]
    for pick, kps, target, n in plan:
        for rnd in (1, 2, 3):
            res = {"rule": "im_chaos_loss", "search": "im_chaos_rate", "server_language": server,
                   "kills_per_s": kps, "chaos_pick": pick, "chaos_target": target, "rate_per_s": rate}  # fmt: skip
            sm = {"sessions_killed": 10 * kps, "channels_killed": 5 * kps, "connections_killed": 0,
                  "chaos_dropped_messages": dropped}  # fmt: skip
            out.append(
                _line(
                    "im_chaos_loss",
                    server,
                    len(out),
                    "loss",
                    rnd,
                    1,
                    rate,
                    lost=n,
                    chaos_ms=int(1000 / kps),
                    resolved=res,
                    server_metrics=sm,
                    p99=2e-3,
                )  # fmt: skip
            )
    return out


def sweep(rates=None, chaos=None, memory_held=None, capacity=200_000.0, lost=None, control_lost=5, **over):
    """A protocol-5 IM sweep: Go fastest (rates), Erlang keeps its rate under chaos, Akka
    holds the most within 128 MiB; `over` replaces a part by name."""
    rates = rates or {"go": 32000.0, "erlang": 16000.0, "scala_akka": 8000.0, "ngircd": 20000.0}
    chaos = chaos or {"erlang": 16000.0, "go": 12000.0}
    memory_held = memory_held or {"scala_akka": 19000, "go": 9000, "erlang": 12000}
    parts = {
        "capacity": search("im_capacity", "im_loadgen", capacity),
        "rate": [r for s, v in rates.items() for r in search("im_rate", s, v)]
        + search("im_rate", "ngircd", 40000.0, nodelay=True),
        "chaos": [r for s, v in chaos.items() for r in search("im_chaos_rate", s, v, chaos_ms=100)],
        "loss": loss("erlang", lost or {}, control_lost) + loss("go", {1: 1, 10: 3, 100: 30}, 40),
        "memory": [r for s, n in memory_held.items() for cap in (128 * MiB, 256 * MiB) for r in memory(s, cap, n)],
        # the generator's fan-out capacity: 12,000/s in channels of 10 (so 8,000 is past its
        # headroom, 'at least'), 4,000/s in channels of 100
        "fanout_capacity": [r for k, c in ((10, 12000.0), (100, 4000.0))
                            for r in search("im_fanout_capacity", "im_loadgen", c, size=k)],
        "fanout": [r for s in ("go", "erlang") for k in (10, 100) for r in search("im_fanout", s, 8000.0 / k * 10,
                                                                                   size=k)],
        "idle": F.idle_part({"scala_akka": 2000, "go": 6000, "erlang": 5000}, rounds=6),
    }  # fmt: skip
    parts.update(over)
    return [r for recs in parts.values() for r in recs]
