"""The dimensioning experiment (Kalibera & Jones, "Rigorous benchmarking in reasonable
time", 2013): where each benchmark's measured quantity is steady, and how its variance
splits between the levels of the design, so that the `paper` profile reduces only what
changes a number's variance, never what changes the number (docs/dimensioning.md).
(Kept whole past ~350 lines: its three analyses share the sample readers and one figure.)

From a sweep of the `dimension` profile (raw logs only):

* `throughput_lengths`: every 60 s run's rate over the second half of a shorter run,
  [L/2, L] for L = 2, 10, 20 s, divided by its rate over [30, 60] s (the paper's 60 s run's
  second half); `steady_from_s`: the first second from which every 5 s block of the run
  stays within STEADY_TOLERANCE of that rate; `within_run_cv`: the spread of the 1 s
  windows of [30, 60] s (what a longer run averages away).
* `scaling`: PingPing's time per message against R and spawn's time per process against
  N, per language (median over rounds, the spread between rounds), and each language's
  ratio to Akka at every size: a ratio that moves with the size means the size changes
  the quantity compared; one that stays means it changes only the variance.
* `levels` (the committed quick sweeps): the spread of a deciding log ratio between the
  rounds of one sweep and between the medians of whole sweeps on one kind of machine.

`write(sweep)` writes data/processed/<sweep-id>/dimension_*.csv and the figure
`dimensioning` (PNG and PDF); `python -m serverbench dimension SWEEP` runs it.
"""

from __future__ import annotations

import math
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import matplotlib.ticker  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from serverbench import paths  # noqa: E402
from serverbench.analysis.claims.replication import machine_kind  # noqa: E402
from serverbench.analysis.plotting import figstyle  # noqa: E402
from serverbench.analysis.plotting.figures import save  # noqa: E402
from serverbench.analysis.reading import csvout  # noqa: E402
from serverbench.analysis.reading.sweep import Sweep  # noqa: E402
from serverbench.rawdata.columns import Col

REFERENCE_S = (30.0, 60.0)  # the second half of the paper's 60 s run
LENGTHS_S = (2.0, 10.0, 20.0)  # shorter runs, each judged by its own second half
BLOCK_S = 5.0
STEADY_TOLERANCE = 0.05
BASELINE = "scala_akka"  # the paper's ratios are to Akka
# The deciding comparisons whose spread between rounds and between sweeps `levels` measures:
# (benchmark table, fixed configuration, metric), one per in-process benchmark.
LEVELS = (
    ("pingping", {"message_bytes": 5000, "repetitions": 100000}, "elapsed_s"),
    ("spawn", {"processes": 100000}, "all_ready_s"),
    ("throughput", {"cores": 2, "pairs": 64}, "exchanges_per_s"),
)


def _ok_runs(sweep: Sweep | Path, benchmark: str) -> list[dict]:
    """The selected attempt (the last ok one) of every measured (config, trial) of a benchmark."""
    recs = (sweep if isinstance(sweep, Sweep) else Sweep(Path(sweep))).records
    last: dict[tuple, dict] = {}
    for r in recs:
        if (
            r.get(Col.benchmark) == benchmark
            and r.get(Col.status) == "ok"
            and not r.get(Col.warmup)
            and not r.get(Col.search)
        ):
            last[(r[Col.config_id], r[Col.trial])] = r
    return list(last.values())


def _cumulative_at(samples: list, t: np.ndarray) -> np.ndarray:
    """Exchanges counted by time t, linear between the periodic samples (the final exact
    sample, which adds every server's unreported remainder at one instant, is left out)."""
    s = np.asarray(samples, dtype=float)[:-1]
    return np.interp(t, np.concatenate([[0.0], s[:, 0]]), np.concatenate([[0.0], s[:, 1]]))


def _rate(samples: list, t0: float, t1: float) -> float:
    c = _cumulative_at(samples, np.array([t0, t1]))
    return float((c[1] - c[0]) / (t1 - t0))


