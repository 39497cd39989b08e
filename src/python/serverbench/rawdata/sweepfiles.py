"""A sweep folder's files: its raw logs (runs.jsonl, or a sharded sweep's runs.<i>.jsonl),
its manifest and its harness session lines. Every reader of data/raw finds them here, so
that none refuses a sweep another accepts; what a line of a raw log holds is records.py's.
"""

from __future__ import annotations

import json
from pathlib import Path

RAW_LOG_NAME = "runs.jsonl"
MANIFEST_NAME = "manifest.json"  # the sweep's manifest (harness/environment.manifest writes it)
SESSIONS_NAME = "sessions.jsonl"  # one line per harness session event (a shard's: sessions.<i>.jsonl)


def read_manifest(sweep_dir) -> dict:
    """A sweep's manifest.json ({} when it has none or it cannot be read): the one reader
    of the file, for the harness (seed, machine) and the analysis alike."""
    try:
        with open(Path(sweep_dir) / MANIFEST_NAME, encoding="utf-8") as f:
            m = json.load(f)
    except (OSError, ValueError):
        return {}
    return m if isinstance(m, dict) else {}


def read_sessions(sweep_dir) -> list[dict]:
    """Every harness session line of a sweep: sessions.jsonl and each shard's
    sessions.<i>.jsonl, in shard order ([] when there is none; an unreadable line is left
    out, as the harness writes these lines for people and counts, not for the analysis)."""
    folder = Path(sweep_dir)
    files = sorted(folder.glob("sessions*.jsonl"), key=lambda f: _shard_no(f.name.replace("sessions.", "runs.", 1)))
    out = []
    for f in files:
        for line in f.read_text(encoding="utf-8").splitlines():
            try:
                x = json.loads(line)
            except ValueError:
                continue
            if isinstance(x, dict):
                out.append(x)
    return out


def is_raw_log_name(name: str) -> bool:
    """runs.jsonl (a whole sweep) or runs.<i>.jsonl (shard i of a sharded sweep)."""
    if name == RAW_LOG_NAME:
        return True
    mid = name[len("runs.") : -len(".jsonl")] if name.startswith("runs.") and name.endswith(".jsonl") else ""
    return mid.isdigit()


def raw_files(source) -> list[Path]:
    """The raw JSON Lines files under a file, a sweep folder or a folder of sweeps: every
    runs.jsonl and every shard's runs.<i>.jsonl."""
    p = Path(source)
    if p.is_file():
        return [p]
    if p.is_dir():
        files = sorted(
            (f for f in p.glob("**/runs*.jsonl") if is_raw_log_name(f.name)),
            key=lambda f: (str(f.parent), _shard_no(f.name)),
        )
        if files:
            return files
        files = sorted(p.glob("*.jsonl"))
        if files:
            return files
        raise FileNotFoundError(f"no raw log ({RAW_LOG_NAME}) under {p}")
    raise FileNotFoundError(f"no such raw log or folder: {p}")


def sweep_logs(folder) -> list[Path]:
    """The raw logs of one sweep folder, whole or sharded (runs.jsonl, runs.<i>.jsonl in
    shard order); [] when it has none (not a sweep, or nothing ran yet). Every reader of a
    sweep folder finds its logs here, so none refuses a sweep that raw_files accepts."""
    p = Path(folder)
    if not p.is_dir():
        return []
    return sorted((f for f in p.glob("runs*.jsonl") if is_raw_log_name(f.name)), key=lambda f: _shard_no(f.name))


def is_sweep(folder) -> bool:
    """Whether a folder holds a sweep's raw log (whole or sharded)."""
    return bool(sweep_logs(folder))


def _shard_no(name: str) -> int:
    mid = name[len("runs.") : -len(".jsonl")]
    return int(mid) if mid.isdigit() else -1
