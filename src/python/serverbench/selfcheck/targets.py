"""`python -m serverbench targets`: the native programs' speed and memory targets.

Runs each target of spec/targets.toml through the harness (so every run is a
fresh, pinned, capped process and every raw line is kept under data/raw/targets-*/) and
prints min / median / max of each metric beside its bound. It prints figures for a person
to read; it is not a test, and its exit status says only whether every run completed.
"""

from __future__ import annotations

import statistics
import tomllib
from datetime import UTC, datetime
from pathlib import Path

from serverbench import paths
from serverbench.rawdata.columns import Col

DEFAULT_FILE = "spec/targets.toml"


def load_targets(path: Path) -> dict:
    with open(path, "rb") as f:
        doc = tomllib.load(f)
    if not doc.get("target"):
        raise ValueError(f"{path}: no [[target]] entries")
    for i, t in enumerate(doc["target"], start=1):
        for key in ("language", "benchmark", "bounds"):
            if key not in t:
                raise ValueError(f"{path}: target {i} lacks {key!r}")
    return doc


def _metric(rec: dict, name: str):
    if name in ("wall_s", "user_cpu_s", "system_cpu_s", "peak_rss_bytes"):
        return rec.get(name)
    return (rec.get(Col.metrics) or {}).get(name)


def run_targets(path: Path, languages=None, trials=None, raw_root=None, progress=True, out=print) -> int:
    from serverbench.harness import run_sweep
    from serverbench.harness.recording.sweep import read_lines
    from serverbench.rawdata.sweepfiles import RAW_LOG_NAME

    doc = load_targets(path)
    trials = trials or int(doc.get(Col.trials, 3))
    sweep_id = "targets-" + datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    failed_runs = 0
    rows = []
    for t in doc["target"]:
        if languages and t[Col.language] not in languages:
            continue
        overrides = dict(t.get("set", {}))
        overrides[f"{t[Col.benchmark]}.trials"] = trials
        overrides[f"{t[Col.benchmark]}.warmup"] = False
        sweep_dir = None
        log = Path(raw_root or paths.raw_dir()) / sweep_id / RAW_LOG_NAME
        before = len(read_lines(log)) if log.exists() else 0
        sweep_dir = run_sweep(
            doc.get(Col.profile, "quick"),
            sweep_id=sweep_id,
            overrides=overrides,
            languages=[t[Col.language]],
            benchmarks=[t[Col.benchmark]],
            raw_root=raw_root,
            progress=progress,
        )
        recs = [r for r in read_lines(sweep_dir / RAW_LOG_NAME)[before:] if not r.get(Col.warmup)]
        ok = [r for r in recs if r[Col.status] == "ok"]
        failed_runs += len(recs) - len(ok)
        params = _describe(recs[0][Col.params]) if recs else ""
        cores = recs[0][Col.cores] if recs else "?"
        label = f"{t[Col.language]} {t[Col.benchmark]} {params} C={cores}"
        for b in t["bounds"]:
            vals = [v for v in (_metric(r, b[Col.metric]) for r in ok) if v is not None]
            rows.append((label, b, vals, len(recs) - len(ok), sorted({r[Col.status] for r in recs} - {"ok"})))
    out(f"targets: {sweep_id} (raw lines in {Path(raw_root or paths.raw_dir()) / sweep_id})")
    out(f"{'target':58} {'metric':18} {'bound':>12} {'min':>12} {'median':>12} {'max':>12}  n  verdict")
    for label, b, vals, bad, statuses in rows:
        bound = f"<= {b['max']:g}" if "max" in b else (f">= {b['min']:g}" if "min" in b else "(report)")
        if vals:
            lo, med, hi = min(vals), statistics.median(vals), max(vals)
            if "max" in b:
                verdict = "met" if med <= b["max"] else "MISSED"
            elif "min" in b:
                verdict = "met" if med >= b["min"] else "MISSED"
            else:
                verdict = "-"
            nums = f"{lo:12.4g} {med:12.4g} {hi:12.4g}"
        else:
            nums, verdict = f"{'-':>12} {'-':>12} {'-':>12}", "no ok run"
        if bad:
            verdict += f" ({bad} failed: {', '.join(statuses)})"
        out(f"{label:58} {b[Col.metric]:18} {bound:>12} {nums} {len(vals):2d}  {verdict}")
    out("verdicts compare the median with the bound; see docs/performance.md for what moves these numbers")
    return 1 if failed_runs else 0


def _describe(params: dict) -> str:
    keys = ("processes", "message_bytes", "repetitions", "pairs", "duration_s")
    return " ".join(f"{k}={params[k]}" for k in keys if k in params)


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "targets", help="run the native programs' speed and memory targets and print min/median/max"
    )
    p.add_argument("--file", default=None, help=f"targets file (default: {DEFAULT_FILE})")
    p.add_argument("--languages", default=None, help="comma-separated subset of erlang,go,scala_akka")
    p.add_argument("--trials", type=int, default=None, help="runs per target (default: the file's)")
    p.add_argument("--raw-dir", default=None, help="where the raw sweep goes (default: data/raw)")
    p.add_argument("--no-progress", action="store_true")
    p.set_defaults(func=_cmd)


def _cmd(args, stdout, stderr) -> int:
    from serverbench.contract import languages
    from serverbench.errors import UsageError

    path = Path(args.file) if args.file else paths.repo_root() / DEFAULT_FILE
    if not path.exists():
        raise UsageError(f"no such targets file: {path}")
    langs = None
    if args.languages:
        langs = [x.strip() for x in args.languages.split(",") if x.strip()]
        unknown = sorted(set(langs) - set(languages()))
        if unknown:
            raise UsageError(f"unknown language(s) {', '.join(unknown)}; known: {', '.join(languages())}")
    if args.trials is not None and args.trials < 1:
        raise UsageError(f"--trials must be at least 1, got {args.trials}")
    try:
        return run_targets(
            path,
            languages=langs,
            trials=args.trials,
            raw_root=args.raw_dir,
            progress=not args.no_progress,
            out=lambda s: print(s, file=stdout, flush=True),
        )
    except ValueError as e:
        raise UsageError(str(e)) from None
