"""What a processed sweep says about itself (sweep.json): the host, runtime versions,
core counts measured and not runnable, status counts, from the raw log, its manifest and
its sessions."""

from __future__ import annotations

import numpy as np
import pandas as pd

from serverbench import paths
from serverbench.analysis.reading.sweep import Sweep
from serverbench.rawdata.columns import Col


def not_runnable(manifest: dict, sessions: list[dict] | None = None) -> list[dict]:
    """[{benchmark, cores, reason}] the harness recorded as not runnable on this machine:
    the manifest's `not_runnable` plus every session's (the manifest is written by the
    first session only; later sessions may add benchmarks)."""
    seen, out = set(), []
    for src in [manifest or {}] + list(sessions or []):
        for item in src.get(Col.not_runnable) or []:
            if isinstance(item, dict) and Col.cores in item:
                key = (item.get(Col.benchmark), int(item[Col.cores]))
                if key not in seen:
                    seen.add(key)
                    out.append(
                        {
                            "benchmark": item.get(Col.benchmark),
                            "cores": int(item[Col.cores]),
                            "reason": item.get(Col.reason, ""),
                        }
                    )
            elif isinstance(item, (int, float)):
                key = (None, int(item))
                if key not in seen:
                    seen.add(key)
                    out.append({"benchmark": None, "cores": int(item), "reason": ""})
    return out


def unrunnable_cores(manifest: dict, sessions: list[dict] | None = None, benchmark: str | None = None) -> list[int]:
    return sorted(
        {
            x[Col.cores]
            for x in not_runnable(manifest, sessions)
            if benchmark is None or x[Col.benchmark] in (None, benchmark)
        }
    )


def logical_cpus(manifest: dict, runs: pd.DataFrame | None) -> int | None:
    if runs is not None and "host.logical_cpus" in runs and runs["host.logical_cpus"].notna().any():
        return int(runs["host.logical_cpus"].dropna().iloc[0])
    h = manifest.get(Col.host) if isinstance(manifest, dict) else None
    if isinstance(h, dict) and h.get(Col.logical_cpus):
        return int(h[Col.logical_cpus])
    return None


def sweep_info(sweep: Sweep, runs: pd.DataFrame) -> dict:
    """sweep.json: what the sweep says about itself, from its runs table, its manifest and
    its harness sessions."""
    manifest, sessions = sweep.manifest, sweep.sessions
    host = {}
    for c in runs.columns:
        if c.startswith("host.") and runs[c].notna().any():
            v = runs[c].dropna().iloc[0]
            host[c[5:]] = v.item() if hasattr(v, "item") else v
    versions = {}
    ok = runs[runs[Col.is_ok]]
    for lang, g in ok.groupby("language"):
        versions[lang] = sorted(
            {f"{n} {v}" for n, v in zip(g[Col.runtime_name], g[Col.runtime_version]) if isinstance(v, str)}
        )
    nw = runs[~runs[Col.warmup].astype(bool)]
    return {
        "sweep_id": str(runs[Col.sweep_id].iloc[0]),
        "sweep_dir": f"data/raw/{sweep.folder.name}",  # where it lives in a checkout (no machine path)
        "profile": manifest.get(Col.profile)
        if isinstance(manifest.get(Col.profile), str)
        else (manifest.get(Col.profile, {}) or {}).get(Col.name)
        if isinstance(manifest.get(Col.profile), dict)
        else None,
        "host": host,
        "runtime_versions": versions,
        "unrunnable_cores": unrunnable_cores(manifest, sessions),
        "not_runnable": not_runnable(manifest, sessions),
        "runtime_versions_manifest": manifest.get(Col.runtime_versions),
        "sessions": len([x for x in sessions if x.get("event") == "start"]),
        "logical_cpus": logical_cpus(manifest, runs),
        "cores_measured": sorted(int(c) for c in runs[Col.cores].dropna().unique()),
        "languages": sorted(runs[Col.language].unique()),
        "tables": sorted(runs[Col.table].unique()),
        "attempts": int(len(runs)),
        "warmups": int(runs[Col.warmup].astype(bool).sum()),
        "trials_selected": int((nw[Col.selected]).sum()),
        "ok": int((nw[Col.selected] & nw[Col.is_ok]).sum()),
        "status_counts": {k: int(v) for k, v in nw[Col.status].value_counts().items()},
        "skipped_bad_lines": len(sweep.skipped),
        "memory_budget_bytes": _first(runs, "memory_budget_bytes"),
        "memory_enforcement": _first(runs, "memory_enforcement"),
        "timeout_s_max": float(runs[Col.timeout_s].max()) if Col.timeout_s in runs else None,
        "first_started_utc": str(runs[Col.started_utc].min()),
        "last_started_utc": str(runs[Col.started_utc].max()),
        "manifest": paths.portable(manifest),  # older sweeps' manifests hold machine paths
    }


def _first(runs, col):
    if col not in runs or not runs[col].notna().any():
        return None
    v = runs[col].dropna().iloc[0]
    return v.item() if hasattr(v, "item") else v


def _jsonable(o):  # json.dumps default for numpy scalars
    if isinstance(o, (np.integer,)):
        return int(o)
    if isinstance(o, (np.floating,)):
        return float(o)
    if isinstance(o, (np.bool_,)):
        return bool(o)
    return str(o)
