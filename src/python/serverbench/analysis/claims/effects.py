"""Effect sizes across the replication record: each deciding ratio's per-sweep estimate
(claims_evidence.csv of every processed sweep of a profile), by machine kind and design,
so that the record shows how far apart sweeps put the effect, not only how often a label
came out (docs/protocol.md section 7).

`table(profile)` is one row per (sweep, claim, deciding comparison); `spread(t)` the median
and range of each comparison's sweep estimates per design and machine; `figure(t)` one
panel per claim, each deciding ratio's sweep estimates on a log axis, coloured by machine,
filled for confirmation sweeps and hollow for exploratory ones.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from serverbench import protocol
from serverbench.rawdata.columns import Col

DECIDING = ("yes", "no", "unclear")
COLUMNS = ["sweep", "machine", "design", "protocol", "id", "comparison", "config", "ratio", "result"]


def table(folders: list[Path], about: dict[str, dict]) -> pd.DataFrame:
    """One row per (sweep, claim, deciding comparison with a ratio). about: {sweep name:
    {machine, design, protocol}} (replication.record's columns)."""
    rows = []
    for f in folders:
        ev_file = f / "claims_evidence.csv"
        if not ev_file.exists() or ev_file.stat().st_size < 2:
            continue
        ev = pd.read_csv(ev_file)
        if Col.ratio not in ev or Col.result not in ev:
            continue
        ev = ev[ev[Col.result].isin(DECIDING) & pd.to_numeric(ev[Col.ratio], errors="coerce").gt(0)]
        a = about.get(f.name, {})
        for r in ev.itertuples():
            rows.append(
                [
                    f.name,
                    a.get(Col.machine),
                    a.get(Col.design),
                    a.get(Col.protocol),
                    r.claim,
                    r.comparison,
                    "" if pd.isna(r.config) else str(r.config),
                    float(r.ratio),
                    r.result,
                ]
            )
    return pd.DataFrame(rows, columns=COLUMNS)


def spread(t: pd.DataFrame) -> pd.DataFrame:
    """Per claim, comparison, configuration, design and machine: sweeps, the median of their
    ratios and the range (min, max) over them."""
    if t.empty:
        return pd.DataFrame(
            columns=["id", "comparison", "config", "design", "machine", "sweeps", "median", "min", "max"]
        )
    g = t.groupby(["id", "comparison", "config", "design", "machine"], sort=False)[Col.ratio]
    out = g.agg(sweeps="count", median="median", min="min", max="max").reset_index()
    return out


def headline(t: pd.DataFrame, cid: str, verdict_result: str, design: str) -> str:
    """The claim's comparison that most often gave `verdict_result` in the sweeps of this
    design, with the median and range of its ratio over them; "" without one."""
    g = t[(t[Col.id] == cid) & (t[Col.design] == design)]
    if g.empty:
        return ""
    counts = g.assign(hit=g[Col.result].eq(verdict_result)).groupby(["comparison", "config"], sort=False)["hit"].sum()
    comp, config = counts.idxmax()
    r = g[(g[Col.comparison] == comp) & (g[Col.config] == config)][Col.ratio]
    where = f"{comp}, {config}" if config else comp
    if len(r) == 1:
        return f"{where}: {r.iloc[0]:.3g} in its one sweep"
    return f"{where}: median {r.median():.3g}, {r.min():.3g}-{r.max():.3g} over {len(r)} sweeps"


def figure(t: pd.DataFrame):
    """Each deciding ratio's sweep estimates, one panel per claim (the protocol's order)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D

    ids = [c[Col.id] for c in protocol.load()["claims"] if c[Col.id] in set(t[Col.id])]
    machines = sorted(set(t[Col.machine].dropna()))
    colours = {m: plt.get_cmap("tab10")(i % 10) for i, m in enumerate(machines)}
    ncol = 4
    nrow = max(1, -(-len(ids) // ncol))
    fig, axes = plt.subplots(nrow, ncol, figsize=(4.2 * ncol, 3.4 * nrow), squeeze=False)
    for ax, cid in zip(axes.flat, ids):
        g = t[t[Col.id] == cid]
        keys = list(dict.fromkeys(zip(g[Col.comparison], g[Col.config])))
        for x, (comp, config) in enumerate(keys):
            k = g[(g[Col.comparison] == comp) & (g[Col.config] == config)]
            for design, filled in (("exploratory", False), ("confirmation", True)):
                d = k[k[Col.design] == design]
                jitter = np.linspace(-0.2, 0.2, len(d)) if len(d) > 1 else np.zeros(len(d))
                ax.scatter(
                    x + jitter,
                    d[Col.ratio],
                    s=12,
                    facecolors=[colours.get(m, "0.5") for m in d[Col.machine]] if filled else "none",
                    edgecolors=[colours.get(m, "0.5") for m in d[Col.machine]],
                    linewidths=0.8,
                )
        ax.axhline(1.0, color="0.4", lw=0.8, ls=":")
        ax.set_yscale("log")
        ax.set_title(cid, fontsize=9)
        ax.set_xticks(range(len(keys)), [f"{_cut(c)}\n{_cut(cfg)}" for c, cfg in keys], rotation=90, fontsize=5)
        ax.tick_params(axis="y", labelsize=7)
    for ax in list(axes.flat)[len(ids) :]:
        ax.set_visible(False)
    handles = [Line2D([], [], marker="o", ls="", color=c, label=m) for m, c in colours.items()]
    handles += [
        Line2D([], [], marker="o", ls="", color="0.3", label="confirmation sweep"),
        Line2D([], [], marker="o", ls="", color="0.3", markerfacecolor="none", label="exploratory sweep"),
    ]
    fig.suptitle("Each deciding ratio in each committed sweep (log scale; 1 dotted)", y=0.998, fontsize=10)
    fig.legend(
        handles=handles, loc="upper center", bbox_to_anchor=(0.5, 0.985), ncol=len(handles), fontsize=8, frameon=False
    )
    fig.subplots_adjust(left=0.05, right=0.99, top=0.95, bottom=0.06, hspace=1.1, wspace=0.25)
    return fig


def _cut(text: str, width: int = 26) -> str:
    """A tick label short enough for a panel of its own (the full names are in the table)."""
    return text if len(text) <= width else text[: width - 1] + "…"
