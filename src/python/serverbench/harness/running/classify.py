"""What became of one run: its status (ok, crashed, invalid, timeout, over_memory_budget)
and why, from the exit, the limits' verdict and the one record on stdout."""

from __future__ import annotations

import json
import math
import os
import signal
from dataclasses import dataclass

from serverbench import contract
from serverbench.rawdata import records
from serverbench.rawdata.columns import Col

STDERR_TAIL_CHARS = 4000
STDOUT_TAIL_CHARS = 2000
STDOUT_MAX_BYTES = 64 * 1024 * 1024

# stderr patterns of a runtime that ran out of memory on its own (non-zero exit).
OOM_PATTERNS = (
    "java.lang.OutOfMemoryError",
    "Terminating due to java.lang.OutOfMemoryError",
    "fatal error: out of memory",
    "runtime: out of memory",
    "eheap_alloc: Cannot allocate",
    "Cannot allocate",
    "std::bad_alloc",
    "MemoryError",
)


def tail(path: str, chars: int) -> str:
    try:
        size = os.path.getsize(path)
        with open(path, "rb") as f:
            if size > chars * 4:
                f.seek(size - chars * 4)
            data = f.read()
    except OSError:
        return ""
    return data.decode("utf-8", errors="replace")[-chars:]


def signame(sig: int) -> str:
    try:
        return signal.Signals(sig).name
    except ValueError:
        return "unknown"


def _set(rec: dict, status: str, reason: str | None, out_path: str | None) -> None:
    rec[Col.status], rec[Col.status_reason] = status, reason
    if out_path is not None:
        rec[Col.stdout_tail] = tail(out_path, STDOUT_TAIL_CHARS)


@dataclass(frozen=True)
class Seen:
    """What the run's limits saw: the monitor's reason for ending it (timeout, memory,
    host_memory; None: it ended by itself), its watchdog's peak RSS, the memory cgroup's OOM
    kills and peak usage, the host's memory floor, and why a monitor check (e.g. the JVM's GC
    log) ended it."""

    reason: str | None = None
    peak_rss: int | None = None
    oom_kills: int = 0
    cg_peak: int | None = None
    host_floor: int | None = None
    detail: str | None = None


def classify(rec: dict, task, out_path: str, err_path: str, seen: Seen) -> None:
    """Set rec's status, status_reason, stdout_tail and native part."""
    stderr_tail = tail(err_path, STDERR_TAIL_CHARS)
    code, sig = rec[Col.exit_code], rec[Col.signal]
    budget = task.memory_budget_bytes
    reason = seen.reason
    if reason == "timeout":
        return _set(rec, "timeout", f"no exit within {task.timeout_s:g} s: killed", out_path)
    if reason == "memory" and seen.detail:
        return _set(
            rec,
            "over_memory_budget",
            f"out of memory within the budget of {budget} bytes: {seen.detail}: killed",
            out_path,
        )
    if reason == "memory":
        return _set(
            rec,
            "over_memory_budget",
            f"RSS of the process tree reached {seen.peak_rss} bytes, "
            f"over the budget of {budget} bytes (watchdog): killed",
            out_path,
        )
    if reason == "host_memory":
        return _set(
            rec,
            "over_memory_budget",
            f"the host's MemAvailable fell below the harness's floor of "
            f"{seen.host_floor} bytes (budget {budget} bytes): killed",
            out_path,
        )
    if seen.oom_kills and (sig is not None or code != 0):
        cg_peak = seen.cg_peak
        return _set(
            rec,
            "over_memory_budget",
            f"killed by the kernel OOM killer in its memory cgroup (limit "
            f"{budget} bytes" + (f", peak usage {cg_peak} bytes" if cg_peak else "") + ")",
            out_path,
        )
    if code not in (0, 1) or sig is not None:
        if not _runtime_oom(rec, stderr_tail, budget, out_path):
            if sig is not None:
                why = f"killed by signal {sig} ({signame(sig)})"
            elif code == contract.exit_code("usage"):
                why = "exit 2: the program refused its command line (usage error)"
            else:
                why = f"exit code {code}"
            _set(rec, "crashed", why, out_path)
        return None
    # exit 0 or 1: a record is expected (exit 1 may also be a runtime failure with no record)
    native, problem = read_record(out_path)
    if native is None:
        if code == 1:
            if not _runtime_oom(rec, stderr_tail, budget, out_path):
                last = stderr_tail.strip().splitlines()[-1] if stderr_tail.strip() else ""
                _set(
                    rec,
                    "crashed",
                    f"exit code 1 without a record: {last[:300]}" if last else "exit code 1 without a record",
                    out_path,
                )
            return None
        return _set(rec, "invalid", f"no valid record on stdout: {problem}", out_path)
    return accept_record(rec, task, native, code, out_path)


