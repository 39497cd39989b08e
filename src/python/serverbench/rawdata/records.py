"""The two records of the contract (spec/*.schema.json): validation and loading.

A native record is what one run of a benchmark program prints; a raw record is one
line of data/raw/<sweep-id>/runs.jsonl. Loading is strict by default: a corrupt or
schema-violating line raises RawLogError naming the file and line. skip_bad=True
skips such lines but counts and reports them (df.attrs["skipped"] and a warning),
never silently.

The quick first pass that spares most records jsonschema's walk is records_quick.py.
"""

from __future__ import annotations

import json
import math
import warnings
import zlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from serverbench import paths, plugins
from serverbench.rawdata import quick as records_quick
from serverbench.rawdata import sidecars, sweepfiles
from serverbench.rawdata.columns import Col
from serverbench.rawdata.quick import plain_finite as _plain_finite

if TYPE_CHECKING:
    import jsonschema

NATIVE_SCHEMA = "native-record.schema.json"
RAW_SCHEMA = "raw-record.schema.json"
NATIVE_KEYS = ("benchmark", "language", "variant", "params", "metrics", "validation", "runtime")


class RecordError(ValueError):
    """A record that does not meet its schema."""


@dataclass
class RawLogError(ValueError):
    path: Path
    line: int
    reason: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.reason}"


def load_schema(name: str) -> dict:
    """One of the two schemas of spec/, with the plug-ins on the path merged in (their
    languages and benchmarks in the enums, a plug-in benchmark's record as a branch of the
    native schema's oneOf): the same object while the plug-ins are the same."""
    return _schema(name, plugins.spec_files())


@cache
def _schema(name: str, plugged: tuple[tuple[str, str, str], ...]) -> dict:
    with open(paths.spec_dir() / name, encoding="utf-8") as f:
        schema = json.load(f)
    native = name == NATIVE_SCHEMA
    enums = schema["$defs"] if native else schema["properties"]
    for kind, bench, entry_file in plugged:
        if kind == "language":
            enums[Col.language]["enum"].append(bench)
        elif native:
            schema["$defs"][bench] = plugins.spec_entry(entry_file)[Col.record]
            schema["oneOf"].append({"$ref": f"#/$defs/{bench}"})
        else:
            enums[Col.benchmark]["enum"].append(bench)
    return schema


def _validator(name: str) -> jsonschema.protocols.Validator:
    return _compiled(name, plugins.spec_files())


@cache
def _compiled(name: str, plugged: tuple) -> jsonschema.protocols.Validator:
    schema = _schema(name, plugged)
    import jsonschema  # imported when a record needs it: its format checkers cost ~3 s to import

    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema, format_checker=cls.FORMAT_CHECKER)


def _first_error(name: str, obj) -> str | None:
    errors = sorted(_validator(name).iter_errors(obj), key=lambda e: (len(list(e.absolute_path)), str(e.message)))
    if not errors:
        return None
    import jsonschema

    best = jsonschema.exceptions.best_match(errors)
    where = "/".join(str(p) for p in best.absolute_path) or "(record)"
    return f"{where}: {best.message}"


def _finite(obj, where="") -> str | None:
    """JSON Schema cannot say 'no NaN or Infinity'; Python's json parser accepts them."""
    if isinstance(obj, float) and not math.isfinite(obj):
        return f"{where or '(record)'}: non-finite number {obj!r}"
    if isinstance(obj, dict):
        for k, v in obj.items():
            err = _finite(v, f"{where}/{k}" if where else str(k))
            if err:
                return err
    if isinstance(obj, list):
        for i, v in enumerate(obj):
            err = _finite(v, f"{where}/{i}" if where else str(i))
            if err:
                return err
    return None


def _native_validator_for(benchmark: str) -> jsonschema.protocols.Validator:
    """The native schema narrowed to one benchmark's $defs entry, so that errors name the
    field at fault instead of 'not valid under any of the given schemas' (oneOf)."""
    return _narrowed(benchmark, plugins.spec_files())


@cache
def _narrowed(benchmark: str, plugged: tuple) -> jsonschema.protocols.Validator:
    root = _schema(NATIVE_SCHEMA, plugged)
    narrowed = {k: v for k, v in root.items() if k != "oneOf"}
    narrowed["$ref"] = f"#/$defs/{benchmark}"
    import jsonschema

    cls = jsonschema.validators.validator_for(root)
    return cls(narrowed)


def _quick_check(name: str) -> Callable[[Any], bool]:
    """The quick first pass for one of the two schemas (records_quick.py): True only when
    fastjsonschema finds a record valid; False means "ask jsonschema"."""
    return _quick(name, plugins.spec_files())


