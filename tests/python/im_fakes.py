"""Synthetic raw records of an IM sweep shaped as the harness writes them (the profile's
parts: latency, login, idle, fanout, the rate search im_rate and the chaos stage), for the
analysis's tests. Every record carries host 'synthetic' and starts after protocol 3's
freeze, so that protocol judges it."""

from __future__ import annotations

import json
import math

import numpy as np

import test_im
from serverbench import paths
from serverbench.analysis.reading.synthetic import raw_record

# A tiny IM grid profile (one 0.7 s latency run a round, 20 clients at 600 messages/s) on the
# given servers: the harness tests' and the grid re-run tests' one copy.
TINY_GRID = """name = "{name}"
languages = ["im_loadgen"]
rerun_interfered = false
[defaults]
trials = {trials}
warmup = {warmup}
timeout_s = 60.0
memory_budget_bytes = "2GiB"
heap_fraction = 0.5
cores = [1]
[im]
mode = ["latency"]
clients = [20]
rate_per_s = [600]
warmup_s = [0.3]
duration_s = [0.7]
drain_s = [0.5]
options = {{ server_languages = {servers}, placements = ["split"] }}
"""


def tiny_grid(name: str, servers=("go",), trials: int = 1, warmup: bool = False) -> str:
    """TINY_GRID's text for these servers, rounds and warm-up."""
    listed = str(list(servers)).replace("'", '"')
    return TINY_GRID.format(name=name, servers=listed, trials=trials, warmup=str(warmup).lower())


def _schema(name: str) -> dict:
    return json.loads((paths.spec_dir() / name).read_text(encoding="utf-8"))


# Fields the IM harness adds to the records (the generator's warmup_s; the chaos stage's
# resolved_from): the fakes carry them where the record schemas know them.
ALLOWS_WARMUP = (
    "warmup_s" in _schema("native-record.schema.json")["$defs"]["im_client"]["properties"]["params"]["properties"]
)
ALLOWS_RESOLVED_FROM = "resolved_from" in _schema("raw-record.schema.json")["properties"]
SWEEP = "synthetic-im"
STARTED = "2026-12-01T00:00:00Z"  # after the IM claims' protocol was frozen
OURS = ("erlang", "go", "scala_akka", "scala_pekko", "rust_tokio")
ANCHORS = ("ngircd", "inspircd")
RATES = tuple(int(round(1000 * math.sqrt(2) ** k)) for k in range(15))
SLIP = "validation failed: generator schedule slip p99 0.005 s > schedule_slip_limit_s 0.002: sends left late"
CPU = "validation failed: generator CPU share 0.95 >= generator_cpu_limit 0.9"


def client_metrics(**over) -> dict:
    """A generator record (test_im's) at the latency part's size: 1,000 clients, 4,000/s for 20 s."""
    sizes = {"elapsed_s": 27.0, "clients_connected": 1000, "clients_registered": 1000, "schedule_s": 20.0}
    counts = dict.fromkeys(("messages_scheduled", "messages_sent", "deliveries_expected", "messages_delivered"), 80_000)
    return test_im.client_metrics(**{**sizes, **counts, "deliveries_per_s": 4000.0, **over})