def throughput_windows(sweep_dir: Sweep | Path, width_s: float = 1.0) -> pd.DataFrame:
    """One row per run and window: language, pairs, cores, trial, t_s (the window's end),
    rate_per_s (exchanges per second in the window)."""
    rows = []
    for r in _ok_runs(sweep_dir, "throughput"):
        samples = r[Col.metrics]["samples"]
        end = float(np.asarray(samples, dtype=float)[:-1, 0].max()) if len(samples) > 2 else 0.0
        edges = np.arange(0.0, math.floor(end / width_s) * width_s + 1e-9, width_s)
        if len(edges) < 2:
            continue
        c = _cumulative_at(samples, edges)
        for t, d in zip(edges[1:], np.diff(c)):
            rows.append(
                {
                    "language": r[Col.language],
                    "pairs": r[Col.params][Col.pairs],
                    "cores": r[Col.cores],
                    "trial": r[Col.trial],
                    "t_s": t,
                    "rate_per_s": d / width_s,
                }
            )
    return pd.DataFrame(rows)


def _steady_from(samples: list, reference: float, end_s: float) -> float:
    """The first block start from which every BLOCK_S block stays within the tolerance."""
    starts = np.arange(0.0, end_s - BLOCK_S + 1e-9, BLOCK_S)
    ok = [abs(_rate(samples, a, a + BLOCK_S) / reference - 1) <= STEADY_TOLERANCE for a in starts]
    for i in range(len(ok)):
        if all(ok[i:]):
            return float(starts[i])
    return float("nan")


def throughput_lengths(sweep_dir: Sweep | Path) -> pd.DataFrame:
    """One row per 60 s run: its reference rate over [30, 60] s, the ratio to it of the
    second half of every shorter length, steady_from_s and within_run_cv."""
    rows = []
    for r in _ok_runs(sweep_dir, "throughput"):
        samples = r[Col.metrics]["samples"]
        end = float(np.asarray(samples, dtype=float)[:-1, 0].max()) if len(samples) > 2 else 0.0
        if end < REFERENCE_S[1] - 1:
            continue  # not a 60 s run
        ref = _rate(samples, *REFERENCE_S)
        windows = np.diff(_cumulative_at(samples, np.arange(REFERENCE_S[0], REFERENCE_S[1] + 1e-9, 1.0)))
        row = {
            "language": r[Col.language],
            "pairs": r[Col.params][Col.pairs],
            "cores": r[Col.cores],
            "trial": r[Col.trial],
            "reference_rate_per_s": ref,
            "steady_from_s": _steady_from(samples, ref, REFERENCE_S[1]),
            "within_run_cv": float(np.std(windows, ddof=1) / np.mean(windows)),
        }
        for length in LENGTHS_S:
            row[f"ratio_{length:g}s_to_60s"] = _rate(samples, length / 2, length) / ref
        rows.append(row)
    return pd.DataFrame(rows)


def scaling(sweep_dir: Sweep | Path) -> pd.DataFrame:
    """PingPing's time per message against R and spawn's time per process against N: per
    benchmark, language and size the median over rounds, the spread between rounds (the
    coefficient of variation) and the ratio of medians to Akka's."""
    rows = []
    for bench, size, metric in (("pingping", "repetitions", "elapsed_s"), ("spawn", "processes", "all_ready_s")):
        for r in _ok_runs(sweep_dir, bench):
            n = r[Col.params][size]
            rows.append(
                {
                    "benchmark": bench,
                    "language": r[Col.language],
                    "size": n,
                    "trial": r[Col.trial],
                    "per_unit_s": r[Col.metrics][metric] / n,
                }
            )
    d = pd.DataFrame(rows)
    if d.empty:
        return d
    g = d.groupby(["benchmark", "language", "size"])["per_unit_s"]
    out = g.median().rename("median_per_unit_s").to_frame()
    out[Col.between_round_cv] = g.std(ddof=1) / g.mean()
    out[Col.rounds] = g.size()
    out = out.reset_index()
    base = out[out[Col.language] == BASELINE].set_index(["benchmark", "size"])[Col.median_per_unit_s]
    out[Col.ratio_to_akka] = [
        m / base.get((b, s), math.nan) for b, s, m in zip(out[Col.benchmark], out["size"], out[Col.median_per_unit_s])
    ]
    return out


