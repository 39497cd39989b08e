"""The report's warm-up section: every throughput run long enough classified as flat,
warm-up, slow-down or no steady state (analysis.statistics.warmup, protocol 2 section 8),
each class's share per language and core count, for this sweep and for the committed
sweeps of the paper profile's throughput pieces (the 60 s runs the classification needs).

It reads the raw logs (the processed tables keep no samples): the attempt each table
selects (the last ok one of a configuration and trial; warm-up runs left out)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from serverbench import paths
from serverbench.analysis.reading import cache, registry
from serverbench.analysis.statistics import warmup
from serverbench.benchmarks.throughput.columns import Col
from serverbench.rawdata.sweepfiles import raw_files

BENCHMARK = "throughput"
COLUMNS = ["sweep", "language", "cores", "pairs", "trial", "label", "steady_share", "steady_over_whole"]


def selected_runs(raw_dir: Path) -> list[dict]:
    """The throughput records a table selects: per (config, trial), the last ok attempt."""
    from serverbench.analysis.statistics.rerun_evidence import raw_lines

    best: dict[tuple, dict] = {}
    for r in raw_lines(Path(raw_dir)):
        if r.get(Col.benchmark) == BENCHMARK and r.get(Col.status) == "ok" and not r.get(Col.warmup):
            best[(r.get(Col.config_id), r.get(Col.trial))] = r
    return list(best.values())


def classify_sweep(raw_dir: Path, rule: warmup.Rule | None = None) -> pd.DataFrame:
    """One row per selected throughput run of the sweep (COLUMNS). With the protocol's rule
    the rows are kept in the user's cache under the digest of the sweep's raw logs and the
    code (reading/cache.py): every render classifies the committed paper pieces again."""
    if rule is not None:
        return pd.DataFrame(_rows(Path(raw_dir), rule), columns=COLUMNS)
    raw_dir = Path(raw_dir)
    inputs = [("sweep", raw_dir.name.encode())]
    inputs += [(f.relative_to(raw_dir).as_posix(), f.read_bytes()) for f in raw_files(raw_dir)]
    rows = cache.json_value("warmup-classes", inputs, lambda: _rows(raw_dir, warmup.Rule.of_protocol()))
    return pd.DataFrame(rows, columns=COLUMNS)


def _rows(raw_dir: Path, rule: warmup.Rule) -> list[list]:
    rows = []
    for r in selected_runs(raw_dir):
        c = warmup.classify_run(r.get(Col.metrics) or {}, r.get(Col.params) or {}, rule)
        params = r.get(Col.params) or {}
        rows.append(
            [
                Path(raw_dir).name,
                r.get(Col.language),
                r.get(Col.cores),
                params.get(Col.pairs),
                r.get(Col.trial),
                c.label,
                c.steady_share,
                c.steady_over_whole,
            ]
        )
    return rows


def shares(runs: pd.DataFrame) -> pd.DataFrame:
    """Each class's share of the classified runs per sweep, language and core count, with the
    median steady-state rate over the whole run's (what the whole-run metric leaves out)."""
    done = runs[runs["label"].isin(warmup.CLASSES)]
    out = []
    for (sweep, lang, cores), g in done.groupby(["sweep", "language", "cores"], sort=True):
        n = len(g)
        row = {"sweep": sweep, "language": lang, "cores": int(cores), "runs": n}
        row |= {k: f"{(g['label'] == k).mean():.0%}" for k in warmup.CLASSES}
        row["steady / whole run (median)"] = round(float(g["steady_over_whole"].median()), 3)
        out.append(row)
    return pd.DataFrame(out)


def _raw_of(info: dict) -> Path:
    sid = info.get(Col.sweep_id, "")
    here = paths.raw_dir() / sid
    return here if here.exists() else Path(info.get(Col.sweep_dir) or here)


def _paper_pieces() -> list[Path]:
    """The raw folders of every committed sweep of the paper profile's throughput pieces."""
    from serverbench.analysis.reporting import paperscale

    folders = []
    for piece, sweeps in paperscale.all_sweeps().items():
        if piece.startswith(BENCHMARK):
            folders += [paths.raw_dir() / s.name for s in sweeps if (paths.raw_dir() / s.name).exists()]
    return folders


@registry.report_section("Warm-up and steady state of the throughput runs", order=60)
def warmup_section(P) -> list:
    own = _raw_of(P.info)
    folders = ([own] if own.exists() else []) + [f for f in _paper_pieces() if f.name != own.name]
    if not folders:
        return []
    runs = pd.concat([classify_sweep(f) for f in folders], ignore_index=True)
    rule = warmup.Rule.of_protocol()
    short = runs[runs["label"] == warmup.TOO_SHORT][Col.sweep].unique().tolist()
    table = shares(runs)
    lead = (
        "Each throughput run classified as Barrett et al. do (OOPSLA 2017; docs/protocol.md section 8): its "
        f"exchange count on {rule.window_s:g} s windows, changepoints by PELT, the last segment its steady "
        "state. The verdicts use the whole timed run, start-up included (the paper's measure); the last "
        "column says how the steady state compares with it. PingPing programs report no per-iteration "
        "times, so PingPing is not classified."
    )
    blocks: list = [lead]
    if short:
        blocks.append(
            "Too short to classify (runs under "
            f"{rule.min_windows} windows of {rule.window_s:g} s): " + ", ".join(f"`{s}`" for s in short) + "."
        )
    if not table.empty:
        blocks.append(table)
    return blocks
