"""Values computed from files, kept in the user's cache under a digest of everything they are
computed from, so that the next report render (another kernel, another checkout of the same
code and data) reads them instead of computing them again.

A kept value is keyed by the digest of its inputs (the files' bytes, given by the caller)
together with the code: every module of this package, the spec and the versions of the
numeric libraries. A change to any of them is a new key; nothing is ever invalidated by
time. Values are JSON (a miss returns what a hit would: the value after a round trip), so a
cached value is the computed one to the last bit of every float.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import tempfile
from collections.abc import Callable, Iterable
from functools import lru_cache
from pathlib import Path


def cache_dir() -> Path:
    """$SERVERBENCH_CACHE, else $XDG_CACHE_HOME (or ~/.cache)/serverbench/computed (the tests
    give each session its own: tests/python/conftest.py)."""
    if os.environ.get("SERVERBENCH_CACHE"):
        return Path(os.environ["SERVERBENCH_CACHE"])
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "serverbench" / "computed"


@lru_cache(maxsize=1)
def code_digest() -> str:
    """A digest of this package's modules, the spec and the numeric and plotting libraries'
    versions."""
    import matplotlib
    import numpy
    import pandas
    import scipy

    import serverbench
    from serverbench import paths

    h = hashlib.sha256()
    package = Path(serverbench.__file__).parent
    for f in sorted(package.rglob("*.py")):
        _add(h, f.relative_to(package).as_posix(), f.read_bytes())
    for f in sorted(p for p in paths.spec_dir().iterdir() if p.is_file()):
        _add(h, f"spec/{f.name}", f.read_bytes())
    versions = f"{pandas.__version__} {numpy.__version__} {scipy.__version__} {matplotlib.__version__}"
    _add(h, "versions", versions.encode())
    return h.hexdigest()


def _add(h, name: str, data: bytes) -> None:
    h.update(f"{name}\0{len(data)}\0".encode())
    h.update(data)


def key(kind: str, inputs: Iterable[tuple[str, bytes]]) -> str:
    """The cache key of a value of `kind` computed from the named inputs, with this code."""
    h = hashlib.sha256()
    _add(h, "kind", kind.encode())
    _add(h, "code", code_digest().encode())
    for name, data in inputs:
        _add(h, name, data)
    return h.hexdigest()[:32]


def folder_inputs(folder: Path, name: str) -> list[tuple[str, bytes]]:
    """The files directly in folder as inputs of a key, each named name/<file>."""
    return [(f"{name}/{p.name}", p.read_bytes()) for p in sorted(Path(folder).iterdir()) if p.is_file()]


def path_of(kind: str, inputs: Iterable[tuple[str, bytes]]) -> Path:
    return cache_dir() / kind / f"{key(kind, inputs)}.json"


def json_value(kind: str, inputs: Iterable[tuple[str, bytes]], compute: Callable[[], object]):
    """compute()'s JSON value, read from the cache when these inputs were seen with this code,
    else computed and kept (a cache that cannot be written is only a cache missed)."""
    path = path_of(kind, inputs)
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        pass  # not kept yet, or unreadable: computed below
    text = json.dumps(compute())
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")  # whole or not at all: others may read it
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    except OSError:
        pass
    return json.loads(text)


def files(kind: str, inputs: Iterable[tuple[str, bytes]], draw: Callable[[Path], object], out_dir: Path):
    """draw(folder) writes files into an empty folder and returns a JSON value: the files are
    written into out_dir (the same names and bytes) and the value returned, both read from the
    cache when these inputs were seen with this code."""

    def compute() -> dict:
        with tempfile.TemporaryDirectory() as d:
            value = draw(Path(d))
            written = sorted(p for p in Path(d).iterdir() if p.is_file())
            return {"value": value, "files": {p.name: base64.b64encode(p.read_bytes()).decode() for p in written}}

    kept = json_value(kind, inputs, compute)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    for name, data in kept["files"].items():
        (out_dir / name).write_bytes(base64.b64decode(data))
    return kept["value"]
