"""The IM figures (docs/im.md), from the raw logs' runs (benchmarks/im/tables.py): the
latency-throughput curves of the rate search, memory and login per server, group fan-out
and chaos. Our servers are solid lines and filled marks; the production servers (ngircd,
InspIRCd) are the anchor rows, drawn dashed with hollow-centred marks; a run the
generator limited is a hollow mark (not the server's result) and never joins a line. Each
figure's registered title is its caption and the alt text of its PNG in the report."""

from __future__ import annotations

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.lines import Line2D
from matplotlib.ticker import FuncFormatter

from serverbench import protocol
from serverbench.analysis.plotting.figstyle import _caption, _style, color, footer, legend, marker
from serverbench.analysis.reading import registry
from serverbench.analysis.reading.process import LANGUAGE_LABELS
from serverbench.benchmarks.im import claims as C
from serverbench.benchmarks.im import design as D
from serverbench.benchmarks.im import parts_v5 as PV
from serverbench.benchmarks.im import tables as T
from serverbench.benchmarks.im.columns import Col

matplotlib.use("Agg")


def _label(s: str) -> str:
    return LANGUAGE_LABELS.get(s, s)


def _anchor(s: str) -> bool:
    return s in T.production()


def _line_style(s: str) -> dict:
    """Ours solid; the production anchors dashed and thinner."""
    return {"ls": "--", "lw": 1.2} if _anchor(s) else {"ls": "-", "lw": 1.6}


def curve(P) -> pd.DataFrame:
    """One row per rate search step (server, rate, p50, p99, generator_limited, ok); a sweep
    without a search falls back to the latency part's medians per rate."""
    from serverbench.benchmarks.im import design

    if design.is_v5(P):  # protocol 5's searches: fig_im5_search draws them (benchmarks/im/report_v5.py)
        return pd.DataFrame()
    d = T.search_steps(P)
    if d.empty:
        d = T.latency_part(P)
        if d.empty:
            return pd.DataFrame()
        d = d[d["chaos_ms"] == 0]
        d = (
            d.assign(p99=T.num(d, "latency_p99_s"), p50=T.num(d, "latency_p50_s"), ok=d[Col.is_ok].astype(bool))
            .groupby(["server_language", "rate_per_s", "generator_limited", "ok"], as_index=False)[["p99", "p50"]]
            .median()
        )
        return d
    return d.assign(p50=T.num(d, "latency_p50_s"), ok=d[Col.is_ok].astype(bool))[
        ["server_language", "rate_per_s", "p99", "p50", "generator_limited", "ok"]
    ]


def _handles(servers) -> list:
    h = [
        Line2D(
            [],
            [],
            color=color(s),
            marker=marker(s),
            label=_label(s) + (" (production)" if _anchor(s) else ""),
            **_line_style(s),
        )
        for s in servers
    ]
    h.append(
        Line2D([], [], color="0.3", marker="o", mfc="none", ls="none", label="generator-limited run (not the server's)")
    )
    return h


