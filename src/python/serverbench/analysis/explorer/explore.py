"""Exploring raw sweeps side by side (notebooks/explore.ipynb, the teaching labs).

Everything here reads data/raw/<sweep-id>/ (runs.jsonl or its shards, and manifest.json) directly, so it
works on any sweep, finished or not, without the processed tables:

* list_sweeps(): every sweep folder with its profile, date, host and run counts.
* load_sweep(): one sweep's runs as a flat table with short column names.
* compare(): per configuration present in two sweeps, the ratio of the medians
  (B / A) with a rank interval at the confidence it actually achieves.
* environment_diff(): host, kernel, runtime versions, commit... from the manifests,
  with a column saying which differ.

Bad input (no such folder, no valid record) raises SweepInputError with one sentence;
its `_render_traceback_` makes Jupyter show only that sentence.
"""

from __future__ import annotations

import json
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from serverbench import contract, paths
from serverbench.analysis.reading import registry
from serverbench.analysis.reading.sweep import Sweep
from serverbench.analysis.statistics import stats
from serverbench.rawdata import records, sweepfiles
from serverbench.rawdata.columns import Col

# Each table's default metric and x axis come from its package (registry.TableSpec).
NOT_PARAMS = ("variant", "cores", "budget_bytes")  # keys that are not the benchmark's parameters


def tables() -> list[str]:
    """Every registered table, in the benchmarks' order."""
    return list(registry.tables())


def default_metric(table: str) -> str | None:
    spec = registry.tables().get(table)
    return spec.default_metric if spec else None


def x_axis(table: str) -> str | None:
    spec = registry.tables().get(table)
    return spec.default_x if spec else None


def _spec_params(table: str) -> tuple[str, ...]:
    spec = registry.tables().get(table)
    return tuple(k for k in spec.keys if k not in NOT_PARAMS) if spec else ()


# Parameters that do not change what a rate measures: ignored when matching configurations.
RATE_INVARIANT = ("duration_s", "report_every")
CONFIDENCE = 0.95


class SweepInputError(ValueError):
    """Bad input to a notebook: one clear sentence, no traceback wall in Jupyter."""

    def _render_traceback_(self):  # IPython shows this instead of the traceback
        return [f"{type(self).__name__}: {self}"]


@dataclass
class SweepView:
    """A sweep's runs in the explorer's tidy form (all of them, or a subset a lab chose),
    with the manifest of the sweep they came from (reading.sweep.Sweep reads the folder)."""

    folder: Path
    runs: pd.DataFrame
    manifest: dict = field(default_factory=dict)
    skipped_lines: int = 0

    @property
    def sweep_id(self) -> str:
        return self.manifest.get(Col.sweep_id) or self.folder.name

    def ok(self) -> pd.DataFrame:
        r = self.runs
        return r[(r[Col.status] == "ok") & ~r[Col.warmup].astype(bool)]


# ---------------------------------------------------------------------------------------
def sweep_folder(sweep) -> Path:
    """A sweep id under data/raw/ or a path to a sweep folder."""
    if sweep is None or str(sweep).strip() == "":
        raise SweepInputError("no sweep given: pass a sweep id under data/raw/ or a folder path")
    p = Path(str(sweep)).expanduser()
    if not p.is_dir():
        cand = paths.raw_dir() / str(sweep)
        if cand.is_dir():
            p = cand
        else:
            raise SweepInputError(
                f"sweep folder {sweep!r} does not exist (looked in {paths.raw_dir()} too); "
                f"known sweeps: {', '.join(s for s in sweep_ids()) or 'none'}"
            )
    return p


def sweep_ids(raw_root=None) -> list[str]:
    root = Path(raw_root) if raw_root else paths.raw_dir()
    if not root.is_dir():
        return []
    return sorted(p.name for p in root.iterdir() if sweepfiles.is_sweep(p))


def _short(col: str) -> str:
    for prefix, repl in (
        ("params.", ""),
        ("metrics.", ""),
        ("validation.", "valid_"),
        ("search.", "search_"),
        ("runtime.", "runtime_"),
        ("host.", "host_"),
    ):
        if col.startswith(prefix):
            return repl + col[len(prefix) :]
    return col


