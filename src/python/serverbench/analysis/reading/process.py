"""Raw logs -> processed tables (data/processed/<sweep-id>/).

Tables written (CSV, one header line, units in column names):
* runs.csv       every attempt, one row each, flattened; `selected` marks the attempt
                 that stands for its (config_id, trial) (the ok one when a failed run was
                 retried), `failed_attempts` counts the others.
* summary.csv    per configuration and metric: trials, ok/invalid/failed counts, median
                 and its order-statistic 95% interval (stats.median_ci).
* ratios.csv     per configuration (language removed) and metric: the ratio between each
                 pair of languages (Hodges-Lehmann, exact interval, its achieved level).
* spawn_max.csv  the Fig. 4 (a) max-processes search, one row per language and step;
  spawn_max_limits.csv per language: largest N that ran ok, first failing N and why.
* failures.csv   every non-ok attempt by benchmark, language, status and reason.
* cpu_time.csv   where the time went: wall vs user vs system CPU per benchmark/language.
* sweep.json     profile, host, runtime versions, unrunnable core counts, counts.

Each benchmark's tables are registered by its package (serverbench/benchmarks/<id>/tables.py).

Why one module past ~350 lines: every table is derived from the same flattened runs with
the same selection rule (`selected`, warm-ups out, ok only), and the Processed reader
below must mirror exactly what process_sweep writes; split, the two would drift.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from itertools import combinations
from pathlib import Path
from typing import TypeVar, cast

import numpy as np
import pandas as pd

from serverbench import catalog, contract, paths
from serverbench.analysis.reading import csvout, registry
from serverbench.analysis.reading.side_tables import (  # noqa: F401  (re-exported)
    FAILED_STATUSES,
    LIMIT_STATUSES,
    cpu_time,
    failures,
    spawn_max_tables,
)
from serverbench.analysis.reading.sweep import Sweep
from serverbench.analysis.reading.sweepinfo import _jsonable, sweep_info, unrunnable_cores  # noqa: F401  (re-exported)
from serverbench.analysis.statistics import stats
from serverbench.rawdata import sidecars
from serverbench.rawdata.columns import Col

T = TypeVar("T")

# How a language (or a build of it, 'go[gc=nogreentea]') is named in tables and figures:
# spec/cli.json, languages.<lang>.plot.label
LANGUAGE_LABELS = catalog.StyleMap("label")


def table_keys() -> dict[str, list[str]]:
    """{table: configuration keys} of every registered table."""
    return {t.name: list(t.keys) for t in registry.tables().values()}


def table_metrics() -> dict[str, list[str]]:
    return {t.name: list(t.metrics) for t in registry.tables().values()}


def renames() -> dict[str, str]:
    """raw field -> runs.csv column: every benchmark's COLUMNS (its package's: runs.csv has
    them even when none of its runs is in the sweep) and the search's and runtime's fields."""
    return {
        **catalog.column_renames(),
        "search.name": "search_name",
        "search.step": "search_step",
        "search.budget_bytes": "search_budget_bytes",
        "runtime.name": "runtime_name",
        "runtime.version": "runtime_version",
        "runtime.schedulers": "runtime_schedulers",
    }


def steady_rate_per_min(samples, skip_fraction: float = 0.5) -> float:
    """Exchanges per minute over the last (1 - skip_fraction) of a run's samples
    [[t_s, cumulative], ...]: the steady state without start-up. NaN if too few samples.
    The window ends at the last periodic sample, not at the final exact total, which adds
    every server's unreported remainder (up to P x report_every) to the last instant."""
    if not isinstance(samples, (list, tuple)) or len(samples) < 4:
        return float("nan")
    full = np.asarray(samples, dtype=float)
    s = full[:-1]
    i = int(np.searchsorted(s[:, 0], skip_fraction * full[-1, 0]))
    i = min(i, len(s) - 2)
    dt = s[-1, 0] - s[i, 0]
    if dt <= 0:
        return float("nan")
    return float((s[-1, 1] - s[i, 1]) / dt * 60.0)


def table_of(df: pd.DataFrame) -> pd.Series:
    """Which registered table a run belongs to: its benchmark's table, or, for a search
    step (raw `search`), the benchmark's search table (the spawn package's spawn_max)."""
    t = df[Col.benchmark].astype(str).copy()
    grid, steps = {}, {}
    for spec in registry.tables().values():
        (steps if spec.search_steps else grid).setdefault(spec.benchmark, spec.name)
    t = t.map(lambda b: grid.get(b, b))
    if Col.search_name in df:
        for bench, name in steps.items():
            t[(df[Col.benchmark] == bench) & df[Col.search_name].notna()] = name
    return t