def levels(profile: str = "quick", processed_dir: Path | None = None) -> pd.DataFrame:
    """For each LEVELS comparison (language / Akka) and kind of machine: the sd of the per-round
    log ratio within a sweep (pooled over sweeps), and the sd between the sweeps' median log
    ratios; `between_beyond_rounds` is what remains of the latter once the rounds' own share
    (within sd / sqrt(rounds)) is taken out (0 when the rounds explain all of it)."""
    from serverbench.analysis.claims.replication import sweeps

    rows = []
    for folder in sweeps(profile, processed_dir):
        runs = pd.read_csv(folder / "runs.csv", low_memory=False)
        runs = runs[runs[Col.selected].astype(str).str.lower().eq("true") & runs[Col.status].eq("ok")]
        runs = runs[~runs[Col.warmup].astype(str).str.lower().eq("true")]
        kind = machine_kind(
            {"cpu_model": runs["host.cpu_model"].iloc[0], "logical_cpus": runs["host.logical_cpus"].iloc[0]}
        )
        for table, config, metric in LEVELS:
            d = runs[runs[Col.benchmark].eq(table)]
            for k, v in config.items():
                d = d[pd.to_numeric(d.get(k), errors="coerce").eq(v)] if k in d else d.iloc[0:0]
            if metric not in d or d.empty:
                continue
            wide = d.pivot_table(index="trial", columns="language", values=metric, aggfunc="median")
            if BASELINE not in wide:
                continue
            for lang in wide.columns.drop(BASELINE):
                lr = np.log(wide[lang] / wide[BASELINE]).dropna()
                if len(lr) >= 2:
                    rows.append({"comparison": f"{table} {lang}/{BASELINE}", "machine": kind,
                                 "sweep": folder.name, "rounds": len(lr), "median": lr.median(),
                                 "sd_rounds": lr.std(ddof=1)})  # fmt: skip
    d = pd.DataFrame(rows)
    if d.empty:
        return d
    out = []
    for (comp, kind), g in d.groupby(["comparison", "machine"]):
        within = float(np.sqrt(np.mean(g["sd_rounds"] ** 2)))
        between = float(g[Col.median].std(ddof=1)) if len(g) > 1 else math.nan
        expected = within / math.sqrt(float(g[Col.rounds].median()))
        out.append({"comparison": comp, "machine": kind, "sweeps": len(g), "rounds": int(g[Col.rounds].median()),
                    "sd_log_within_sweep": within, "sd_log_between_sweeps": between,
                    "between_beyond_rounds": math.sqrt(max(between**2 - expected**2, 0.0))
                    if not math.isnan(between) else math.nan})  # fmt: skip
    return pd.DataFrame(out)


def _label(lang: str) -> str:
    return figstyle.LANGUAGE_LABELS.get(lang, lang)


