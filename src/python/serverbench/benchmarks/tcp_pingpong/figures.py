"""TCP ping-pong: the processed table, per-pair data, and the figure.

A run's `language` is the CLIENT's; `server_language` the server's; a pair is
"client/server". K = read_buffer_bytes: 4 = whole messages, 1 = the original Scala
program's 1-byte buffer (run on purpose as variant `paper`, else recorded `invalid`).
"""

from __future__ import annotations

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from serverbench import catalog, paths
from serverbench.analysis.reading import registry
from serverbench.rawdata.columns import Col

matplotlib.use("Agg")

TABLE = "tcp_pingpong"
KEYS = ("variant", "server_language", "placement", "connections", "round_trips", "read_buffer_bytes")
TABLE_SPEC = registry.TableSpec(
    name=TABLE,
    benchmark="tcp_pingpong",
    keys=KEYS,
    metrics=("reported_us_per_round_trip", "true_us_per_round_trip", "elapsed_s"),
    ratio_metric="reported_us_per_round_trip",
    explore_x="connections",
)
SERVER_READ = "server.record.metrics.bytes_read"
REF_MACHINE = "2013 MacBook Pro, i7-4850HQ (write-up, best of 3)"


def reference_pingpong() -> pd.DataFrame:
    """The write-up's µs per round trip (data/reference/servers_tcp_pingpong.csv)."""
    p = paths.reference_dir() / "servers_tcp_pingpong.csv"
    return pd.read_csv(p) if p.exists() else pd.DataFrame()


def reference_bytes_read() -> pd.DataFrame:
    p = paths.reference_dir() / "servers_tcp_bytes_read.csv"
    return pd.read_csv(p) if p.exists() else pd.DataFrame()


def runs(P) -> pd.DataFrame:
    """Selected, non-warm-up, ok tcp_pingpong runs with a `pair` column and the server's
    bytes read as a fraction of the 4 x C x R the client sent (`server_read_fraction`)."""
    r = P.runs
    if r is None or r.empty or Col.table not in r or Col.server_language not in r:
        return pd.DataFrame()
    d = r[(r[Col.table] == TABLE) & r[Col.selected] & ~r[Col.warmup].astype(bool) & r[Col.is_ok]].copy()
    if d.empty:
        return d
    d["pair"] = d[Col.language] + "/" + d[Col.server_language]
    d["K"] = d[Col.read_buffer_bytes].astype(int)
    sent = 4.0 * d[Col.connections] * d[Col.round_trips]
    d["server_read_fraction"] = d[SERVER_READ] / sent if SERVER_READ in d else np.nan
    return d


def per_pair(d: pd.DataFrame, metric: str) -> pd.DataFrame:
    """Median, min and max of a metric per (placement, K, pair)."""
    if d.empty:
        return pd.DataFrame(columns=["placement", "K", "pair", "median", "min", "max", "n"])
    g = d.groupby(["placement", "K", "pair"])[metric]
    return g.agg(median="median", min="min", max="max", n="count").reset_index()


def pair_order(pairs) -> list[str]:
    langs = [x.id for x in catalog.languages(TABLE)]  # its implementers, in the spec's order
    want = [f"{c}/{s}" for c in langs for s in langs]
    return [p for p in want if p in set(pairs)] + sorted(set(pairs) - set(want))


@registry.figure(
    "fig_tcp_pingpong", title="TCP ping-pong: µs per round trip, every client/server pair", tables=(TABLE,), order=60
)
def fig_tcp_pingpong(P, languages=None, show_reference: bool = True, **_):
    """One panel per placement: µs per round trip for each client/server pair, K = 4 (true
    = reported) and K = 1 (reported as the original printed it, and the true value), the
    write-up's values overlaid. None if the sweep has no tcp_pingpong runs."""
    d = runs(P)
    if d.empty:
        return None
    rep, tru = per_pair(d, "reported_us_per_round_trip"), per_pair(d, "true_us_per_round_trip")
    placements = [p for p in ("split", "shared") if p in set(d[Col.placement])]
    pairs = pair_order(d["pair"].unique())
    ref = reference_pingpong() if show_reference else pd.DataFrame()
    fig, axes = plt.subplots(
        1, len(placements), figsize=(max(7.0, 5.5 * len(placements)), 4.8), squeeze=False, sharey=True
    )
    x = {p: i for i, p in enumerate(pairs)}
    for ax, placement in zip(axes[0], placements):
        for K, color, dx in ((4, "tab:blue", -0.15), (1, "tab:red", 0.15)):
            for table, hollow, label in ((rep, False, "reported"), (tru, True, "true")):
                s = table[(table[Col.placement] == placement) & (table["K"] == K)]
                if s.empty or (K == 4 and hollow):
                    continue  # K = 4: reported == true
                xs = np.array([x[p] for p in s["pair"]]) + dx
                ax.errorbar(
                    xs,
                    s[Col.median],
                    yerr=[s[Col.median] - s["min"], s["max"] - s[Col.median]],
                    fmt="o",
                    color=color,
                    mfc="white" if hollow else color,
                    capsize=3,
                    label=f"K={K} {label}" + (" (= true)" if K == 4 else ""),
                )
        if not ref.empty:
            for _, row in ref.iterrows():
                pair = f"{row['client']}/{row[Col.server]}"
                if pair not in x:
                    continue
                buggy = (
                    "original" in str(row[Col.stage])
                    and row["client"] == "scala"
                    or ("original" in str(row[Col.stage]) and row[Col.server] == "scala")
                )
                ax.scatter(
                    x[pair] + (0.15 if buggy else -0.15),
                    row["us_per_round_trip_best_of_3"],
                    marker="*",
                    s=90,
                    color="tab:red" if buggy else "tab:blue",
                    edgecolor="black",
                    zorder=5,
                    label=f"write-up, {'original code' if buggy else '4-byte reads'}: {REF_MACHINE}",
                )
        ax.set_xticks(range(len(pairs)), pairs, rotation=45, ha="right")
        ax.set_yscale("log")
        ax.set_title(
            f"placement: {placement}"
            + (" (client, server on separate CPUs)" if placement == "split" else " (both on one CPU)"),
            fontsize=9,
        )
        ax.set_xlabel("client / server")
        ax.grid(True, which="both", alpha=0.3)
    axes[0][0].set_ylabel("µs per round trip\n(median; bars: min-max of trials)")
    handles, labels = axes[0][0].get_legend_handles_labels()
    uniq = dict(zip(labels, handles))
    fig.legend(uniq.values(), uniq.keys(), loc="lower center", ncol=2, fontsize=7, frameon=False)
    c, r = int(d[Col.connections].iloc[0]), int(d[Col.round_trips].iloc[0])
    fig.suptitle(f"TCP ping-pong, {c} connections x {r:,} round trips (K = read buffer bytes)", fontsize=10)
    fig.tight_layout(rect=(0, 0.16, 1, 0.95))
    return fig
