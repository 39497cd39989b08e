"""The IM report's blocks for a sweep of protocol 5's design (benchmarks/im/design.py), after
the section's common blocks (benchmarks/im/report.py): the generator's certified capacity
against every server's rate, IM2 by cap and live bytes, IM5 with its positive control,
fan-out at saturation, every re-run with its reason and every replicated run; and the
latency-throughput figure of the replicated steps with the capacity line."""

from __future__ import annotations

import matplotlib
import matplotlib.pyplot as plt

from serverbench.analysis.plotting.figstyle import _caption, _style, color, footer, marker
from serverbench.analysis.reading import registry
from serverbench.benchmarks.im import design as D
from serverbench.benchmarks.im import parts_v5 as PV
from serverbench.benchmarks.im import tables as T
from serverbench.benchmarks.im import tables_v5 as V
from serverbench.benchmarks.im.columns import Col

matplotlib.use("Agg")


def blocks(P) -> list:
    slo = D.slos()[0]
    headroom = D.im()["generator"][Col.headroom]
    c = D.im()["chaos"]
    cap = V.capacity(P)
    fast = max((r.value or 0 for r in V.rates(P).values()), default=0)
    goal = (
        f"the certified capacity is {V.rate_text(cap)}/s, {cap.value / fast:.3g} x the fastest server's rate"
        if cap and cap.value and fast
        else "the generator's capacity was not certified in this sweep"
    )
    searched = bool(V.rates(P) or cap or V.fanout_rates(P))  # a storm piece runs no rate search
    how = (
        f"replicated rate searches of {D.search()[Col.step_runs]} runs a step, bisected to a ratio of "
        f"{D.search()[Col.bisect_ratio]}; "
        if searched
        else ""
    )
    out: list = [
        f"**Protocol 5's design.** This sweep ran the IM design of {D.label()} ({D.doc()}, section 13): "
        f"{how}IM2, IM4 and IM5 are judged by its rules.",
    ]
    if V.rates(P) or cap:  # a piece that ran no rate search (fan-out) shows no empty capacity table
        out += [
            f"**The generator's capacity** (the null sink's search) against every server's sustainable rate at p99 "
            f"<= {slo * 1e3:g} ms. A rate at or above {headroom} x the capacity is only 'at least' (censored), "
            f"as is one at the grid's top; {goal} (the goal: at least 3 x and at least 100,000/s). The capacity "
            "search counts a run the generator limited as the failure it looks for and does not run it again; a "
            "server's search re-runs such a run (at most twice), so a server can pass a step above the capacity "
            "(a share above 1), censored all the same. The 5 and 20 ms columns are shown, never deciding, and "
            "'at least' by the same rule:",
            PV.capacity_table(P),
            registry.FigureRef("fig_im5_search"),
        ]
    parts = (
        (
            "**IM2: idle clients held within each memory cap** (one probe a run, bisected to a ratio of "
            f"{D.im()['memory'][Col.bisect_ratio]}; 'at least' at {D.im()['memory']['clients_max']:,}), and live bytes "
            "per client after a forced full collection ((live bytes at 10,000 - at 1,000) / 9,000, median of "
            "rounds):",
            PV.memory_table(P),
        ),
        (
            f"**IM5: chaos** ({c['target']} IM process, {c['pick']} pick). Throughput kept = the sustainable rate "
            f"with chaos at {c['search_kills_per_s']} kills/s / without; messages lost and lost per kill at "
            + ", ".join(f"{k:g}" for k in c["kills_per_s"])
            + f" kills/s; the positive control kills a process with queued messages at "
            f"{c['queued_control_kills_per_s']}/s and must lose some, else IM5(b) is unclear (the instrument could "
            "not see a loss). session_kills_lost is what IM5(b) judges: the messages the generator's ledger lost "
            f"when {c['loss_target']} processes were killed at random at {c['queued_control_kills_per_s']}/s; "
            "control_lost is the ledger's count in the control, control_dropped the queued messages the server "
            "says its kills discarded. The loss at each kill rate counts kills of any process, and a killed "
            "connection is a client gone, so it loses messages by construction; for the same reason the server "
            "carries less load under chaos, and kept can exceed 1:",
            PV.chaos_table(P),
        ),
        (
            "**Fan-out at saturation**: each channel size's sustainable messages per second and deliveries per "
            "second (rate x (size - 1)), against the generator's own capacity at that size (the null sink's "
            f"search; a rate at or above {headroom} x it is only 'at least'); figure-only:",
            PV.fanout_table(P),
        ),
    )
    for words, table in parts:
        out += [words, table] if not table.empty else []  # a part this piece did not run: not an empty table
    re = PV.reruns_table(P)
    out += (
        [f"**Re-runs** ({len(re)}): every attempt that was run again, with its reason:", re]
        if not re.empty
        else ["**Re-runs**: none."]
    )
    return out + ["**Every run** of every search step (each attempt; only final attempts count):", PV.runs_table(P)]


@registry.figure(
    "fig_im5_search",
    title="IM (protocol 5): p99 delivery latency against offered rate, every run of the replicated search's steps "
    "(dots) and each step's median (line), one colour per server; the SLO dashed across, the generator's certified "
    "capacity and its headroom as vertical lines",
    tables=(),  # no table: shown only where the section places it (a protocol-5 sweep), never in "Figures"
    order=83,
)
def fig_im5_search(P, **_):
    if not D.is_v5(P):
        return None
    a = V.attempts(P, V.RATE)
    if a.empty:
        return None
    a = a[a["final"] & (a["phase"] != "scout")]
    _style()
    fig, ax = plt.subplots(figsize=(9, 5))
    slo = D.slos()[0]
    for row, g in a.groupby("row", sort=False):
        s = g[Col.server_language].iloc[0]
        ls = ":" if row.endswith(V.NODELAY_ROW) else "--" if s in T.production() else "-"
        ax.plot(g[Col.rate_per_s], g["p99"] * 1e3, ".", color=color(s), alpha=0.5, ms=4)
        m = g.groupby("rate_per_s")["p99"].median().sort_index()
        ax.plot(m.index, m.to_numpy() * 1e3, ls=ls, marker=marker(s), color=color(s), label=g["row_label"].iloc[0])
    ax.axhline(slo * 1e3, color="0.2", ls="--", lw=1)
    cap = V.capacity(P)
    if cap and (value := cap.value):
        h = float(D.im()["generator"][Col.headroom])
        ax.axvline(value, color="0.1", lw=1.2)
        ax.axvline(h * value, color="0.4", lw=1, ls=":")
        ax.text(value, 0.98, " capacity", transform=ax.get_xaxis_transform(), va="top", fontsize=8)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("offered rate (messages per second)")
    ax.set_ylabel("p99 delivery latency (ms)")
    ax.legend(fontsize=7, ncol=2)
    rect = footer(fig, _caption(P, "final attempts of the replicated steps; dotted vertical: the headroom"))
    fig.tight_layout(rect=(0, rect, 1, 1))
    return fig


__all__ = ["blocks", "fig_im5_search"]