def figure(windows: pd.DataFrame, lengths: pd.DataFrame, scale: pd.DataFrame):
    """Four panels: (a) throughput over a 60 s run relative to its [30, 60] s rate; (b) a
    shorter run's second half relative to it; (c) PingPing time per message against R;
    (d) spawn time per process against N."""
    figstyle._style()
    fig, axes = plt.subplots(2, 2, figsize=(10, 7.5))
    ax = axes[0, 0]
    if not windows.empty:
        ref = lengths.set_index(["language", "pairs", "cores", "trial"])[Col.reference_rate_per_s]
        w = windows.join(ref, on=["language", "pairs", "cores", "trial"])
        w["rel"] = w[Col.rate_per_s] / w[Col.reference_rate_per_s]
        p_min = w[Col.pairs].min()
        for (lang, pairs), g in w.groupby(["language", "pairs"]):
            m = g.groupby("t_s")["rel"].median()
            ax.plot(m.index, m.values, color=figstyle.color(lang), lw=1, ls="-" if pairs == p_min else "--",
                    label=f"{_label(lang)}, P = {pairs}")  # fmt: skip
    ax.axhspan(1 - STEADY_TOLERANCE, 1 + STEADY_TOLERANCE, color="0.85", zorder=0)
    ax.axvspan(*REFERENCE_S, color="0.93", zorder=0)
    ax.set(xlabel="time in the run (s)", ylabel="rate in each 1 s / rate over 30-60 s",
           title="(a) Throughput during a 60 s run (median of rounds)", ylim=(0.5, 1.5))  # fmt: skip
    ax.legend(fontsize=7, ncol=2)
    ax = axes[0, 1]
    if not lengths.empty:
        cols = [f"ratio_{x:g}s_to_60s" for x in LENGTHS_S]
        for (lang, pairs), g in lengths.groupby(["language", "pairs"]):
            ax.plot(LENGTHS_S, [g[c].median() for c in cols], marker=figstyle.marker(lang),
                    color=figstyle.color(lang), ls="-" if pairs == lengths[Col.pairs].min() else "--",
                    label=f"{_label(lang)}, P = {pairs}")  # fmt: skip
    ax.axhspan(1 - STEADY_TOLERANCE, 1 + STEADY_TOLERANCE, color="0.85", zorder=0)
    ax.set(xscale="log", xticks=LENGTHS_S, xticklabels=[f"{x:g}" for x in LENGTHS_S], xlabel="run length L (s)",
           ylabel="rate over [L/2, L] / rate over [30, 60] s",
           title="(b) A shorter run's second half against 60 s")  # fmt: skip
    ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())  # only the run lengths, no 3x10^0
    ax.legend(fontsize=7, ncol=2)
    for ax, bench, xl, yl, title in (
        (axes[1, 0], "pingping", "R (messages, 5 kB)", "time per message (s)", "(c) PingPing: time per message"),
        (axes[1, 1], "spawn", "N (processes)", "time per process (s)", "(d) Spawn: time per process"),
    ):
        d = scale[scale[Col.benchmark].eq(bench)] if not scale.empty else scale
        for lang, g in d.groupby("language") if not d.empty else []:
            g = g.sort_values("size")
            ax.plot(g["size"], g[Col.median_per_unit_s], marker=figstyle.marker(lang), color=figstyle.color(lang),
                    label=_label(lang))  # fmt: skip
        ax.set(xscale="log", yscale="log", xlabel=xl, ylabel=yl, title=title)
        if not d.empty:
            ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


def write(
    sweep: str | Path, out_dir: Path | None = None, figures_dir: Path | None = None, processed_dir: Path | None = None
) -> dict[str, Path]:
    """Every dimensioning table of one sweep (and the levels of the quick sweeps processed
    under processed_dir, by default data/processed), and the figure. Returns {name: path}."""
    sweep_dir = Path(sweep) if Path(sweep).is_dir() else paths.raw_dir() / str(sweep)
    if not sweep_dir.is_dir():
        raise FileNotFoundError(f"no raw sweep {sweep} (looked in {paths.portable(str(sweep_dir))})")
    out = Path(out_dir) if out_dir else paths.processed_dir() / sweep_dir.name
    out.mkdir(parents=True, exist_ok=True)
    sweep_ = Sweep(sweep_dir)  # read once for the three
    windows, lengths, scale = throughput_windows(sweep_), throughput_lengths(sweep_), scaling(sweep_)
    written = {}
    for name, df in (
        ("dimension_throughput", lengths),
        ("dimension_scaling", scale),
        ("dimension_levels", levels(processed_dir=processed_dir)),
    ):
        p = out / f"{name}.csv"
        csvout.write(df, p)
        written[name] = p
    fig = figure(windows, lengths, scale)
    written |= {f"figure.{k}": v for k, v in save(fig, "dimensioning", figures_dir).items()}
    plt.close(fig)
    return written