@cache
def _quick(name: str, plugged: tuple) -> Callable[[Any], bool]:
    return records_quick.compile_check(_schema(name, plugged))


def native_errors(record) -> str | None:
    """None if record is a valid native record, else the first problem found."""
    if _plain_finite(record) and _quick_check(NATIVE_SCHEMA)(record) is True:
        return None
    err = _finite(record)
    if err:
        return err
    bench = record.get(Col.benchmark) if isinstance(record, dict) else None
    branches = [b["$ref"].rpartition("/")[2] for b in load_schema(NATIVE_SCHEMA)["oneOf"]]
    if isinstance(bench, str) and bench in branches:
        errors = list(_native_validator_for(bench).iter_errors(record))
        if errors:
            import jsonschema

            best = jsonschema.exceptions.best_match(errors)
            where = "/".join(str(p) for p in best.absolute_path) or "(record)"
            return f"{where}: {best.message}"
        # oneOf also needs every other branch to fail: each stops at its first error, which
        # is much cheaper than the whole oneOf's every error (`validate data/raw`)
        if not any(_native_validator_for(b).is_valid(record) for b in branches if b != bench):
            return None
    return _first_error(NATIVE_SCHEMA, record)


def validate_native(record) -> dict:
    err = native_errors(record)
    if err:
        raise RecordError(f"native record: {err}")
    return record


def raw_errors(record) -> str | None:
    """None if record is a valid raw-log line, else the first problem found.

    Besides the raw schema, a line that carries a native result (metrics not null) must
    hold a complete, valid native record, and that record must be about the run the
    harness asked for."""
    if (
        _plain_finite(record)
        and _quick_check(RAW_SCHEMA)(record) is True
        and (
            record.get(Col.metrics) is None or _quick_check(NATIVE_SCHEMA)({k: record[k] for k in NATIVE_KEYS}) is True
        )
    ):
        return None
    err = _finite(record) or _first_error(RAW_SCHEMA, record)
    if err:
        return err
    if record.get(Col.metrics) is not None:
        native = {k: record[k] for k in NATIVE_KEYS}
        err = native_errors(native)
        if err:
            return f"native part: {err}"
    return None


def validate_raw(record) -> dict:
    err = raw_errors(record)
    if err:
        raise RecordError(f"raw record: {err}")
    return record


def iter_raw_lines(path: Path) -> Iterator[tuple[int, bytes]]:
    """(1-based number, bytes with the newline) of every line. Bytes, split at b"\\n" only
    (as the harness reads its log when resuming, so both number lines alike): each line is
    decoded on its own, so a line that is not UTF-8 is reported by its own number. A sealed
    log (.jsonl.gz) is read decompressed; one that cannot be raises RawLogError at the line
    it reached, as no later line can be read."""
    no = 0
    try:
        with sweepfiles.open_raw(path) as f:
            for no, raw in enumerate(f, start=1):
                yield no, raw
    except (OSError, EOFError, zlib.error) as e:
        if not sweepfiles.is_sealed(path) or isinstance(e, FileNotFoundError):
            raise
        raise RawLogError(Path(path), no + 1, f"sealed log cannot be decompressed ({e})") from None


def decode_line(raw: bytes) -> tuple[str | None, str | None]:
    """(text, None), or (None, why) for bytes that are not UTF-8; the column counts bytes
    from 1 (a character count means little in text that cannot be decoded)."""
    try:
        return raw.decode("utf-8"), None
    except UnicodeDecodeError as e:
        return None, f"not UTF-8 text (byte 0x{raw[e.start]:02x} at column {e.start + 1})"


def parse_raw_file(path: Path, skip_bad: bool = False, skipped: list | None = None) -> list[dict]:
    """Every record of one JSON Lines file, checked against the raw schema."""
    path = Path(path)
    out = []
    for no, raw in iter_raw_lines(path):
        line, reason = decode_line(raw)
        rec = None
        if line is not None:
            if not line.strip():
                continue
            rec, reason = _parse_line(line)
        if not reason and rec.get(Col.metrics):
            reason = sidecars.problems(rec, path.parent)
        if reason:
            if not skip_bad:
                raise RawLogError(path, no, reason)
            if skipped is not None:
                skipped.append((str(path), no, reason))
            continue
        out.append(rec)
    return out


def _parse_line(line: str) -> tuple[dict | None, str | None]:
    """(record, None) for a valid raw line, else (None or the record, why not)."""
    try:
        rec = json.loads(line)
    except json.JSONDecodeError as e:
        return None, f"not valid JSON ({e.msg} at column {e.colno})"
    if not line.endswith("\n"):
        # A line without its newline was cut off mid-write; the harness always ends lines.
        return rec, "last line has no newline (interrupted write?)"
    return rec, raw_errors(rec)