def runs_table(raw: pd.DataFrame) -> pd.DataFrame:
    """The flattened raw log -> one row per attempt with short column names, the
    figure table, the attempt number, `selected` and `failed_attempts`."""
    if raw.empty:
        raise ValueError("the raw log holds no runs")
    rename = renames()
    df = raw.rename(columns=rename).copy()
    # A run with runtime settings (raw `settings`, e.g. Go's gc) is another build of its
    # language: it gets its own line in every table, named as its config_id names it.
    set_cols = sorted(c for c in df.columns if c.startswith("settings."))
    if set_cols:
        df[Col.language] = [
            contract.language_key(lang, {c.split(".", 1)[1]: row[c] for c in set_cols if isinstance(row[c], str)})
            for lang, (_, row) in zip(df[Col.language], df[set_cols].iterrows(), strict=True)
        ]
    # every other params.X / metrics.X of a registered benchmark becomes column X, added at
    # once (column by column, pandas warns of a fragmented frame at a few hundred columns)
    new: dict[str, object] = {}
    for c in list(df.columns):
        if c.startswith(("params.", "metrics.")) and c != "metrics.samples":
            short = c.split(".", 1)[1]
            if "." not in short and short not in df.columns and short not in new:
                new[short] = df[c]
    # sorted: the column order must not depend on the hash seed
    for col in sorted(set(rename.values()) | {"search_name"}):
        if col not in df and col not in new:
            new[col] = np.nan
    df = pd.concat([df, pd.DataFrame(new, index=df.index)], axis=1) if new else df
    if "metrics.samples" in df:
        df[Col.steady_msgs_per_min] = [steady_rate_per_min(s) for s in df["metrics.samples"]]
    else:
        df[Col.steady_msgs_per_min] = np.nan
    df[Col.table] = table_of(df)
    df[Col.budget_bytes] = df[Col.search_budget_bytes]
    df[Col.order] = np.arange(len(df))
    key = ["sweep_id", "config_id", "trial", "warmup"]
    df = df.sort_values(["started_utc", "order"]).reset_index(drop=True)
    df[Col.attempt] = df.groupby(key).cumcount() + 1
    df[Col.is_ok] = df[Col.status] == "ok"
    # the attempt that stands for (config_id, trial): the last ok one, else the last one
    df["_rank"] = df[Col.is_ok].astype(int) * 1_000_000 + df[Col.attempt]
    best = df.groupby(key)["_rank"].transform("max")
    selected = df["_rank"] == best
    # a run whose attempts mark the run's own (raw search.final without a search name: a grid
    # run its benchmark re-runs by its own rule, IM's protocol 5): its last attempt, whatever an
    # earlier one's status (an ok attempt flagged interfered whose re-runs stayed invalid is not)
    if "search.final" in df:
        marked = df["search.final"].notna() & df[Col.search_name].isna()
        if marked.any():
            groups, attempt = [df[k] for k in key], df[Col.attempt]
            chain = marked.groupby(groups).transform("any").astype(bool)
            selected = selected.where(~chain, attempt == attempt.groupby(groups).transform("max"))
    df[Col.selected] = selected
    df[Col.failed_attempts] = df.groupby(key)[Col.is_ok].transform(lambda s: int((~s).sum()))
    df.loc[~df[Col.selected], "failed_attempts"] = 0
    drop = [
        c
        for c in df.columns
        if c.startswith(("metrics.", "validation.", "env.", "params."))
        or c in ("_rank", "order", "command", "pinned_cpus", "stdout_tail", "stderr_tail")
        or c in ("server.command", "server.env", "server.stderr_tail")  # the server side's, likewise
    ]
    out = df.drop(columns=drop)
    out[Col.stderr_last_line] = [_last_line(s) for s in df.get(Col.stderr_tail, pd.Series([""] * len(df)))]
    # a sidecar reference goes to runs.csv as JSON (sidecars.cell_values reads it back)
    for c in out.columns:
        if out[c].dtype == object and out[c].map(sidecars.is_ref).any():
            out[c] = out[c].map(lambda v: json.dumps(v, sort_keys=True) if sidecars.is_ref(v) else v)
    # reasons and stderr lines may quote the package's files by their machine path
    to_portable = paths.portabler()
    for c in out.columns:
        if out[c].dtype == object or pd.api.types.is_string_dtype(out[c]):
            out[c] = out[c].map(to_portable)
    return out


