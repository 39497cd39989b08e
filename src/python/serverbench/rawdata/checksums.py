"""sha256 sums of a committed sweep folder (data/raw/<sweep-id>/SHA256SUMS).

A sweep that is committed gets a SHA256SUMS file (the format of coreutils' `sha256sum`:
`<64 hex>  <file name>` a line) listing every file of the folder but itself and hidden
files (the sweep's .lock). `python -m serverbench validate` checks it: a changed byte, a
missing file or a file the list does not name is reported by name. Written by
`python -m serverbench validate --write-sums FOLDER` once a sweep is complete; a sweep that
is resumed afterwards no longer matches its sums (write them again).
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from serverbench.rawdata.sweepfiles import MANIFEST_NAME

SUMS_NAME = "SHA256SUMS"
_LINE = re.compile(r"^([0-9a-f]{64}) [ *](.+)$")


def file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def covered_files(folder: Path) -> list[Path]:
    """The files a sweep folder's sums cover: every regular file but SHA256SUMS and hidden ones."""
    return sorted(p for p in folder.rglob("*") if p.is_file() and p.name != SUMS_NAME and not p.name.startswith("."))


def write_sums(folder: Path) -> Path:
    folder = Path(folder)
    lines = [f"{file_sha256(p)}  {p.relative_to(folder).as_posix()}\n" for p in covered_files(folder)]
    if not lines:
        raise FileNotFoundError(f"{folder}: no files to sum")
    out = folder / SUMS_NAME
    out.write_text("".join(lines), encoding="utf-8")
    return out


def read_sums(path: Path) -> dict[str, str]:
    sums: dict[str, str] = {}
    for no, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        m = _LINE.match(line)
        if not m:
            raise ValueError(f"{path}:{no}: not a sha256sum line (<64 hex digits>  <file>)")
        sums[m.group(2)] = m.group(1)
    return sums


def check_sums(folder: Path) -> list[str]:
    """Problems with a folder's SHA256SUMS (empty: every file matches). No sums file: []."""
    folder = Path(folder)
    path = folder / SUMS_NAME
    if not path.is_file():
        return []
    try:
        sums = read_sums(path)
    except ValueError as e:
        return [str(e)]
    problems = []
    for name, want in sums.items():
        f = folder / name
        if not f.is_file():
            problems.append(f"{f}: listed in {SUMS_NAME} but missing")
        elif file_sha256(f) != want:
            problems.append(f"{f}: sha256 differs from {SUMS_NAME} (the file changed after it was summed)")
    for f in covered_files(folder):
        if f.relative_to(folder).as_posix() not in sums:
            problems.append(f"{f}: not listed in {SUMS_NAME} (added after the sweep was summed)")
    return problems


def sweep_folders(path: Path) -> list[Path]:
    """The sweep folders a validate argument names: the folder itself, a raw root's sweeps,
    or a runs file's folder."""
    path = Path(path)
    if path.is_file():
        return [path.parent]
    if not path.is_dir():
        return []
    if (path / SUMS_NAME).exists() or (path / MANIFEST_NAME).exists():
        return [path]
    return sorted(
        p for p in path.iterdir() if p.is_dir() and ((p / SUMS_NAME).exists() or (p / MANIFEST_NAME).exists())
    )