def record(
    server: str,
    trial: int,
    params: dict,
    metrics: dict | None = None,
    *,
    reason: str | None = None,
    status: str | None = None,
    chaos_ms: int = 0,
    rss: float | None = 50e6,
    search: dict | None = None,
    chaos_stage: bool = False,
    live_bytes: float | None = None,
) -> dict:
    """One generator run against `server` (ngircd and InspIRCd: the launcher's record, counters null)."""
    p = {
        "mode": "latency", "clients": 1000, "rate_per_s": 4000.0, "schedule": "poisson", "warmup_s": 5.0,
        "duration_s": 20.0, "drain_s": 2.0, "seed": trial, "channel_size": 10, "payload_bytes": 64,
        "client_timeout_s": 60.0, "host": "127.0.0.1", **params,
    }  # fmt: skip
    st = status or ("ok" if reason is None else "invalid")
    failed = st not in ("ok", "invalid")  # the harness stopped it: no generator record
    if not ALLOWS_WARMUP:
        p.pop("warmup_s")
    rec = raw_record(
        "im", "im_loadgen", p, metrics or client_metrics(), trial=trial, sweep_id=SWEEP, search=search,
        started_utc=STARTED, validate=False, status=st if failed else "ok",
    )  # fmt: skip
    kind = "im_rate" if search else "im"
    cfg = ",".join(f"{k}={v}" for k, v in sorted(p.items()) if k != "seed")
    rec["config_id"] = f"{kind}/im_loadgen/fair/c1/chaos_interval_ms={chaos_ms},{cfg}/server_language={server}"
    rec["status"], rec["status_reason"] = st, reason
    if not failed:
        rec["validation"] = {"ok": st == "ok", "reason": reason}
    rec.update(server_language=server, placement="split", client_cpus=[1], server_cpus=[0])
    rec["server_rss_peak_bytes"] = None if rss is None else int(rss)
    ours = server not in ANCHORS
    srv = {
        "benchmark": "im", "role": "server", "language": server, "variant": "fair",
        "params": {"port": 4000, "idle_timeout_s": 60, "sendq_lines": 4096, "chaos_interval_ms": chaos_ms,
                   "seed": trial},
        "metrics": {"messages_routed": 1 if ours else None,
                    "sessions_killed": (3 if chaos_ms else 0) if ours else None,
                    "live_bytes": None if live_bytes is None or not ours else int(live_bytes)},
    }  # fmt: skip
    rec["server"] = {
        "language": server, "command": [server], "pinned_cpus": [0], "port": 4000, "record": srv, "exit_code": 0,
        "signal": None, "status": "ok", "status_reason": None, "wall_s": 27.0, "user_cpu_s": 1.0,
        "system_cpu_s": 1.0, "peak_rss_bytes": 20_000_000, "stderr_tail": "",
    }  # fmt: skip
    if chaos_stage and ALLOWS_RESOLVED_FROM:
        rec["resolved_from"] = {"rule": "im_chaos", "search": "im_rate", "server_language": server, "slo_s": 0.01}
    return rec


def jitter(rng, x: float, sd: float = 0.03) -> float:
    return float(x * np.exp(rng.normal(0, sd)))


def latency_part(p99: dict, rounds: int = 6, seed: int = 1, rate: float = 4000.0) -> list[dict]:
    """{server: p99 seconds}: the latency part at `rate`, `rounds` rounds."""
    rng = np.random.default_rng(seed)
    return [
        record(s, t, {"rate_per_s": rate}, client_metrics(latency_p99_s=jitter(rng, v), latency_p50_s=v / 5))
        for s, v in p99.items()
        for t in range(1, rounds + 1)
    ]


def login_part(login_s: dict, rounds: int = 6, seed: int = 2) -> list[dict]:
    rng = np.random.default_rng(seed)
    return [
        record(s, t, {"mode": "login", "clients": 10_000}, client_metrics(login_s=jitter(rng, v)))
        for s, v in login_s.items()
        for t in range(1, rounds + 1)
    ]


def idle_part(per_client: dict, rounds: int = 6, seed: int = 3, fail_at: dict | None = None) -> list[dict]:
    """{server: RSS bytes per idle client} (protocol 3's measure; the MEMORY answer's live
    bytes grow half as fast, so a table that read RSS for one of ours would show it): N =
    1,000 and 10,000 per round, 19,000 once; fail_at {server: (N, status)} makes the runs at
    N and above fail so."""
    rng = np.random.default_rng(seed)
    fail_at = fail_at or {}
    out = []
    for s, b in per_client.items():
        for n, trials in ((1000, rounds), (10_000, rounds), (19_000, 1)):
            for t in range(1, trials + 1):
                per = jitter(rng, b, 0.01)
                rss, live = 30e6 + n * per, 10e6 + n * per / 2
                m = client_metrics(clients_connected=n, clients_registered=n)
                bad = s in fail_at and n >= fail_at[s][0]
                out.append(
                    record(
                        s,
                        t,
                        {"mode": "idle", "clients": n, "duration_s": 5.0},
                        m,
                        status=fail_at[s][1] if bad else None,
                        reason="synthetic: over budget" if bad else None,
                        rss=rss,
                        live_bytes=live,
                    )
                )
    return out