def latest(processed_dir: Path | None = None) -> Path | None:
    """The newest processed folder with dimensioning tables (None if there is none)."""
    root = Path(processed_dir) if processed_dir else paths.processed_dir()
    found = sorted(p.parent for p in root.glob("*/dimension_throughput.csv"))
    return found[-1] if found else None


def markdown(folder: Path | None = None) -> str:
    """The dimensioning tables of the newest committed dimension sweep, for
    docs/dimensioning.md (a generated block: `python -m serverbench docs`)."""
    from serverbench.analysis.reporting.cells import fmt

    folder = folder or latest()
    if folder is None:
        return "_No dimension sweep is committed yet (`./run_all.sh --profile dimension`)._"
    thr = pd.read_csv(folder / "dimension_throughput.csv")
    scale = pd.read_csv(folder / "dimension_scaling.csv")
    lev = pd.read_csv(folder / "dimension_levels.csv")
    out = [f"From sweep `{folder.name}` (data/processed/{folder.name}/dimension_*.csv).", ""]
    out += ["Throughput, 60 s runs on 2 cores: medians over the rounds (the range in brackets).", ""]
    out += ["| language | P | rounds | steady from (s) | 2 s / 60 s | 10 s / 60 s | 20 s / 60 s | "
            "1 s windows, cv | between rounds, cv |", "|---|---|---|---|---|---|---|---|---|"]  # fmt: skip
    for (lang, pairs), g in thr.groupby(["language", "pairs"]):
        cells = [lang, fmt(pairs), fmt(len(g)), fmt(g[Col.steady_from_s].median())]
        for length in LENGTHS_S:
            c = g[f"ratio_{length:g}s_to_60s"]
            cells.append(f"{fmt(c.median())} [{fmt(c.min())}, {fmt(c.max())}]")
        ref = g[Col.reference_rate_per_s]
        cells += [fmt(g[Col.within_run_cv].median()), fmt(ref.std(ddof=1) / ref.mean())]
        out.append("| " + " | ".join(cells) + " |")
    for bench, unit, size in (("pingping", "per message", "R"), ("spawn", "per process", "N")):
        d = scale[scale[Col.benchmark].eq(bench)]
        if d.empty:
            continue
        sizes = sorted(d["size"].unique())
        out += ["", f"{bench}: time {unit} (µs, median of rounds; cv between rounds) and the ratio to Akka, by {size}.",
                "", "| language | " + " | ".join(f"{size} = {int(s):,}" for s in sizes) + " |",
                "|---|" + "---|" * len(sizes)]  # fmt: skip
        for lang, g in d.groupby("language"):
            g = g.set_index("size")
            cells = [
                f"{fmt(g.loc[s, 'median_per_unit_s'] * 1e6)} µs (cv {fmt(g.loc[s, 'between_round_cv'])}"
                + (f"; /Akka {fmt(g.loc[s, 'ratio_to_akka'])}" if lang != BASELINE else "")
                + ")"
                if s in g.index
                else "–"
                for s in sizes
            ]
            out.append(f"| {lang} | " + " | ".join(cells) + " |")
    if not lev.empty:
        out += ["", "Spread of a deciding log ratio (committed quick sweeps): between the rounds of one sweep, "
                "between whole sweeps on one kind of machine, and what the sweeps add beyond their rounds' share.",
                "", "| comparison | machine | sweeps | rounds | sd within a sweep | sd between sweeps | "
                "beyond the rounds |", "|---|---|---|---|---|---|---|"]  # fmt: skip
        for r in lev.itertuples():
            out.append(f"| {r.comparison} | {r.machine} | {r.sweeps} | {r.rounds} | {fmt(r.sd_log_within_sweep)} | "
                       f"{fmt(r.sd_log_between_sweeps)} | {fmt(r.between_beyond_rounds)} |")  # fmt: skip
    return "\n".join(out)
