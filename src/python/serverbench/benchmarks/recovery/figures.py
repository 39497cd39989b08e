"""recovery: the processed table, the derived tables and the two figures.

What a fault costs: throughput at a crash rate lambda relative to the same configuration
at lambda = 0 (a Hodges-Lehmann ratio of trials with its exact interval), the restart
latency of every crash (all samples pooled per language, ECDF and median with its
distribution-free interval), and supervision's own cost: lambda = 0 against the
unsupervised `throughput` benchmark at the same cores, pairs and message size.
"""

from __future__ import annotations

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from serverbench import paths
from serverbench.analysis.plotting.figstyle import _style, color, marker
from serverbench.analysis.reading import registry
from serverbench.analysis.reading.process import LANGUAGE_LABELS
from serverbench.analysis.statistics import stats
from serverbench.benchmarks.recovery.columns import Col
from serverbench.rawdata import sidecars

matplotlib.use("Agg")

TABLE = "recovery"
CONFIG = ("cores", "pairs", "message_bytes", "duration_s")
TABLE_SPEC = registry.TableSpec(
    name=TABLE,
    benchmark="recovery",
    keys=("variant", "fault", *CONFIG, "crashes_per_s"),
    metrics=("exchanges_per_s", "messages_lost", "exchanges_lost"),
    ratio_metric="exchanges_per_s",
)
LOSS = 0.9  # "loses 10 %": the relative throughput's point estimate below this
# The rate over the second half of a run (process.steady_rate_per_min, from the
# aggregator's samples): JIT and VM warm-up left out, which in 1 s JVM runs is most of
# the difference between trials; crashes fall in both halves alike (a fixed rate).
METRIC = "steady_msgs_per_min"


def runs(P, fault: str = "worker") -> pd.DataFrame:
    """Selected, measured, ok recovery runs of one fault mode."""
    r = P.runs
    if r is None or r.empty or Col.table not in r or "fault" not in r:
        return pd.DataFrame()
    d = r[(r[Col.table] == TABLE) & r[Col.selected] & ~r[Col.warmup].astype(bool) & r[Col.is_ok]]
    return d[d["fault"] == fault].copy()


def latencies(d: pd.DataFrame) -> pd.DataFrame:
    """One row per restart: language, crashes_per_s, latency_s (every sample kept; a
    long run's are read from its sidecar in the raw folder)."""
    sweeps = d[Col.sweep_id] if Col.sweep_id in d else [""] * len(d)
    rows = [
        (lang, rate, x)
        for lang, rate, sweep, cell in zip(
            d.get(Col.language, []), d.get(Col.crashes_per_s, []), sweeps, d.get(Col.restart_latency_s, [])
        )
        for x in sidecars.cell_values(cell, "restart_latency_s", paths.raw_dir() / str(sweep))
    ]
    return pd.DataFrame(rows, columns=["language", "crashes_per_s", "latency_s"])


def relative_throughput(P) -> pd.DataFrame:
    """Per language, configuration and lambda > 0: the steady rate / the same at lambda = 0."""
    d = runs(P)
    cols = ["language", *CONFIG, "crashes_per_s", "ratio", "lo", "hi", "level", "n", "n_base"]
    out = []
    if d.empty:
        return pd.DataFrame(columns=cols)
    for key, g in d.groupby(["language", *CONFIG]):
        base = g[g[Col.crashes_per_s] == 0][METRIC]
        for rate, h in g[g[Col.crashes_per_s] > 0].groupby("crashes_per_s"):
            ci = stats.ratio_ci(h[METRIC], base)
            out.append((*key, rate, ci.ratio, ci.lo, ci.hi, ci.level, ci.n_num, ci.n_den))
    return pd.DataFrame(out, columns=cols).sort_values(["crashes_per_s", "language"]).reset_index(drop=True)


def latency_summary(P, fault: str = "worker") -> pd.DataFrame:
    """Per language: restarts timed, median restart latency with its interval, p90, max (µs)."""
    lat = latencies(runs(P, fault))
    rows = []
    for lang, g in lat.groupby("language"):
        ci = stats.median_ci(g["latency_s"])
        x = g["latency_s"].to_numpy()
        rows.append(
            {
                "language": lang,
                "restarts": ci.n,
                "median_us": ci.median * 1e6,
                "lo_us": ci.lo * 1e6,
                "hi_us": ci.hi * 1e6,
                "level": round(ci.level, 3),
                "p90_us": float(np.quantile(x, 0.9)) * 1e6,
                "max_us": float(x.max()) * 1e6,
            }
        )
    return pd.DataFrame(rows)