def search_part(limits: dict, stop: dict | None = None) -> list[dict]:
    """{server: p99 at rate r as a function} -> the rate search's steps: step k passes while
    its p99 <= 20 ms, else the search stops there; stop {server: (rate, reason)} ends it on a
    step the generator limited (reason SLIP or CPU) instead."""
    stop = stop or {}
    out = []
    for s, p99_of in limits.items():
        for k, r in enumerate(RATES):
            search = {"name": "im_rate", "step": k, "budget_bytes": 2**31}
            if s in stop and r >= stop[s][0]:
                search.update(passed=False, why_not="status invalid", establishes=False)
                out.append(record(s, 1, {"rate_per_s": float(r)}, client_metrics(), reason=stop[s][1], search=search))
                break
            p99 = p99_of(r)
            passed = p99 <= 0.02
            search.update(passed=passed, why_not=None if passed else f"p99 {p99} s > 0.02 s", establishes=not passed)
            out.append(record(s, 1, {"rate_per_s": float(r)}, client_metrics(latency_p99_s=p99), search=search))
            if not passed:
                break
    return out


def knee(limit: float):
    """p99 that stays at 1 ms up to `limit` msg/s and grows fast beyond it."""
    return lambda r: 1e-3 if r <= limit else 1e-3 * (r / limit) ** 6


def chaos_part(server: str, kept: float, lost: list[int], rate: float = 2000.0, seed: int = 4) -> list[dict]:
    """One server's chaos stage: per round a chaos run (deliveries kept x the no-chaos
    run's, lost[i] messages lost) and a no-chaos run."""
    rng = np.random.default_rng(seed)
    out = []
    for t, n_lost in enumerate(lost, start=1):
        base = jitter(rng, rate)
        on = client_metrics(deliveries_per_s=base * jitter(rng, kept, 0.01), messages_lost=n_lost)
        out.append(record(server, t, {"rate_per_s": rate}, on, chaos_ms=1000, chaos_stage=True))
        out.append(record(server, t, {"rate_per_s": rate}, client_metrics(deliveries_per_s=base), chaos_stage=True))
    return out


def fanout_part(servers, rounds: int = 3) -> list[dict]:
    return [
        record(
            s,
            t,
            {"mode": "fanout", "channel_size": k, "rate_per_s": 1000.0},
            client_metrics(deliveries_per_s=1000.0 * (k - 1)),
        )
        for s in servers
        for k in (10, 100)
        for t in range(1, rounds + 1)
    ]


def sweep(**over) -> list[dict]:
    """A whole IM sweep as the paper-size piece would give it, with Go fastest, Erlang next,
    Akka lowest memory: every part; `over` replaces a part's records by name."""
    every = OURS + ANCHORS
    parts = {
        "latency": latency_part(
            {
                "go": 1e-3,
                "erlang": 1.2e-3,
                "scala_akka": 3e-3,
                "scala_pekko": 3e-3,
                "rust_tokio": 0.8e-3,
                "ngircd": 0.9e-3,
                "inspircd": 1e-3,
            }
        ),
        "login": login_part({s: 1.0 if s in ("go", "erlang") else 2.5 for s in every}),
        "idle": idle_part(
            {
                "scala_akka": 2000,
                "go": 6000,
                "erlang": 5000,
                "scala_pekko": 2100,
                "rust_tokio": 1500,
                "ngircd": 1000,
                "inspircd": 1200,
            }
        ),
        "search": search_part(
            {
                "go": knee(32000),
                "erlang": knee(16000),
                "scala_akka": knee(8000),
                "scala_pekko": knee(8000),
                "rust_tokio": knee(45255),
                "ngircd": knee(22627),
                "inspircd": knee(16000),
            }
        ),
        "chaos": chaos_part("erlang", 1.0, [0] * 6) + chaos_part("go", 0.95, [3] * 6, seed=5)
        if ALLOWS_RESOLVED_FROM
        else [],
        "fanout": fanout_part(every),
    }
    parts.update(over)
    return [r for recs in parts.values() for r in recs]
