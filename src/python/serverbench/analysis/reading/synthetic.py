"""Synthetic, schema-valid raw records for tests of the analysis (never for figures of
real results: every record carries host.hostname 'synthetic')."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from serverbench import catalog, records, sweepfiles

HOST = {
    "hostname": "synthetic",
    "cpu_model": "Synthetic CPU",
    "logical_cpus": 2,
    "memory_bytes": 8 * 2**30,
    "os": "Linux",
    "kernel": "6.0",
}


def raw_record(
    benchmark: str,
    language: str,
    params: dict,
    metrics: dict | None,
    *,
    cores: int = 1,
    trial: int = 0,
    status: str = "ok",
    sweep_id: str = "synthetic-1",
    config_id: str | None = None,
    warmup: bool = False,
    search: dict | None = None,
    started_utc: str | None = None,
    status_reason: str | None = None,
    wall_s: float = 1.0,
    user_cpu_s: float = 0.5,
    system_cpu_s: float = 0.1,
    validate: bool = True,
) -> dict:
    """One raw-log line. metrics None (or status != ok) gives a run without a record."""
    full_params = dict(params)
    if benchmark == "pingping":
        full_params.setdefault("payload", "copy")
    if benchmark == "throughput":
        full_params.setdefault("payload", "copy")
        full_params.setdefault("report_every", 10000)
        full_params.setdefault("message_bytes", 500)
        full_params.setdefault("duration_s", 1.0)
    ok = status == "ok" and metrics is not None
    if config_id is None:
        config_id = f"{benchmark}-{language}-c{cores}-" + "-".join(f"{k}{v}" for k, v in sorted(params.items()))
        if search:
            config_id += f"-search{search.get('step')}"
    rec = {
        "schema_version": 1,
        "sweep_id": sweep_id,
        "config_id": config_id,
        "trial": trial,
        "warmup": warmup,
        "benchmark": benchmark,
        "language": language,
        "variant": "fair",
        "params": full_params,
        "metrics": _full_metrics(benchmark, full_params, metrics) if ok else None,
        "validation": _validation(benchmark, full_params) if ok else None,
        "runtime": {"name": language, "version": "synthetic", "schedulers": cores} if ok else None,
        "search": search,
        "started_utc": started_utc or f"2026-01-01T00:{trial // 60 % 60:02d}:{trial % 60:02d}Z",
        "host": HOST,
        "cores": cores,
        "pinned_cpus": list(range(cores)),
        "command": ["synthetic"],
        "env": {},
        "wall_s": wall_s,
        "user_cpu_s": user_cpu_s,
        "system_cpu_s": system_cpu_s,
        "peak_rss_bytes": 10_000_000,
        "exit_code": 0 if ok else (None if status in ("timeout", "over_memory_budget") else 1),
        "signal": 9 if status in ("timeout", "over_memory_budget") else None,
        "status": status if ok or status != "ok" else "invalid",
        "status_reason": status_reason if status_reason is not None else (None if ok else f"synthetic {status}"),
        "stdout_tail": None,
        "stderr_tail": "" if ok else "error: synthetic failure\n",
        "timeout_s": 60.0,
        "memory_budget_bytes": 8 * 2**30,
        "memory_enforcement": "watchdog",
    }
    if validate:
        records.validate_raw(rec)
    return rec


def _full_metrics(benchmark, params, m):
    m = dict(m)
    if benchmark == "pingping":
        e = m["elapsed_s"]
        msgs = 2 * params["repetitions"]
        m.setdefault("messages", msgs)
        m.setdefault("ns_per_message", e / msgs * 1e9)
    elif benchmark == "spawn":
        m.setdefault("spawn_call_s", m.get("all_ready_s", 0.0) * 0.8)
        m.setdefault("all_ready_s", m["spawn_call_s"] * 1.25)
        m.setdefault("rss_bytes_before", 5_000_000)
        m.setdefault("rss_bytes_after", 5_000_000 + 1000 * params["processes"])
        m.setdefault("bytes_per_process", 1000.0)
        m.setdefault("runtime_memory_bytes", None)
    elif benchmark == "throughput":
        per_min = m["paper_msgs_per_min"]
        d = params["duration_s"]
        ex = int(per_min / 60 * d)
        m.setdefault("exchanges", ex)
        m.setdefault("elapsed_s", d)
        m.setdefault("exchanges_per_s", per_min / 60)
        steps = 10
        m.setdefault("samples", [[d * (i + 1) / steps, ex * (i + 1) / steps] for i in range(steps)])
    return m


def _validation(benchmark, params):
    if benchmark == "pingping":
        r = params["repetitions"]
        return {"ok": True, "received_a": r, "received_b": r, "payload_errors": 0}
    if benchmark == "spawn":
        return {"ok": True, "ready": params["processes"]}
    return {"ok": True, "reported_exchanges": 1, "counted_exchanges": 1, "payload_errors": 0, "min_pair_exchanges": 1}


def write_sweep(folder, recs, manifest: dict | None = None, shards: int = 0) -> Path:
    """The records as a raw sweep folder: one runs.jsonl, or (shards > 0) a sharded sweep's
    runs.<i>.jsonl, record k in shard k mod shards, as the harness's shards write them."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    names = [f"runs.{i}.jsonl" for i in range(shards)] or [sweepfiles.RAW_LOG_NAME]
    for i, name in enumerate(names):
        with open(folder / name, "w", encoding="utf-8") as f:
            for r in recs[i :: len(names)]:
                f.write(json.dumps(r) + "\n")
    if manifest is not None:
        (folder / sweepfiles.MANIFEST_NAME).write_text(json.dumps(manifest), encoding="utf-8")
    return folder


