"""Long sample arrays kept beside the raw log, compressed (data/raw/<sweep>/samples/).

Every sample a run takes is kept (the contract's rule, after hyperfine), but a recovery
run at lambda = 10^4 crashes a second takes ~100,000 crash times and as many restart
latencies: 2.3 MB of JSON on one raw line, 19 MiB for the paper's recovery piece. So the
harness moves a metrics array of more than `min_items()` (4,096) numbers out of the line
into one gzip file per run, `samples/<run key>.json.gz` ({field: [numbers]}), and the
line holds a reference in its place: {"sidecar": "samples/<key>.json.gz", "n": <items>,
"sha256": <of the file>} (native-record.schema.json $defs.samples_s). Nothing is
rounded or dropped: read back, the arrays are the native program's, number for number.

The loader checks every reference (file present, checksum, count) when it reads the
line, so a lost or changed sidecar makes its line bad, as a corrupt line is. Arrays are
read back only where a figure needs every sample (recovery's restart latencies).
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
from functools import cache
from pathlib import Path

from serverbench import paths
from serverbench.rawdata.columns import Col

FOLDER = "samples"


@cache
def min_items() -> int:
    """Arrays longer than this go to a sidecar: the spec's one number (a reference's n is
    above it; native-record.schema.json $defs.samples_s). ~80 kB of JSON: quick-profile
    runs (at most ~100 items) never reach it."""
    with open(paths.spec_dir() / "native-record.schema.json", encoding="utf-8") as f:
        ref = json.load(f)["$defs"][Col.samples_s]["oneOf"][1]
    return int(ref["properties"]["n"]["minimum"]) - 1


def is_ref(value) -> bool:
    """Whether a metrics value is a sidecar reference (not the array itself)."""
    return isinstance(value, dict) and isinstance(value.get("sidecar"), str)


def run_key(rec: dict) -> str:
    """The file name stem of a run's sidecar: unique per attempt (a re-run has its own start)."""
    ident = json.dumps(
        [
            rec.get(Col.sweep_id),
            rec.get(Col.config_id),
            rec.get(Col.trial),
            bool(rec.get(Col.warmup)),
            rec.get(Col.started_utc),
        ]
    )
    return hashlib.sha256(ident.encode("utf-8")).hexdigest()[:20]


def _long_arrays(metrics) -> dict:
    if not isinstance(metrics, dict):
        return {}
    return {
        k: v
        for k, v in metrics.items()
        if isinstance(v, list) and len(v) > min_items() and all(isinstance(x, (int, float)) for x in v)
    }


def move_long_arrays(rec: dict, folder: Path) -> dict:
    """rec with each long numeric metrics array written to its sidecar (fsync'd before the
    line that names it is written) and replaced by a reference; other records unchanged."""
    arrays = _long_arrays(rec.get(Col.metrics))
    if not arrays:
        return rec
    rel = f"{FOLDER}/{run_key(rec)}.json.gz"
    path = Path(folder) / rel
    path.parent.mkdir(exist_ok=True)
    # mtime=0 and sorted keys: the same arrays give the same bytes (a checksum means the data)
    data = gzip.compress(json.dumps(arrays, sort_keys=True, separators=(",", ":")).encode("utf-8"), mtime=0)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(tmp, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    digest = hashlib.sha256(data).hexdigest()
    metrics = dict(rec[Col.metrics])
    for k, v in arrays.items():
        metrics[k] = {"sidecar": rel, "n": len(v), "sha256": digest}
    return dict(rec, metrics=metrics)


def problems(rec: dict, folder: Path) -> str | None:
    """Why a record's sidecar references do not hold (missing file, changed bytes, wrong
    count), or None. folder: the sweep folder the record's raw log lies in."""
    for field, ref in (rec.get(Col.metrics) or {}).items():
        if not is_ref(ref):
            continue
        name, n = ref["sidecar"], ref.get("n")
        path = Path(folder) / name
        if not path.is_file():
            return f"metrics.{field}: its sidecar {name} is missing"
        data = path.read_bytes()
        if hashlib.sha256(data).hexdigest() != ref.get("sha256"):
            return f"metrics.{field}: its sidecar {name} changed after the run (sha256 differs)"
        try:
            values = json.loads(gzip.decompress(data)).get(field)
        except (OSError, ValueError, AttributeError):
            return f"metrics.{field}: its sidecar {name} is not gzip'd JSON"
        if not isinstance(values, list) or len(values) != n:
            return f"metrics.{field}: its sidecar {name} does not hold the {n} values named"
    return None


def read_array(folder: Path, ref: dict, field: str) -> list[float]:
    """The array a reference stands for (folder: the sweep's raw folder)."""
    with gzip.open(Path(folder) / ref["sidecar"], "rb") as f:
        return [float(x) for x in json.load(f)[field]]


def cell_values(cell, field: str, folder: Path) -> list[float]:
    """The samples of one runs-table cell of column `field`: a list (loaded from the raw
    log), its text (read from runs.csv), or a sidecar reference as either (folder: the
    sweep's raw folder)."""
    if isinstance(cell, str) and cell.startswith(("[", "{")):
        cell = json.loads(cell)
    if is_ref(cell):
        return read_array(folder, cell, field)
    if isinstance(cell, list):
        return [float(x) for x in cell]
    return []
