"""Echo flood: the processed table, per-server data and the figure.

A run's `language` is the load generator's (always `c`); `server_language` is the echo
server. D = bytes_per_connection, N = connections; mode `flood` (time to echo N x D) or
`saturate` (N connections sending without end; the server seen from /proc over the sending
window -- CPU, context switches, RSS, kernel socket memory -- and the client delay).
"""

from __future__ import annotations

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from serverbench import contract, paths, protocol
from serverbench.analysis.plotting.figstyle import color
from serverbench.analysis.reading import reference, registry
from serverbench.analysis.reading.process import LANGUAGE_LABELS
from serverbench.benchmarks.echo_flood.columns import Col

matplotlib.use("Agg")

TABLE = "echo_flood"
KEYS = ("variant", "server_language", "placement", "mode", "connections", "bytes_per_connection")
TABLE_SPEC = registry.TableSpec(
    name=TABLE,
    benchmark="echo_flood",
    keys=KEYS,
    metrics=("elapsed_s", "completion_median_s", "completion_p99_s", "client_delay_s", "client_cpu_share"),
    ratio_metric="elapsed_s",
    explore_x="connections",
)
REF_MACHINE = "2010: 2.4 GHz Core 2 Duo, Ubuntu 10.04 (lowest of 3)"
# At or above this CPU share the load generator, not the server, may set the pace: the
# flood time is then an upper bound on the server's (drawn hollow; claims allow for it).
# The protocol's rule (spec/protocol.json, validity).
LOADGEN_LIMIT = float(protocol.load()["validity"]["load_generator_cpu_limit"])


def reference_flood() -> pd.DataFrame:
    p = paths.reference_dir() / "servers_echo_flood.csv"
    return pd.read_csv(p) if p.exists() else pd.DataFrame()


def reference_saturation() -> pd.DataFrame:
    p = paths.reference_dir() / "servers_echo_saturation.csv"
    return pd.read_csv(p) if p.exists() else pd.DataFrame()


def runs(P, mode: str = "flood") -> pd.DataFrame:
    """Selected, non-warm-up, ok echo_flood runs of one mode."""
    r = P.runs
    if r is None or r.empty or Col.table not in r or Col.server_language not in r:
        return pd.DataFrame()
    d = r[(r[Col.table] == TABLE) & r[Col.selected] & ~r[Col.warmup].astype(bool) & r[Col.is_ok]].copy()
    if d.empty:
        return d
    if Col.mode in d:
        d = d[d[Col.mode].fillna("flood") == mode]
    return d


def per_server(d: pd.DataFrame, metric: str = "elapsed_s") -> pd.DataFrame:
    """Median and min of a metric per (D, N, server), with the load generator's median CPU
    share and whether it reached LOADGEN_LIMIT (`loadgen_bound`: the time is an upper bound)."""
    cols = ["bytes_per_connection", "connections", "server_language", "median", "min", "n"]
    if d.empty:
        return pd.DataFrame(columns=[*cols, "loadgen_cpu_share", "loadgen_bound"])
    keys = ["bytes_per_connection", "connections", "server_language"]
    out = d.groupby(keys)[metric].agg(median="median", min="min", n="count").reset_index()
    share = pd.to_numeric(d[Col.client_cpu_share], errors="coerce") if Col.client_cpu_share in d else np.nan
    out["loadgen_cpu_share"] = d.assign(_s=share).groupby(keys)["_s"].median().to_numpy()
    out["loadgen_bound"] = out["loadgen_cpu_share"] >= LOADGEN_LIMIT
    return out