def _last_line(s) -> str:
    if not isinstance(s, str):
        return ""
    lines = [ln for ln in s.strip().splitlines() if ln.strip()]
    return lines[-1][:200] if lines else ""


def _keys(table: str, df: pd.DataFrame) -> list[str]:
    return [k for k in table_keys().get(table, []) if k in df.columns]


def trial_values(runs: pd.DataFrame, table: str, metric: str) -> pd.DataFrame:
    """Selected, non-warm-up, ok runs of one table: keys + language + trial + value (trial k
    of a configuration ran in round k: the claims pair two languages by it, analysis.statistics.paired)."""
    keys = _keys(table, runs)
    trial = ["trial"] if Col.trial in runs.columns else []
    if metric not in runs.columns:
        return pd.DataFrame(columns=["language", *keys, *trial, "value"])
    # columns and rows in one selection: a boolean mask over every column of runs copies them all
    mask = (runs[Col.table] == table) & runs[Col.selected] & ~runs[Col.warmup].astype(bool) & runs[Col.is_ok]
    d = runs.loc[mask, ["language", *keys, *trial, metric]].rename(columns={metric: "value"})
    return d[d["value"].notna()]


def summarize(runs: pd.DataFrame) -> pd.DataFrame:
    """Per configuration (table, language, keys) and metric: counts and median with CI."""
    rows = []
    base = runs[runs[Col.selected] & ~runs[Col.warmup].astype(bool)]
    allruns = runs[~runs[Col.warmup].astype(bool)]
    for table, table_keys_ in table_keys().items():
        d = base[base[Col.table] == table]
        if d.empty:
            continue
        keys = ["language", *[k for k in table_keys_ if k in runs.columns]]
        fa = allruns[allruns[Col.table] == table].groupby(keys, dropna=False)
        every = dict(iter(fa))  # one pass: get_group per configuration cost a tenth of processing
        metrics = table_metrics()[table]
        floats = _floats(d, metrics)
        for kv, g in d.groupby(keys, dropna=False):
            key = dict(zip(keys, kv))
            attempts = every.get(kv)
            if attempts is None:  # a key with a NaN part need not find itself in a dict
                attempts = fa.get_group(kv) if kv in fa.groups else g
            counts = {
                "n_trials": int(g[Col.trial].nunique()),
                "n_ok": int(g[Col.is_ok].sum()),
                "n_invalid": int((g[Col.status] == "invalid").sum()),
                "n_failed": int(g[Col.status].isin(FAILED_STATUSES).sum()),
                "n_failed_attempts": int((attempts[Col.status] != "ok").sum()),
                "statuses": ";".join(f"{k}:{v}" for k, v in sorted(attempts[Col.status].value_counts().items())),
            }
            ok = g[g[Col.is_ok]]
            ok_floats = floats.loc[ok.index]
            for metric in metrics:
                if metric in ok_floats:
                    col = ok_floats[metric].to_numpy()
                    vals = col[~np.isnan(col)]
                else:  # a column that is not all numbers: converted here, its ok runs' values only
                    vals = ok[metric].dropna().astype(float).to_numpy() if metric in ok else np.array([])
                ci = stats.median_ci(vals)
                rows.append(
                    {
                        "table": table,
                        **key,
                        **counts,
                        "metric": metric,
                        "n": ci.n,
                        "median": ci.median,
                        "ci_lo": ci.lo,
                        "ci_hi": ci.hi,
                        "ci_level": round(ci.level, 4),
                        "min": float(vals.min()) if len(vals) else np.nan,
                        "max": float(vals.max()) if len(vals) else np.nan,
                    }
                )
    return pd.DataFrame(rows)


def _floats(d: pd.DataFrame, metrics) -> pd.DataFrame:
    """The metric columns of d that convert to floats whole, converted once (per configuration
    and metric, the conversion cost a fifth of summarize); a column that does not is left out."""
    out = {}
    for m in metrics:
        if m in d:
            try:
                out[m] = d[m].astype(float)
            except (TypeError, ValueError):
                continue
    return pd.DataFrame(out, index=d.index)


