"""Schema-valid raw records built from given numbers: the paper's and the sources' reference
points (claims.paperdata, claims.sourcedata) and the tests' sweeps
(tests/python/synthetic_sweeps.py). Never real results: every record carries host.hostname
'synthetic' unless its caller says whose numbers they are."""

from __future__ import annotations

import json
from pathlib import Path

from serverbench.rawdata import records, sweepfiles
from serverbench.rawdata.columns import Col

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
            config_id += f"-search{search.get(Col.step)}"
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
        e = m[Col.elapsed_s]
        msgs = 2 * params[Col.repetitions]
        m.setdefault("messages", msgs)
        m.setdefault("ns_per_message", e / msgs * 1e9)
    elif benchmark == "spawn":
        m.setdefault("spawn_call_s", m.get(Col.all_ready_s, 0.0) * 0.8)
        m.setdefault("all_ready_s", m[Col.spawn_call_s] * 1.25)
        m.setdefault("rss_bytes_before", 5_000_000)
        m.setdefault("rss_bytes_after", 5_000_000 + 1000 * params[Col.processes])
        m.setdefault("bytes_per_process", 1000.0)
        m.setdefault("runtime_memory_bytes", None)
    elif benchmark == "throughput":
        per_min = m[Col.paper_msgs_per_min]
        d = params[Col.duration_s]
        ex = int(per_min / 60 * d)
        m.setdefault("exchanges", ex)
        m.setdefault("elapsed_s", d)
        m.setdefault("exchanges_per_s", per_min / 60)
        steps = 10
        m.setdefault("samples", [[d * (i + 1) / steps, ex * (i + 1) / steps] for i in range(steps)])
    return m


def _validation(benchmark, params):
    if benchmark == "pingping":
        r = params[Col.repetitions]
        return {"ok": True, "received_a": r, "received_b": r, "payload_errors": 0}
    if benchmark == "spawn":
        return {"ok": True, "ready": params[Col.processes]}
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


def processed_from(recs, folder, manifest: dict | None = None):
    """Write recs as a sweep under folder/raw/<sweep-id>, process it into folder/processed
    and return the loaded Processed tables (tests)."""
    from serverbench.analysis.reading import process

    folder = Path(folder)
    sid = recs[0][Col.sweep_id]
    sweep = write_sweep(
        folder / "raw" / sid, recs, manifest if manifest is not None else {"profile": {"name": "synthetic"}}
    )
    process.process_sweep(sweep, folder / "processed" / sid)
    return process.Processed(folder / "processed" / sid)