@registry.figure(
    "fig_echo_flood", title="Echo flood: seconds vs connections, one panel per D", tables=(TABLE,), order=65
)
def fig_echo_flood(P, languages=None, show_reference: bool = True, **_):
    """Log-log: time to echo N x D vs N, every server (median of trials), one panel per D;
    the original's 2010 values dashed, labelled with their machine."""
    d = runs(P)
    if d.empty:
        return None
    t = per_server(d)
    ds = sorted(t[Col.bytes_per_connection].unique())
    fig, axes = plt.subplots(1, len(ds), figsize=(6 * len(ds), 4.5), squeeze=False)
    ref = reference_flood() if show_reference else pd.DataFrame()
    servers = [x for x in contract.languages() if x in set(t[Col.server_language])]  # the spec's order
    colors = {s: color(s) for s in servers}  # every figure's colour for a language (figstyle)
    if not ref.empty:
        ref = ref.assign(server_language=ref[Col.server].map(reference.echo_server_language))
    for ax, D in zip(axes[0], ds):
        for s in servers:
            g = t[(t[Col.bytes_per_connection] == D) & (t[Col.server_language] == s)].sort_values("connections")
            if languages and s not in languages:
                continue
            ax.plot(g[Col.connections], g[Col.median], "-", color=colors[s], label=LANGUAGE_LABELS.get(s, s))
            for bound, face in ((False, colors[s]), (True, "none")):
                h = g[g["loadgen_bound"] == bound]
                ax.plot(h[Col.connections], h[Col.median], "o", color=colors[s], mfc=face, ls="none")
            if not ref.empty:
                r = ref[(ref[Col.server_language] == s) & (ref[Col.bytes_per_connection] == D)].sort_values(
                    "connections"
                )
                if len(r):
                    ax.plot(
                        r[Col.connections],
                        r["seconds_best_of_3"],
                        "--",
                        color=colors[s],
                        alpha=0.6,
                        label=f"{LANGUAGE_LABELS.get(s, s)}, {REF_MACHINE.split(':')[0]}" if len(r) > 1 else None,
                        marker="x" if len(r) == 1 else None,
                    )
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("concurrent connections N")
        ax.set_ylabel("seconds to echo N x D (median of trials)")
        ax.set_title(f"D = {int(D) // 1024} KiB per connection")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    foot = f"hollow: load generator at >= {LOADGEN_LIMIT:.0%} of its CPU (the time is an upper bound)"
    if show_reference:
        foot = f"dashed: the original ({REF_MACHINE}); " + foot
    fig.text(0.01, 0.005, foot, fontsize=8)
    fig.tight_layout()
    return fig


# The saturation table: (column, the raw record's field, scale). Window fields are
# harness.sockets.probe's (server sampled from /proc over the client's sending window).
SATURATION_COLUMNS = (
    ("window_s", "saturation_window_s", 1.0),
    ("user_pct", "server_cpu_user_pct", 1.0),
    ("system_pct", "server_cpu_system_pct", 1.0),
    ("ctx_switches_per_s", "server_ctx_switches_per_s", 1.0),
    ("host_ctx_switches_per_s", "host_ctx_switches_per_s", 1.0),
    ("threads", "server_threads", 1.0),
    ("rss_peak_MiB", "server_rss_peak_bytes", 2.0**-20),
    ("tcp_mem_peak_MiB", "tcp_mem_bytes_peak", 2.0**-20),
    ("sockets_used_peak", "sockets_used_peak", 1.0),
    ("client_delay_s", "client_delay_s", 1.0),
    ("load_generator_cpu_share", "client_cpu_share", 1.0),
)


def _median(g: pd.DataFrame, col: str) -> float:
    if col not in g:
        return np.nan
    v = pd.to_numeric(g[col], errors="coerce").dropna()
    return float(np.median(v)) if len(v) else np.nan


def saturation_table(P) -> pd.DataFrame:
    """One row per server and N from the saturate-mode runs (median over trials): the
    server's user and system CPU % and context switches per second over the sampled
    window, the machine's context switches per second, peaks of the server's RSS, the
    kernel's TCP memory and sockets in use, the client delay (and in how many trials the
    extra connection got no echo at all), the load generator's CPU share. Runs recorded
    before the window was sampled fall back to the server's CPU over its whole life
    (a lower bound; `cpu_over` says which) and its peak RSS from wait4."""
    d = runs(P, "saturate")
    if d.empty:
        return pd.DataFrame()
    out = []
    for (s, n), g in d.groupby(["server_language", "connections"]):
        row: dict = {"server": s, "connections": int(n), "n": len(g)}
        for name, field, scale in SATURATION_COLUMNS:
            row[name] = _median(g, field) * scale
        row["cpu_over"] = "window"
        if np.isnan(row["user_pct"]) and "server.user_cpu_s" in g and "server.wall_s" in g:
            row["user_pct"] = _median(g.assign(_v=100 * g["server.user_cpu_s"] / g["server.wall_s"]), "_v")
            row["system_pct"] = _median(g.assign(_v=100 * g["server.system_cpu_s"] / g["server.wall_s"]), "_v")
            row["cpu_over"] = "lifetime"
        if np.isnan(row["rss_peak_MiB"]):
            row["rss_peak_MiB"] = _median(g, "server.peak_rss_bytes") / 2**20
        delay = g[Col.client_delay_s] if Col.client_delay_s in g else pd.Series(np.nan, index=g.index)
        row["no_delay_echo"] = int(pd.to_numeric(delay, errors="coerce").isna().sum())
        out.append(row)
    return pd.DataFrame(out)