def supervision_overhead(P) -> pd.DataFrame:
    """recovery at lambda = 0 / throughput (unsupervised) at the same cores, pairs, B."""
    d = runs(P)
    r = P.runs
    cols = ["language", "cores", "pairs", "message_bytes", "ratio", "lo", "hi", "level", "n", "n_base"]
    if d.empty or r is None or Col.table not in r:
        return pd.DataFrame(columns=cols)
    t = r[(r[Col.table] == "throughput") & r[Col.selected] & ~r[Col.warmup].astype(bool) & r[Col.is_ok]]
    if Col.payload in t:
        t = t[t[Col.payload].fillna("copy") == "copy"]
    t = t[t[Col.variant] == "fair"]
    out = []
    for (lang, c, p, b), g in d[d[Col.crashes_per_s] == 0].groupby(["language", "cores", "pairs", "message_bytes"]):
        base = t[(t[Col.language] == lang) & (t[Col.cores] == c) & (t[Col.pairs] == p) & (t[Col.message_bytes] == b)]
        if base.empty:
            continue
        ci = stats.ratio_ci(g[METRIC], base[METRIC])
        out.append((lang, c, p, b, ci.ratio, ci.lo, ci.hi, ci.level, ci.n_num, ci.n_den))
    return pd.DataFrame(out, columns=cols)


def first_loss(rel: pd.DataFrame, loss: float = LOSS):
    """The smallest lambda at which some language's relative throughput is below `loss`,
    and that language; (None, None) if none is."""
    below = rel[rel[Col.ratio] < loss]
    if below.empty:
        return None, None
    rate = below[Col.crashes_per_s].min()
    return float(rate), ", ".join(sorted(below[below[Col.crashes_per_s] == rate][Col.language]))


@registry.figure("fig_recovery_throughput", title="Faults: throughput against crash rate", tables=(TABLE,), order=40)
def fig_recovery_throughput(P, languages=None, show_reference: bool = True, **_):
    rel = relative_throughput(P)
    if languages:
        rel = rel[rel[Col.language].isin(languages)]
    if rel.empty:
        return None
    _style()
    fig, ax = plt.subplots(figsize=(7.5, 4.5))
    langs = sorted(set(rel[Col.language]))
    for k, (lang, g) in enumerate(rel.groupby("language")):
        g = g.sort_values("crashes_per_s")
        dodge = 1.06 ** (k - (len(langs) - 1) / 2)  # side by side, so no interval hides another
        x = np.concatenate([[0.0], g[Col.crashes_per_s].to_numpy(float) * dodge])  # lambda = 0: 1 by definition
        y = np.concatenate([[1.0], g[Col.ratio].to_numpy(float)])
        ax.plot(x, y, color=color(lang), marker=marker(lang), label=LANGUAGE_LABELS.get(lang, lang))
        ax.errorbar(
            x[1:], y[1:], yerr=[g[Col.ratio] - g["lo"], g["hi"] - g[Col.ratio]], color=color(lang), ls="none", capsize=3
        )
    ax.axhline(1.0, color="grey", lw=0.8)
    ax.axhline(LOSS, color="grey", lw=0.8, ls=":")
    ax.set_xscale("symlog", linthresh=1.0)  # lambda = 0, the baseline, on the axis beside the rates
    ax.set_xlim(-0.3, float(rel[Col.crashes_per_s].max()) * 1.6)  # no negative rates
    ax.set_xlabel("crashes per second (lambda), injected into workers")
    ax.set_ylabel("throughput relative to lambda = 0")
    c = rel.iloc[0]
    ax.set_title(
        f"Cost of recovering: {int(c[Col.pairs])} pairs, {int(c[Col.message_bytes])} B, {c[Col.duration_s]:g} s, "
        f"{int(c[Col.cores])} core(s)\nsteady rate (second half of each run), Hodges-Lehmann ratio of trials, "
        "exact interval (level in the report table)",
        fontsize=9,
    )
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


@registry.figure("fig_recovery_latency", title="Faults: restart latency", tables=(TABLE,), order=41)
def fig_recovery_latency(P, languages=None, show_reference: bool = True, **_):
    lat = latencies(runs(P))
    if languages:
        lat = lat[lat[Col.language].isin(languages)]
    if lat.empty:
        return None
    _style()
    fig, ax = plt.subplots(figsize=(7.5, 4.5))
    for lang, g in lat.groupby("language"):
        x = np.sort(g["latency_s"].to_numpy()) * 1e6
        ax.step(x, np.arange(1, len(x) + 1) / len(x), where="post", color=color(lang),
                label=f"{LANGUAGE_LABELS.get(lang, lang)} (n = {len(x)})")  # fmt: skip
    ax.set_xscale("log")
    ax.set_xlabel("restart latency, µs (crash to the restarted worker's first exchange)")
    ax.set_ylabel("fraction of restarts (ECDF)")
    ax.set_title("Restart latency of every injected worker crash, all crash rates pooled", fontsize=9)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig
