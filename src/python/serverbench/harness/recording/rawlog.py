"""The sweep folder's files: the append-only raw log (runs.jsonl, or runs.<i>.jsonl for
shard i) with its sample sidecars (samples/, sidecars.py), the sessions log, the
manifest (written once), and the lock that keeps two harnesses off one log. Every raw line
is validated, written whole and fsync'd."""

from __future__ import annotations

import fcntl
import json
import os
from dataclasses import dataclass
from pathlib import Path

from serverbench import paths
from serverbench.harness.planning import search
from serverbench.harness.planning.values import ProfileError
from serverbench.rawdata import records, sidecars, sweepfiles
from serverbench.rawdata.columns import Col

MANIFEST_NAME = sweepfiles.MANIFEST_NAME
SESSIONS_NAME = sweepfiles.SESSIONS_NAME


@dataclass(frozen=True, slots=True)
class SweepFiles:
    """The file names of a sweep, or of one shard of it (names())."""

    runs: str
    sessions: str
    manifest: str
    lock: str


def names(shard_index: int | None) -> SweepFiles:
    """The file names of a sweep (shard None) or of one shard of it."""
    if shard_index is None:
        return SweepFiles(sweepfiles.RAW_LOG_NAME, SESSIONS_NAME, MANIFEST_NAME, ".lock")
    i = shard_index
    return SweepFiles(f"runs.{i}.jsonl", f"sessions.{i}.jsonl", f"manifest.{i}.json", f".lock.{i}")


class RawLog:
    """The append-only raw log of one sweep (or shard)."""

    def __init__(self, path: Path):
        self.path = path
        self.repaired_torn_line = None
        existing = path.exists() and path.stat().st_size > 0
        self.fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        if existing:
            with open(path, "rb") as f:
                f.seek(-1, os.SEEK_END)
                if f.read(1) != b"\n":
                    # A harness killed mid-write left a line without its end; end it so the
                    # next line is not glued to it (the loader reports it as bad).
                    with open(path, "rb") as g:
                        self.repaired_torn_line = sum(1 for _ in g)
                    self._write_bytes(b"\n")

    def _write_bytes(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            n = os.write(self.fd, view)
            view = view[n:]
        os.fsync(self.fd)

    def append(self, rec: dict) -> dict:
        # every sample kept, the longest arrays beside the line (sidecars.py says why)
        rec = sidecars.move_long_arrays(rec, self.path.parent)
        err = records.raw_errors(rec)
        if err:
            # A harness bug must not write a bad line: keep the run as 'invalid' without its
            # native part, and if even that is not valid, stop.
            fallback = dict(
                rec,
                metrics=None,
                validation=None,
                runtime=None,
                status="invalid" if rec.get(Col.status) == "ok" else rec.get(Col.status),
                status_reason=f"harness could not form a valid record ({err}); was: {rec.get(Col.status_reason)}",
            )
            if records.raw_errors(fallback):
                raise RuntimeError(f"harness bug: record would not validate: {err}")
            rec = fallback
        line = json.dumps(paths.portable(rec), ensure_ascii=False, allow_nan=False, separators=(",", ":")) + "\n"
        self._write_bytes(line.encode("utf-8"))
        return rec

    def close(self):
        os.close(self.fd)


def read_lines(path: Path, bad: list | None = None) -> list[dict]:
    """The parsable lines of a JSON Lines file (of its sealed form when only that exists);
    the numbers of the others go to `bad`."""
    out = []
    path = Path(path)
    if not path.exists() and sweepfiles.is_raw_log_name(path.name):
        path = path.with_name(path.name + sweepfiles.SEALED_SUFFIX)
    if not path.exists():
        return out
    for no, raw in records.iter_raw_lines(path):  # a damaged sealed log: RawLogError naming it
        try:
            if not raw.endswith(b"\n"):
                raise ValueError("no newline")
            # Strict UTF-8 as the loader reads it (json.loads of bytes also takes a BOM or
            # lone surrogates): a run counts as done only if the analysis can read its line.
            rec = json.loads(raw.decode("utf-8"))
            if not isinstance(rec, dict):
                raise ValueError("not an object")
            out.append(rec)
        except (ValueError, UnicodeDecodeError):  # JSONDecodeError is a ValueError
            if bad is not None and raw.strip():
                bad.append(no)
    return out


def append_json(path: Path, obj: dict) -> None:
    data = (json.dumps(paths.portable(obj), ensure_ascii=False, separators=(",", ":"), default=str) + "\n").encode()
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)


def write_once(path: Path, obj: dict) -> bool:
    """Write a JSON file unless it exists (never overwrite); True when written."""
    if path.exists():
        return False
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(paths.portable(obj), f, indent=2, default=str)
        f.write("\n")
        f.flush()
        os.fsync(f.fileno())
    try:
        os.link(tmp, path)  # fails if another invocation wrote it first
        return True
    except FileExistsError:
        return False
    finally:
        os.unlink(tmp)


def refuse_sealed(sweep_dir: Path) -> None:
    """ProfileError when the sweep's raw log is sealed (sweepfiles.seal): a sealed sweep is
    complete, so nothing may be appended to it; a new run needs a new --sweep-id."""
    try:
        sealed = sweepfiles.sealed_logs(sweep_dir)
    except FileExistsError as e:
        raise ProfileError(str(e)) from None
    if sealed:
        raise ProfileError(
            f"sweep {sweep_dir.name!r} is sealed ({sealed[0].name}): it is complete and is not resumed or "
            "extended; run with a new --sweep-id"
        )


def lock(path: Path):
    """An exclusive lock on one sweep's (or shard's) log; ProfileError if it is taken."""
    f = open(path, "a+")
    try:
        fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        f.close()
        raise ProfileError(
            f"sweep {path.parent.name!r} ({path.name}) is being run by another harness right now"
        ) from None
    return f


def done_keys(lines: list) -> set:
    """(config_id, trial, warmup) of every ok run: what a resumed sweep skips."""
    return {
        (r.get(Col.config_id), r.get(Col.trial), bool(r.get(Col.warmup))) for r in lines if r.get(Col.status) == "ok"
    }


def search_steps(lines: list) -> dict:
    """config_id -> records of the searches' steps and second-stage runs already run (any status)."""
    out: dict[str, list] = {}
    known = search.names()
    for r in lines:
        step = isinstance(r.get(Col.search), dict) and r[Col.search].get(Col.name) in known
        if step or isinstance(r.get(Col.resolved_from), dict):
            out.setdefault(r[Col.config_id], []).append(r)
    return out