def load_records(sources, skip_bad: bool = False) -> tuple[list[dict], list[tuple[str, int, str]]]:
    if isinstance(sources, (str, Path)):
        sources = [sources]
    skipped: list[tuple[str, int, str]] = []
    recs: list[dict] = []
    for src in sources:
        for f in sweepfiles.raw_files(src):
            recs.extend(parse_raw_file(f, skip_bad=skip_bad, skipped=skipped))
    dup = duplicate_runs(recs)
    if dup:
        # Two ok lines for one (sweep, config, trial): e.g. the same shard run on two hosts.
        # Both are kept (nothing is dropped silently); say so.
        warnings.warn(f"{len(dup)} run(s) recorded ok more than once, e.g. {dup[0]}; all copies kept", stacklevel=2)
    if skipped:
        warnings.warn(
            f"skipped {len(skipped)} bad raw line(s); first: {skipped[0][0]}:{skipped[0][1]}: {skipped[0][2]}",
            stacklevel=2,
        )
    return recs, skipped


def duplicate_runs(recs: list[dict]) -> list[tuple]:
    """(sweep_id, config_id, trial, warmup, search step and attempt) keys that have more than
    one ok record. An ok record flagged `interfered` was run again on purpose and does not
    count; nor do a search's replicated runs, which share a config_id and differ in their
    `search` fields (phase, step, run, attempt)."""
    seen: dict[tuple, int] = {}
    for r in recs:
        if r.get(Col.status) == "ok" and not r.get(Col.interfered):
            s = r.get(Col.search)
            step = tuple(s.get(f) if isinstance(s, dict) else None for f in ("name", "phase", "step", "run", "attempt"))
            k = (r.get(Col.sweep_id), r.get(Col.config_id), r.get(Col.trial), bool(r.get(Col.warmup)), *step)
            seen[k] = seen.get(k, 0) + 1
    return [k for k, n in seen.items() if n > 1]


def cpu_models(recs) -> dict[str, list[str]]:
    """{cpu model: [host names]} over records (dicts) or a loaded DataFrame."""
    out: dict[str, list[str]] = {}
    if hasattr(recs, "columns"):  # a DataFrame from load_raw
        if "host.cpu_model" not in recs.columns:
            return out
        pairs = zip(recs["host.cpu_model"], recs.get("host.hostname", [None] * len(recs)))
    else:
        machines = (r.get(Col.host) or {} for r in recs)
        pairs = ((h.get(Col.cpu_model), h.get(Col.hostname)) for h in machines)
    for model, host in pairs:
        if model is None:
            continue
        hosts = out.setdefault(str(model), [])
        if host is not None and str(host) not in hosts:
            hosts.append(str(host))
    return out


def mixes_cpu_models(recs) -> bool:
    """Whether records (or a loaded DataFrame, or one figure's subset of it) come from
    hosts with different CPU models, e.g. the shards of a sweep run on different nodes."""
    return len(cpu_models(recs)) > 1


def flatten(records: Iterable[dict]):
    """Records -> DataFrame; nested objects become dotted columns (params.message_bytes,
    metrics.elapsed_s, host.cpu_model ...). Lists (samples, command, pinned_cpus) stay
    as Python lists in one cell, and so does a sidecar reference (a dict) in place of its list."""
    import pandas as pd

    rows = []
    for rec in records:
        row = {}
        _flatten_into(row, "", rec)
        rows.append(row)
    return pd.DataFrame(rows)


def _flatten_into(row: dict, prefix: str, obj) -> None:
    for k, v in obj.items():
        key = f"{prefix}{k}"
        if isinstance(v, dict) and v and not sidecars.is_ref(v):
            _flatten_into(row, key + ".", v)
        else:
            row[key] = v


def load_raw(sources, skip_bad: bool = False):
    """Read one or more raw logs (file, sweep folder or folder of sweeps) into a DataFrame.

    Strict by default: the first corrupt or schema-violating line raises RawLogError
    naming file and line. With skip_bad=True bad lines are skipped, counted in
    df.attrs['skipped'] (file, line, reason) and reported with a warning."""
    recs, skipped = load_records(sources, skip_bad=skip_bad)
    df = flatten(recs)
    df.attrs["skipped"] = skipped
    df.attrs["cpu_models"] = cpu_models(recs)  # {model: [hosts]}; more than one: mixes_cpu_models(df)
    return df