def tidy(raw: pd.DataFrame) -> pd.DataFrame:
    """The flattened raw log with short names (params/metrics unprefixed) and `table`:
    spawn_max for the max-processes search steps, else the benchmark."""
    keep = [c for c in raw.columns if c not in ("metrics", "validation", "runtime", "env", "params")]
    df = raw[keep].copy()
    seen = set(df.columns)
    df = df.rename(columns={c: _short(c) for c in df.columns if _short(c) not in seen or _short(c) == c})
    # two raw fields may shorten to one name (a socket run's client and server params): keep the first
    df = df.loc[:, ~df.columns.duplicated()]
    if Col.search_name not in df:
        df[Col.search_name] = np.nan
    df[Col.table] = _table_of(df)
    if Col.warmup not in df:
        df[Col.warmup] = False
    df[Col.warmup] = df[Col.warmup].fillna(False).astype(bool)
    return df


def _table_of(df: pd.DataFrame) -> pd.Series:
    """The processed table of each run, as analysis.reading.process names it (a search step's runs
    form their own table: the spawn package's spawn_max)."""
    from serverbench.analysis.reading.process import table_of

    return table_of(df)


def load_sweep(sweep) -> SweepView:
    folder = sweep_folder(sweep)
    if not sweepfiles.is_sweep(folder):
        raise SweepInputError(
            f"sweep folder {str(folder)!r} has no {sweepfiles.RAW_LOG_NAME} (nor shards runs.<i>.jsonl):"
            " not a sweep (or nothing ran yet)"
        )
    src = Sweep(folder, skip_bad=True, quiet=True)  # the skipped lines are counted in SweepView.skipped_lines
    try:
        recs, skipped = src.records, src.skipped
    except (records.RawLogError, records.RecordError, OSError, ValueError) as e:
        raise SweepInputError(f"sweep folder {str(folder)!r}: cannot read its raw log ({e})") from None
    if not recs:
        why = f"; first problem: {skipped[0][2]}" if skipped else ""
        raise SweepInputError(
            f"sweep folder {str(folder)!r} holds no valid records ({len(skipped)} unreadable line(s){why})"
        )
    return SweepView(folder, tidy(src.raw), src.manifest, len(skipped))


def list_sweeps(raw_root=None) -> pd.DataFrame:
    """One row per sweep folder: id, profile, created, host, benchmarks, run counts."""
    rows = []
    root = Path(raw_root) if raw_root else paths.raw_dir()
    for sid in sweep_ids(root):
        folder = root / sid
        m = sweepfiles.read_manifest(folder)
        statuses: dict = {}
        benchmarks = set()
        for log in sweepfiles.sweep_logs(folder):
            try:
                for _, line in records.iter_raw_lines(log):
                    try:
                        r = json.loads(line)
                    except ValueError:
                        continue
                    statuses[r.get(Col.status)] = statuses.get(r.get(Col.status), 0) + 1
                    benchmarks.add(r.get(Col.benchmark))
            except records.RawLogError as e:  # the lines before the damage are counted; the rest named
                warnings.warn(f"{sid}: {e}", stacklevel=2)
        host = m.get(Col.host) or {}
        rows.append(
            {
                "sweep_id": sid,
                "profile": (m.get(Col.profile) or {}).get(Col.name),
                "created_utc": m.get(Col.created_utc),
                "cpu": host.get(Col.cpu_model),
                "cpus": host.get(Col.logical_cpus),
                "machine": (m.get(Col.machine) or {}).get(Col.fingerprint),  # same value: same machine
                "benchmarks": ",".join(sorted(b for b in benchmarks if b)),
                "runs": sum(statuses.values()),
                "ok": statuses.get("ok", 0),
            }
        )
    return pd.DataFrame(
        rows, columns=["sweep_id", "profile", "created_utc", "cpu", "cpus", "machine", "benchmarks", "runs", "ok"]
    )


# ---------------------------------------------------------------------------------------
def param_columns(df: pd.DataFrame, table: str) -> list[str]:
    """The parameter columns of a table's runs (those with a value in some row): its
    configuration keys (the package's TableSpec, as the processed tables group runs), else
    the benchmark's parameters in spec/cli.json. Not a socket client's port or time-out."""
    spec = registry.tables().get(table)
    cands = list(_spec_params(table))
    if not cands:
        try:
            flags = contract.flags(spec.benchmark if spec else table).values()
            cands = [f.param for f in flags if f.param]
        except (KeyError, TypeError, ValueError):
            cands = []
    return [c for c in cands if c in df and df[c].notna().any()]


def config_key(df: pd.DataFrame, table: str, ignore=RATE_INVARIANT) -> pd.Series:
    """A configuration's identity across sweeps: language/variant/cores + parameters
    (minus `ignore`: a rate does not depend on how long it was measured)."""
    params = [c for c in param_columns(df, table) if c not in ignore]

    def fmt(v):
        if isinstance(v, float) and v.is_integer():
            return str(int(v))
        return str(v)

    def key(r):
        ps = ",".join(f"{c}={fmt(r[c])}" for c in params)
        return f"{r[Col.language]}/{r.get(Col.variant, 'fair')}/c{fmt(r.get(Col.cores))}/{ps}"

    return df.apply(key, axis=1)