@registry.figure(
    "fig_im_latency",
    title="IM: delivery latency (p99 and p50) against offered rate, one line per server, log axes; the SLO "
    "dashed across; production servers (ngIRCd, InspIRCd) dashed; hollow marks: runs the load generator limited",
    tables=(T.TABLE, T.SEARCH_TABLE),
    order=80,
)
def fig_im_latency(P, languages=None, **_):
    d = curve(P)
    if d.empty:
        return None
    _style()
    servers = [s for s in T.servers(d) if not languages or s in languages or _anchor(s)]
    slo, sens = C.slos()
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.8), sharex=True)
    for ax, col, what in ((axes[0], "p99", "p99"), (axes[1], "p50", "p50 (median)")):
        for s in servers:
            g = d[d[Col.server_language] == s].sort_values("rate_per_s")
            ok = g[g[Col.ok] & ~g["generator_limited"] & g[col].notna()]
            ax.plot(ok[Col.rate_per_s], ok[col] * 1e3, color=color(s), marker=marker(s), ms=5, **_line_style(s))
            if _anchor(s):  # the anchors' marks hollow-centred, ours filled
                ax.plot(ok[Col.rate_per_s], ok[col] * 1e3, ls="none", marker=marker(s), ms=3, color="white")
            lim = g[g["generator_limited"] & g[col].notna()]
            ax.plot(lim[Col.rate_per_s], lim[col] * 1e3, ls="none", marker="o", ms=7, mfc="none", color=color(s))
        if col == "p99":
            ax.axhline(slo * 1e3, color="0.2", ls="--", lw=1)
            ax.text(
                0.01, slo * 1e3, f"SLO {slo * 1e3:g} ms", va="bottom", fontsize=8, transform=ax.get_yaxis_transform()
            )
            for x in sens:
                ax.axhline(x * 1e3, color="0.5", ls=":", lw=0.8)
        ax.set_xscale("log")
        ax.set_yscale("log")
        for axis in (ax.xaxis, ax.yaxis):  # plain numbers (1,000; 10), not powers of ten
            axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.10g}"))
        ax.set_xlabel("offered rate (messages per second)")
        ax.set_ylabel(f"{what} delivery latency (ms)")
        ax.set_title(f"{what} latency against offered rate")
    rect = footer(
        fig,
        _caption(
            P,
            "one run per rate (the rate search); dotted: sensitivity SLOs "
            + ", ".join(f"{x * 1e3:g}" for x in sens)
            + " ms",
        ),
        legend_rows=2,
    )
    legend(fig, _handles(servers), ncol=4)
    fig.tight_layout(rect=(0, rect, 1, 1))
    return fig


def _bars(ax, table: pd.DataFrame, value: str, points: pd.DataFrame | None = None, fmt="{:,.0f}") -> None:
    """One bar per server (the median), its rounds as dots; anchors hatched."""
    for i, (_, r) in enumerate(table.iterrows()):
        s = r[Col.server_language]
        ax.bar(i, r[value], color=color(s), alpha=0.85, hatch="//" if _anchor(s) else None, edgecolor="0.2")
        if points is not None:
            p = points[points[Col.server_language] == s]["value"]
            ax.plot(np.full(len(p), i), p, "k.", ms=4)
        if pd.notna(r[value]):  # a search that stopped at its ceiling held at least that many
            text = ("≥" if r.get("at_least") is True else "") + fmt.format(r[value])
            ax.annotate(text, (i, r[value]), ha="center", va="bottom", fontsize=8)
    ax.set_xticks(range(len(table)), [_label(s) for s in table[Col.server_language]], rotation=30, ha="right")


def memory_login(P) -> dict[str, pd.DataFrame]:
    """The per-server numbers the capacity figure and the report show: bytes per idle client
    per round (`bytes`), the largest N held (`held`), login_s per round at each N (`login`)."""
    # protocol 5's IM2 decides by the cap: the idle part's pair is its live bytes' (1,000 and 10,000)
    low, high = T.idle_pair(P, tuple(protocol.claim("IM2").get(Col.clients, (1000, 10000))))
    out = {"bytes": T.idle_bytes_per_client(P, low, high), "held": T.largest_held(P), "pair": (low, high)}
    lg = T.valid(T.runs(P, "login"))
    out["login"] = (
        pd.DataFrame(
            {
                "server_language": lg[Col.server_language],
                "clients": lg[Col.clients],
                "trial": lg[Col.trial],
                "value": T.num(lg, "login_s"),
            }
        ).dropna()
        if not lg.empty
        else pd.DataFrame(columns=["server_language", "clients", "trial", "value"])
    )
    return out


def _median_by(points: pd.DataFrame, order: list[str]) -> pd.DataFrame:
    m = points.groupby("server_language")["value"].median()
    return pd.DataFrame({"server_language": order, "median": [m.get(s, np.nan) for s in order]})