def paper_like_sweep(
    sweep_id: str = "synthetic-1",
    trials: int = 5,
    seed: int = 7,
    cores=(1, 2),
    languages=None,
    noise: float = 0.03,
) -> list[dict]:
    """A sweep shaped like the paper's findings (Go/Erlang fast pingping, Erlang fastest
    spawn, Akka most processes, Go 3x throughput...), with log-normal noise; languages:
    the paper's three (the catalog's) unless given."""
    languages = catalog.paper_languages() if languages is None else languages
    rng = np.random.default_rng(seed)
    recs = []

    def jit(x):
        return float(x * np.exp(rng.normal(0, noise)))

    lat = {"go": 180e-9, "erlang": 200e-9, "scala_akka": 600e-9}
    for lang in languages:
        for size in (5000, 10000, 50000):
            for reps in (1000, 10000, 100000):
                for t in range(trials):
                    e = jit(lat[lang] * 2 * reps * (size / 5000) ** 0.8)
                    recs.append(
                        raw_record(
                            "pingping",
                            lang,
                            {"message_bytes": size, "repetitions": reps},
                            {"elapsed_s": e},
                            trial=t,
                            sweep_id=sweep_id,
                        )
                    )
    per_proc = {"erlang": 1.0e-6, "go": 1.5e-6, "scala_akka": 3e-6}
    for lang in languages:
        for n in (1000, 10000, 20000, 50000, 100000):
            base = per_proc[lang] * n
            if lang == "scala_akka" and n >= 20000:
                base *= 3  # the jump
            for t in range(trials):
                recs.append(
                    raw_record("spawn", lang, {"processes": n}, {"all_ready_s": jit(base)}, trial=t, sweep_id=sweep_id)
                )
    limit = {"erlang": 400_000, "go": 300_000, "scala_akka": 800_000}
    budget = 2 * 2**30
    for lang in languages:
        for step, n in enumerate((100_000, 200_000, 400_000, 800_000, 1_600_000)):
            search = {"name": "max_processes", "step": step, "budget_bytes": budget}
            if n <= limit[lang]:
                recs.append(
                    raw_record(
                        "spawn",
                        lang,
                        {"processes": n},
                        {"all_ready_s": jit(per_proc[lang] * n)},
                        search=search,
                        sweep_id=sweep_id,
                    )
                )
            else:
                recs.append(
                    raw_record(
                        "spawn",
                        lang,
                        {"processes": n},
                        None,
                        status="over_memory_budget",
                        status_reason="rss above budget",
                        search=search,
                        sweep_id=sweep_id,
                    )
                )
                break
    rate = {"go": 3.0e7, "erlang": 1.0e7, "scala_akka": 0.9e7}
    for lang in languages:
        for c in cores:
            for p in (1, 2, 4, 8, 16, 32):
                peak = rate[lang] * min(p, c) * (1.0 if p <= c else 0.97)
                for t in range(trials):
                    recs.append(
                        raw_record(
                            "throughput",
                            lang,
                            {"pairs": p},
                            {"paper_msgs_per_min": jit(peak)},
                            cores=c,
                            trial=t,
                            sweep_id=sweep_id,
                        )
                    )
    return recs


def processed_from(recs, folder, manifest: dict | None = None):
    """Write recs as a sweep under folder/raw/<sweep-id>, process it into folder/processed
    and return the loaded Processed tables (tests)."""
    from serverbench.analysis.reading import process

    folder = Path(folder)
    sid = recs[0]["sweep_id"]
    sweep = write_sweep(
        folder / "raw" / sid, recs, manifest if manifest is not None else {"profile": {"name": "synthetic"}}
    )
    process.process_sweep(sweep, folder / "processed" / sid)
    return process.Processed(folder / "processed" / sid)


def pingping_runs(times_by_lang: dict, size: int = 5000, reps: int = 10000, **kw) -> list[dict]:
    """{lang: [elapsed_s per trial]} -> pingping records."""
    return [
        raw_record("pingping", lang, {"message_bytes": size, "repetitions": reps}, {"elapsed_s": t}, trial=i, **kw)
        for lang, ts in times_by_lang.items()
        for i, t in enumerate(ts)
    ]


def throughput_runs(rates: dict, **kw) -> list[dict]:
    """{(lang, cores, pairs): [paper_msgs_per_min per trial]} -> throughput records."""
    return [
        raw_record("throughput", lang, {"pairs": p}, {"paper_msgs_per_min": r}, cores=c, trial=i, **kw)
        for (lang, c, p), rs in rates.items()
        for i, r in enumerate(rs)
    ]


def spawn_runs(times: dict, **kw) -> list[dict]:
    """{(lang, N): [all_ready_s per trial]} -> fixed-N spawn records."""
    return [
        raw_record("spawn", lang, {"processes": n}, {"all_ready_s": t}, trial=i, **kw)
        for (lang, n), ts in times.items()
        for i, t in enumerate(ts)
    ]


def search_runs(steps: dict, budget: int = 2**30, **kw) -> list[dict]:
    """{lang: [(N, status or time), ...]} -> max-processes search records; a float is an ok
    run's all_ready_s, a string a failure status."""
    out = []
    for lang, seq in steps.items():
        for i, (n, v) in enumerate(seq):
            search = {"name": "max_processes", "step": i, "budget_bytes": budget}
            if isinstance(v, str):
                out.append(raw_record("spawn", lang, {"processes": n}, None, status=v, search=search, trial=1, **kw))
            else:
                out.append(
                    raw_record("spawn", lang, {"processes": n}, {"all_ready_s": v}, search=search, trial=1, **kw)
                )
    return out