def ratio_interval(num, den, confidence: float = CONFIDENCE) -> dict:
    """num/den of two samples: the Hodges-Lehmann ratio with its exact rank interval, at
    the level it achieves."""
    r = stats.ratio_ci(np.asarray(num, dtype=float), np.asarray(den, dtype=float), confidence)
    return {
        "ratio": r.ratio,
        "ci_lo": r.lo,
        "ci_hi": r.hi,
        "ci_level": round(float(r.level), 4),
        "method": r.method,
    }


def compare(a: SweepView, b: SweepView, table: str, metric: str | None = None, ignore=RATE_INVARIANT) -> pd.DataFrame:
    """Per configuration measured (ok) in both sweeps: medians and B/A with an interval."""
    metric = metric or default_metric(table)
    out = []
    da, db = a.ok(), b.ok()
    da, db = da[da[Col.table] == table], db[db[Col.table] == table]
    cols = ["config", "n_a", "n_b", "median_a", "median_b", "ratio", "ci_lo", "ci_hi", "ci_level", "method"]
    if da.empty or db.empty or metric not in da or metric not in db:
        return pd.DataFrame(columns=cols)
    da = da.assign(config=config_key(da, table, ignore))
    db = db.assign(config=config_key(db, table, ignore))
    for cfg in sorted(set(da[Col.config]) & set(db[Col.config])):
        va = da.loc[da[Col.config] == cfg, metric].dropna().to_numpy(float)
        vb = db.loc[db[Col.config] == cfg, metric].dropna().to_numpy(float)
        if len(va) == 0 or len(vb) == 0:
            continue
        out.append(
            {
                "config": cfg,
                "n_a": len(va),
                "n_b": len(vb),
                "median_a": float(np.median(va)),
                "median_b": float(np.median(vb)),
                **ratio_interval(vb, va),
            }
        )
    return pd.DataFrame(out, columns=cols)


# ---------------------------------------------------------------------------------------
def environment(m: dict) -> dict:
    """The facts of a manifest that can change a measurement."""
    host = m.get(Col.host) or {}
    prof = m.get(Col.resolved_profile) or {}
    env = {
        "profile": (m.get(Col.profile) or {}).get(Col.name),
        "created_utc": m.get(Col.created_utc),
        "variant": prof.get(Col.variant),
        "cpu_model": host.get(Col.cpu_model),
        "logical_cpus": host.get(Col.logical_cpus),
        "machine_fingerprint": (m.get(Col.machine) or {}).get(Col.fingerprint),
        "calibration_loop_s": ((m.get(Col.machine) or {}).get(Col.calibration) or {}).get(Col.loop_s),
        "memory_bytes": host.get(Col.memory_bytes),
        "os": host.get(Col.os),
        "kernel": host.get(Col.kernel),
        "allowed_cpus": ",".join(map(str, m.get(Col.allowed_cpus) or [])) or None,
        "memory_enforcement": (m.get(Col.memory_enforcement) or {}).get(Col.mode),
        "git_commit": ((m.get(Col.git) or {}).get(Col.commit) or "")[:12] or None,
        "git_dirty": (m.get(Col.git) or {}).get(Col.dirty),
        "python": m.get(Col.python),
        "serverbench_version": m.get(Col.serverbench_version),
    }
    for lang, info in sorted((m.get(Col.runtime_versions) or {}).items()):
        rt = (info or {}).get(Col.runtime) or {}
        env[f"runtime[{lang}]"] = rt.get(Col.version) or (info or {}).get("error")
    return env


def same_machine(a: SweepView, b: SweepView) -> str:
    """One sentence: whether two sweeps ran on the same machine (their fingerprints), and if
    not how their calibration times compare; a same CPU model name is not enough (two VM
    instances of one type differed by a factor ~1.9 in throughput)."""
    from serverbench.harness.running import fingerprint

    return fingerprint.compare([a.folder, b.folder])


def environment_diff(a: SweepView, b: SweepView) -> pd.DataFrame:
    ea, eb = environment(a.manifest), environment(b.manifest)
    keys = list(dict.fromkeys([*ea, *eb]))
    ca, cb = f"A: {a.sweep_id}", f"B: {b.sweep_id}"
    rows = [{"what": k, ca: ea.get(k), cb: eb.get(k), "differs": ea.get(k) != eb.get(k)} for k in keys]
    return pd.DataFrame(rows)
