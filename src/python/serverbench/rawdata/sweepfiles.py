"""A sweep folder's files: its raw logs (runs.jsonl, or a sharded sweep's runs.<i>.jsonl;
either sealed as .jsonl.gz once the sweep is finished), its manifest and its harness
session lines. Every reader of data/raw finds and opens them here, so that none refuses a
sweep another accepts; what a line of a raw log holds is records.py's.

Sealing (`seal`) compresses a finished sweep's logs losslessly: a tracked file stays under
the house rule's 5 MiB without splitting or rewriting a record, and the harness refuses to
append to a sealed log (a sealed sweep is complete; its SHA256SUMS cover the .gz files).
"""

from __future__ import annotations

import contextlib
import fcntl
import gzip
import json
import os
from pathlib import Path
from typing import BinaryIO

RAW_LOG_NAME = "runs.jsonl"
SEALED_SUFFIX = ".gz"  # a finished sweep's raw log, compressed as it was (seal)
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
    """runs.jsonl (a whole sweep) or runs.<i>.jsonl (shard i of a sharded sweep), either
    of them sealed (.jsonl.gz) or not."""
    name = name.removesuffix(SEALED_SUFFIX)
    if name == RAW_LOG_NAME:
        return True
    mid = name[len("runs.") : -len(".jsonl")] if name.startswith("runs.") and name.endswith(".jsonl") else ""
    return mid.isdigit()


def is_sealed(path) -> bool:
    return Path(path).name.endswith(SEALED_SUFFIX)


def open_raw(path) -> BinaryIO:
    """A raw log opened for reading bytes, decompressed when it is sealed."""
    return gzip.open(path, "rb") if is_sealed(path) else open(path, "rb")


def raw_files(source) -> list[Path]:
    """The raw JSON Lines files under a file, a sweep folder or a folder of sweeps: every
    runs.jsonl and every shard's runs.<i>.jsonl, sealed or not."""
    p = Path(source)
    if p.is_file():
        return [p]
    if p.is_dir():
        files = _one_form(
            sorted(
                (f for f in p.glob("**/runs*.jsonl*") if is_raw_log_name(f.name)),
                key=lambda f: (str(f.parent), _shard_no(f.name)),
            )
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
    return _one_form(
        sorted((f for f in p.glob("runs*.jsonl*") if is_raw_log_name(f.name)), key=lambda f: _shard_no(f.name))
    )


def is_sweep(folder) -> bool:
    """Whether a folder holds a sweep's raw log (whole or sharded)."""
    return bool(sweep_logs(folder))


class InterruptedSeal(FileExistsError):
    """A raw log present both sealed and plain: a seal stopped between writing the .gz and
    removing the plain file. Every reader refuses it (its records would be read twice)."""


def sealed_logs(folder) -> list[Path]:
    """The sealed raw logs of one sweep folder ([] when none is sealed)."""
    return [f for f in sweep_logs(folder) if is_sealed(f)]


def seal(folder) -> list[Path]:
    """Compress every unsealed raw log of a finished sweep folder to <name>.gz, check that
    it decompresses to the same bytes, then remove the plain file; the sealed logs.

    Lossless and idempotent: a seal interrupted after writing the .gz is finished by
    sealing again. Refused while a harness holds the sweep's lock (it is still running);
    the locks are held until the seal is done, so no harness appends to a log being sealed."""
    folder = Path(folder)
    with contextlib.ExitStack() as held:
        for lockf in sorted(folder.glob(".lock*")):
            f = held.enter_context(open(lockf, "a+"))
            try:
                fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise ValueError(
                    f"{folder}: a harness is running this sweep ({lockf.name}); seal it once it ends"
                ) from None
        return _seal_locked(folder)


def _seal_locked(folder: Path) -> list[Path]:
    plain = [f for f in folder.glob("runs*.jsonl") if is_raw_log_name(f.name)]
    if not plain and not sealed_logs(folder):
        raise FileNotFoundError(f"no raw log ({RAW_LOG_NAME}) in {folder}")
    for f in plain:
        gz = f.with_name(f.name + SEALED_SUFFIX)
        data = f.read_bytes()
        if not gz.exists() or _decompressed(gz) != data:
            tmp = gz.with_name(f".{gz.name}.{os.getpid()}.tmp")
            with open(tmp, "wb") as out, gzip.GzipFile(filename="", mode="wb", fileobj=out, mtime=0) as z:
                z.write(data)  # no name, no time in the header: sealing again gives the same bytes
            if _decompressed(tmp) != data:
                tmp.unlink()
                raise OSError(f"{gz}: the compressed copy does not read back as {f.name}; nothing changed")
            os.replace(tmp, gz)
        f.unlink()
    return sealed_logs(folder)


def _decompressed(path: Path) -> bytes | None:
    try:
        with gzip.open(path, "rb") as f:
            return f.read()
    except (OSError, EOFError):
        return None


def _one_form(files: list[Path]) -> list[Path]:
    """The files, refusing a log present both sealed and plain (an interrupted seal), whose
    records would otherwise be read twice."""
    names = {str(f) for f in files}
    both = [f for f in files if is_sealed(f) and str(f).removesuffix(SEALED_SUFFIX) in names]
    if both:
        raise InterruptedSeal(
            f"{both[0]} and {both[0].name.removesuffix(SEALED_SUFFIX)} are both present: a seal was interrupted; "
            f"finish it with `python -m serverbench validate --seal {both[0].parent}`"
        )
    return files


def _shard_no(name: str) -> int:
    mid = name.removesuffix(SEALED_SUFFIX)[len("runs.") : -len(".jsonl")]
    return int(mid) if mid.isdigit() else -1