def accept_record(rec: dict, task, native: dict, code: int | None, out_path: str | None) -> None:
    """A parsed native record: is it about the run asked for, and did it validate?"""
    bad = mismatch(native, task)
    if bad:
        rec[Col.runtime] = native.get(Col.runtime)
        return _set(rec, "invalid", f"record is not about the run asked for: {bad}", out_path)
    rec[Col.metrics], rec[Col.validation], rec[Col.runtime] = (
        native[Col.metrics],
        native[Col.validation],
        native[Col.runtime],
    )
    if native.get(Col.knobs) is not None:
        rec[Col.knobs] = native[Col.knobs]
    # which runtime settings really ran (e.g. Go's gc, fixed when the binary was built)
    wrong = contract.settings_mismatch(task.language, getattr(task, "settings", {}), native)
    if wrong:
        return _set(rec, "invalid", f"runtime settings: {wrong}", None)
    reported = native[Col.runtime].get(Col.schedulers)
    # knob dispatcher=default (paper variant): Akka's own sizing on purpose (min 8 threads)
    if reported != task.cores and (native.get(Col.knobs) or {}).get(Col.dispatcher) != "default":
        return _set(rec, "invalid", f"runtime reports {reported} schedulers, the harness asked for {task.cores}", None)
    ok = bool(native[Col.validation].get(Col.ok))
    if ok and code == 0:
        return _set(rec, "ok", None, None)
    if not ok:
        said = native[Col.validation].get(Col.reason)
        return _set(
            rec,
            "invalid",
            "the program's own validation failed (validation.ok false)"
            + (f": {said}" if said else "")
            + ("" if code == 1 else f"; exit code {code}"),
            None,
        )
    return _set(rec, "invalid", f"validation.ok is true but exit code is {code}", None)


def _runtime_oom(rec: dict, stderr_tail: str, budget, out_path: str) -> bool:
    """A run under a budget whose runtime reported running out of memory on its own."""
    oom = next((p for p in OOM_PATTERNS if p in stderr_tail), None) if budget else None
    if oom:
        _set(
            rec,
            "over_memory_budget",
            f"the runtime ran out of memory ({oom!r} on stderr; budget {budget} bytes)",
            out_path,
        )
    return oom is not None


def read_record(path: str) -> tuple[dict | None, str | None]:
    """(native record, None) when stdout is exactly one valid record, else (None, why)."""
    size = os.path.getsize(path)
    if size == 0:
        return None, "stdout is empty"
    if size > STDOUT_MAX_BYTES:
        return None, f"stdout is {size} bytes"
    with open(path, "rb") as f:
        data = f.read()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None, "stdout is not UTF-8"
    body = text[:-1] if text.endswith("\n") else text
    if body.endswith("\r"):
        body = body[:-1]
    if "\n" in body:
        return None, f"stdout has {body.count(chr(10)) + 1} lines, expected exactly one"
    try:
        obj = json.loads(body)
    except json.JSONDecodeError as e:
        return None, f"not JSON ({e.msg} at column {e.colno})"
    err = records.native_errors(obj)
    if err:
        return None, f"not a valid native record ({err})"
    return obj, None


def _same(a, b) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return math.isclose(float(a), float(b), rel_tol=1e-12, abs_tol=0.0)
    return a == b


def mismatch(native: dict, task) -> str | None:
    for key, want in (("benchmark", task.benchmark), ("language", task.language), ("variant", task.variant)):
        if native.get(key) != want:
            return f"{key} is {native.get(key)!r}, asked {want!r}"
    got, want = native.get(Col.params, {}), task.record_params
    if set(got) != set(want):
        return f"params keys {sorted(got)} differ from {sorted(want)}"
    for k, v in want.items():
        if not _same(got[k], v):
            return f"params.{k} is {got[k]!r}, asked {v!r}"
    return None