def cap_held(P) -> tuple[int, pd.DataFrame]:
    """Protocol 5's IM2 measure: (IM2's deciding cap in bytes, one row per server as shipped:
    `largest_n`, the idle clients its memory search held within that cap, and `at_least`,
    whether the search stopped at its ceiling). No rows without memory searches."""
    cap = int(D.claim("IM2")["cap_bytes"])
    rows = []
    for (s, b), r in PV.memory_counts(P).items():
        if int(b) == cap and " " not in s and (n := r.value) is not None:
            rows.append({"server_language": s, "largest_n": n, "at_least": r.bound == "at_least"})
    return cap, pd.DataFrame(rows, columns=["server_language", "largest_n", "at_least"])


@registry.figure(
    "fig_im_capacity",
    title="IM: memory per idle client (protocol 5: live bytes after a full collection, RSS for the daemons; "
    "protocol 3: server RSS), from 1,000 to 10,000 idle clients; the idle clients held (protocol 5: within IM2's "
    "memory cap; protocol 3: the largest N run); and the login-storm time, per server (bars: median of rounds; "
    "dots: rounds; hatched: production servers)",
    tables=(T.TABLE,),
    order=81,
)
def fig_im_capacity(P, **_):
    m = memory_login(P)
    rss, largest, lg, (low, high) = m["bytes"], m["held"], m["login"], m["pair"]
    v5 = D.is_v5(P)  # protocol 5 judges IM2 by the cap, with live bytes beside: RSS is a JVM's pre-sized heap
    cap, held = cap_held(P) if v5 else (None, largest)
    per_client = PV.live_bytes_rounds(P) if v5 else rss
    if per_client.empty and held.empty and lg.empty:
        return None
    _style()
    fig, axes = plt.subplots(1, 3, figsize=(13, 4.6))
    order = T.servers(pd.concat([per_client, held, lg], ignore_index=True))
    _bars(axes[0], _median_by(per_client, order), "median", per_client)
    what = "live bytes (daemons: RSS)" if v5 else "bytes"
    axes[0].set_ylabel(f"{what} per idle client (N = {low:,} to {high:,})")
    axes[0].set_title("live memory per idle client" if v5 else "memory per idle client")
    held = held.set_index("server_language").reindex(order).reset_index()
    _bars(axes[1], held, "largest_n")
    for i, (_, r) in enumerate(held.iterrows()):
        if not v5 and pd.notna(r["failed_n"]):
            axes[1].annotate(
                f"fails at {int(r['failed_n']):,}\n({r[Col.failure_status]})",
                (i, 0),
                ha="center",
                va="bottom",
                fontsize=7,
                rotation=90,
            )
    if cap is not None:
        axes[1].set_ylabel(f"idle clients held within {cap // 2**20} MiB")
        axes[1].set_title(f"idle clients within a {cap // 2**20} MiB cap (IM2)")
    else:
        axes[1].set_ylabel("largest N of idle clients held")
        axes[1].set_title("idle clients held")
    n = int(T.pick(lg[Col.clients], protocol.claim("IM3")[Col.clients])) if not lg.empty else None
    at_n = lg[lg[Col.clients] == n] if n else lg
    _bars(axes[2], _median_by(at_n, order), "median", at_n, fmt="{:.3g}")
    every = T.runs(P, "login")
    ran = set(every.loc[every[Col.clients] == n, "server_language"]) if n and not every.empty else set()
    for i, s in enumerate(order):  # a server whose storms ran and never registered every client
        if s in ran - set(at_n[Col.server_language]):
            axes[2].annotate("no storm finished", (i, 0), ha="center", va="bottom", fontsize=7, rotation=90)
    axes[2].set_ylabel("seconds to connect and register N clients")
    axes[2].set_title(f"login storm, N = {n:,}" if n else "login storm")
    rect = footer(fig, _caption(P, "a run the generator limited or with a client left unregistered is left out"))
    fig.tight_layout(rect=(0, rect, 1, 1))
    return fig