def ratios(runs: pd.DataFrame) -> pd.DataFrame:
    """For every configuration measured in two languages: the ratio lang A / lang B
    (Hodges-Lehmann, exact interval at its achieved confidence, stats.ratio_ci)."""
    rows = []
    for spec in registry.tables().values():
        if not spec.ratio_metric:
            continue
        keys = _keys(spec.name, runs)
        # the ratio metric, and any other metric of the table a choice of its benchmark's options names
        # (spawn's spawn_metric: spawn_call_s beside all_ready_s)
        chosen = [c for o in catalog.options() if o.benchmark == spec.benchmark for c in o.choices]
        metrics = [spec.ratio_metric] + [c for c in chosen if c != spec.ratio_metric and c in spec.metrics]
        for m in metrics:
            if m not in runs.columns:
                continue
            d = trial_values(runs, spec.name, m)
            if d.empty:
                continue
            for kv, g in d.groupby(keys, dropna=False) if keys else [((), d)]:
                by = {lang: gg["value"].to_numpy() for lang, gg in g.groupby("language")}
                for a, b in combinations(sorted(by), 2):
                    r = stats.ratio_ci(by[a], by[b])
                    rows.append(
                        {
                            "table": spec.name,
                            **dict(zip(keys, kv if isinstance(kv, tuple) else (kv,))),
                            "metric": m,
                            "numerator": a,
                            "denominator": b,
                            "ratio": r.ratio,
                            "ci_lo": r.lo,
                            "ci_hi": r.hi,
                            "ci_level": round(r.level, 4),
                            "n_num": r.n_num,
                            "n_den": r.n_den,
                        }
                    )
    return pd.DataFrame(rows)


def process_sweep(sweep_dir, out_dir=None, skip_bad: bool = False) -> dict:
    """Read data/raw/<sweep-id>/ and write every processed table to out_dir (default
    data/processed/<sweep-id>/). Returns {name: path}."""
    sweep = Sweep(Path(sweep_dir), skip_bad=skip_bad)
    raw = sweep.raw
    runs = runs_table(raw)
    sweep_id = str(runs[Col.sweep_id].iloc[0])
    out = Path(out_dir) if out_dir else paths.processed_dir() / sweep_id
    out.mkdir(parents=True, exist_ok=True)
    written = {}

    def put(name, df):
        p = out / f"{name}.csv"
        # runs mirrors the raw records: only the column computed here is rounded
        csvout.write(df, p, ["steady_msgs_per_min"] if name == "runs" else None)
        written[name] = p

    put("runs", runs)
    put("summary", summarize(runs))
    put("ratios", ratios(runs))
    steps, limits = spawn_max_tables(runs)
    put("spawn_max", steps)
    put("spawn_max_limits", limits)
    put("failures", failures(runs))
    put("cpu_time", cpu_time(runs))
    info = sweep_info(sweep, runs)
    p = out / "sweep.json"
    p.write_text(json.dumps(info, indent=2, default=_jsonable) + "\n", encoding="utf-8")
    written[Col.sweep] = p
    return written


class Processed:
    """The processed tables of one sweep, read back from disk."""

    def __init__(self, folder: str | Path) -> None:
        self.folder = Path(folder)
        if not (self.folder / "summary.csv").exists():
            raise FileNotFoundError(f"no processed tables in {self.folder} (run `python -m serverbench process` first)")
        self.runs = self._read("runs")
        self.summary = self._read("summary")
        self.ratios = self._read("ratios")
        self.spawn_max = self._read("spawn_max")
        self.spawn_max_limits = self._read("spawn_max_limits")
        self.failures = self._read("failures")
        self.cpu_time = self._read("cpu_time")
        self.info = json.loads((self.folder / "sweep.json").read_text(encoding="utf-8"))
        self._memo: dict[tuple, object] = {}
        if not self.runs.empty:
            for c in ("warmup", "selected", "is_ok"):
                if c in self.runs:
                    self.runs[c] = self.runs[c].astype(str).str.lower() == "true"

    def memo(self, key: tuple, compute: Callable[[], T]) -> T:
        """compute() once per key for this sweep (its tables never change once read): a
        derived table that several claims, parts and figures read, such as the IM searches'
        steps, is computed once, not at every read. The caller must not modify it."""
        if key not in self._memo:
            self._memo[key] = compute()
        return cast(T, self._memo[key])

    def _read(self, name):
        p = self.folder / f"{name}.csv"
        try:
            return pd.read_csv(p)
        except (pd.errors.EmptyDataError, FileNotFoundError):
            return pd.DataFrame()

    def values(self, table: str, metric: str) -> pd.DataFrame:
        if self.runs.empty:
            return pd.DataFrame(columns=["language", "value"])
        return trial_values(self.runs, table, metric)

    def stat(self, table: str, metric: str) -> pd.DataFrame:
        s = self.summary
        if s.empty:
            return s
        return s[(s[Col.table] == table) & (s[Col.metric] == metric)].copy()