def chaos_table(P) -> pd.DataFrame:
    """Per server of the chaos stage: rate, rounds, throughput kept (median of per-round
    chaos / no-chaos deliveries_per_s), messages lost with chaos (total, rounds with a loss),
    sessions killed; the production servers, which have no session processes, named."""
    d = T.valid(T.chaos_stage(P))
    rows = []
    for s, g in d.groupby("server_language") if not d.empty else []:
        on, off = g[g["chaos_ms"] > 0], g[g["chaos_ms"] == 0]
        a, b = T.per_round(on, "deliveries_per_s"), T.per_round(off, "deliveries_per_s")
        k = a.merge(b, on="trial", suffixes=("_on", "_off"))
        lost = T.num(on, "messages_lost")
        rows.append(
            {
                "server_language": s,
                "rate_per_s": float(on[Col.rate_per_s].median()) if len(on) else np.nan,
                "rounds": int(len(k)),
                "throughput_kept": float((k["value_on"] / k["value_off"]).median()) if len(k) else np.nan,
                "messages_lost": int(lost.fillna(0).sum()),
                "rounds_with_loss": int((lost > 0).sum()),
                "sessions_killed": float(T.num(on, T.SERVER_KILLED).sum()) if len(on) else np.nan,
                "session_processes": "yes",
            }
        )
    for s in T.production():
        rows.append({"server_language": s, "session_processes": "none (no chaos: nothing to kill)"})
    t = pd.DataFrame(rows)
    order = T.servers(t)
    return t.set_index("server_language").loc[order].reset_index()


def fanout_table(P) -> pd.DataFrame:
    d = T.valid(T.runs(P, "fanout"))
    if d.empty:
        return pd.DataFrame()
    d = d.assign(value=T.num(d, "deliveries_per_s"))
    return d.groupby(["server_language", "channel_size"], as_index=False)["value"].median()


@registry.figure(
    "fig_im_fanout_chaos",
    title="IM: group fan-out deliveries per second by channel size, and chaos (a chat-session process killed "
    "every interval): throughput kept (with chaos / without, median of rounds) and messages lost, per server",
    tables=(T.TABLE,),
    order=82,
)
def fig_im_fanout_chaos(P, **_):
    fan, ch = fanout_table(P), chaos_table(P)
    ch = ch[ch["session_processes"] == "yes"] if not ch.empty else ch
    if fan.empty and ch.empty:
        return None
    _style()
    fig, axes = plt.subplots(1, 3, figsize=(13, 4.6))
    if not fan.empty:
        order = T.servers(fan)
        sizes = sorted(fan[Col.channel_size].unique())
        w = 0.8 / len(sizes)
        for j, k in enumerate(sizes):
            for i, s in enumerate(order):
                v = fan[(fan[Col.server_language] == s) & (fan[Col.channel_size] == k)]["value"]
                if len(v):
                    axes[0].bar(
                        i + (j - (len(sizes) - 1) / 2) * w,
                        v.iloc[0],
                        w,
                        color=color(s),
                        alpha=0.5 + 0.5 * j / max(len(sizes) - 1, 1),
                        edgecolor="0.2",
                        hatch="//" if _anchor(s) else None,
                    )
        axes[0].set_xticks(range(len(order)), [_label(s) for s in order], rotation=30, ha="right")
        axes[0].set_yscale("log")
        axes[0].set_title("fan-out: channel sizes " + ", ".join(f"{int(k):,}" for k in sizes) + " (lighter: smaller)")
    axes[0].set_ylabel("deliveries per second (median)")
    if not ch.empty:
        _bars(axes[1], ch, "throughput_kept", fmt="{:.2f}")
        axes[1].axhline(1.0, color="0.3", lw=0.8)
        _bars(axes[2], ch, "messages_lost")
    axes[1].set_ylabel("deliveries/s with chaos / without")
    axes[1].set_title("chaos: throughput kept")
    axes[2].set_ylabel("messages lost with chaos (all rounds)")
    axes[2].set_title("chaos: messages lost")
    none = ", ".join(_label(s) for s in T.production())
    rect = footer(fig, _caption(P, f"{none}: no session processes, so no chaos run (a design choice, shown)"))
    fig.tight_layout(rect=(0, rect, 1, 1))
    return fig
