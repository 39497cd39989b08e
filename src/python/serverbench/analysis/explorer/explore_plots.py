"""Figures for looking rather than reading: the trials behind each median, and two or
more sweeps overlaid.

* trial_distributions(runs, table): every trial of every configuration as a point (strip),
  a violin, or an ECDF per language: where a median hides noise, outliers or two modes.
* distribution_appendix(sweep): one such figure per table of a sweep, for an appendix of
  the report (`figures` is a list of (table, Figure)).
* overlay(sweeps, table): the medians of several sweeps on one figure, each sweep its
  own line style, every trial a faint dot.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd
import seaborn as sns

from serverbench import catalog
from serverbench.analysis.explorer import explore
from serverbench.analysis.plotting.figstyle import COLORS
from serverbench.rawdata.columns import Col

KINDS = ("strip", "violin", "ecdf")
LINESTYLES = ("-", "--", ":", "-.")


def languages_in(present) -> list[str]:
    """The languages present, the known ones in the catalog's order and any other (a
    runtime setting such as go[gc=nogreentea], a language not in the spec) after them,
    sorted, so that no sweep's language is dropped or fails the plot."""
    return catalog.ordered(present)


MARKERS = ("o", "s", "^", "D")


def _fmt(v) -> str:
    if isinstance(v, float) and v.is_integer():
        v = int(v)
    if isinstance(v, int) and v >= 10_000:
        return f"{v:,}"
    return str(v)


def config_labels(d: pd.DataFrame, table: str) -> pd.Series:
    """A short label per run for the parameters that vary in `d` (plus cores if it varies)."""
    cols = [c for c in explore.param_columns(d, table) if d[c].nunique(dropna=True) > 1]
    if Col.cores in d and d[Col.cores].nunique() > 1:
        cols.append("cores")
    if not cols:
        return pd.Series(["all"] * len(d), index=d.index)
    short = {
        "message_bytes": "B",
        "repetitions": "R",
        "processes": "N",
        "pairs": "P",
        "cores": "cores",
        "payload": "",
        "duration_s": "s",
    }

    def one(c, v):
        name = short.get(c, c)
        return f"{name}={_fmt(v)}" if name else _fmt(v)

    return d[cols].apply(lambda r: " ".join(one(c, r[c]) for c in cols), axis=1)


def _order_labels(d: pd.DataFrame, table: str) -> list[str]:
    cols = [c for c in explore.param_columns(d, table) if d[c].nunique(dropna=True) > 1]
    if Col.cores in d and d[Col.cores].nunique() > 1:
        cols.append("cores")
    return list(d.sort_values(cols)[Col.config].drop_duplicates()) if cols else ["all"]


def trial_distributions(
    runs: pd.DataFrame,
    table: str,
    metric: str | None = None,
    kind: str = "strip",
    log: bool = True,
    title: str | None = None,
    ax=None,
):
    """Each configuration's trials (ok, not warm-up) of one table, coloured by language."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    metric = metric or explore.default_metric(table)
    d = runs[(runs[Col.table] == table) & (runs[Col.status] == "ok") & ~runs[Col.warmup].astype(bool)]
    if metric not in d:
        d = d.iloc[0:0]
    d = d[d[metric].notna()] if len(d) else d
    if ax is None:
        fig, ax = plt.subplots(figsize=(9, 4.2), layout="constrained")
    else:
        fig = ax.figure
    if d.empty:
        ax.text(0.5, 0.5, f"no ok {table} runs with {metric}", ha="center", va="center", transform=ax.transAxes)
        ax.set_axis_off()
        return fig
    d = d.assign(config=config_labels(d, table).to_numpy())
    langs = languages_in(d[Col.language].unique())
    spare = iter(sns.color_palette("husl", len(langs)))
    palette = {lang: COLORS.get(lang) or next(spare) for lang in langs}  # the figures' colours (figstyle)
    order = _order_labels(d, table)
    if kind == "ecdf":
        sns.ecdfplot(data=d, x=metric, hue="language", hue_order=langs, palette=palette, ax=ax, log_scale=log)
        ax.set_ylabel("fraction of trials <= x")
    else:
        common = dict(
            data=d, x="config", y=metric, hue="language", hue_order=langs, palette=palette, order=order, ax=ax
        )
        if kind == "violin":
            sns.violinplot(
                **common,
                log_scale=log,
                inner=None,
                cut=0,
                density_norm="width",
                linewidth=0.6,
                alpha=0.35,
                legend=False,
            )
        sns.stripplot(
            **common,
            dodge=True,
            jitter=0.15,
            size=5,
            alpha=0.85,
            log_scale=log if kind == "strip" else None,
        )
        med = d.groupby(["config", "language"])[metric].median()
        n_l = len(langs)
        width = 0.8 / n_l
        for (cfg, lang), m in med.items():
            if cfg not in order:
                continue
            xc = order.index(cfg) - 0.4 + width * (langs.index(lang) + 0.5)
            ax.hlines(m, xc - width * 0.4, xc + width * 0.4, color="black", lw=1.2)
        ax.set_xlim(-0.5, len(order) - 0.5)
        ax.set_xticks(range(len(order)), order)
        ax.set_xlabel("configuration (black bar: median of the trials)")
        ax.tick_params(axis="x", labelrotation=20 if len(order) > 4 else 0)
    ax.set_title(title or f"{table}: every trial, {metric}")
    ax.grid(True, which="major", alpha=0.3)
    return fig


def distribution_appendix(sweep, tables=None, kind: str = "strip") -> list:
    """[(table, Figure)] for every table of a sweep (a SweepView, a sweep id or a folder).
    For the report's appendix: where a median hides the spread of its trials."""
    s = sweep if isinstance(sweep, explore.SweepView) else explore.load_sweep(sweep)
    present = [t for t in explore.tables() if (s.runs[Col.table] == t).any()]
    out = []
    for t in tables or present:
        if t not in present:
            continue
        fig = trial_distributions(s.runs, t, kind=kind, title=f"{s.sweep_id} - {t}: every trial")
        out.append((t, fig))
    return out


def overlay(sweeps, table: str, metric: str | None = None, log: bool = True, common_only: bool = True):
    """Medians vs the table's x parameter, one colour per language, one line style per
    sweep; every ok trial as a faint dot. Other parameters: each value its own line.
    common_only: only the configurations every sweep measured (if there are any)."""
    metric = metric or explore.default_metric(table)
    keep = None
    if common_only and len(sweeps) > 1:
        sets = []
        for s in sweeps:
            d = s.ok()
            d = d[d[Col.table] == table]
            sets.append(set(explore.config_key(d, table)) if len(d) else set())
        keep = set.intersection(*sets) or None
    xcol = explore.x_axis(table)
    fig, ax = plt.subplots(figsize=(8, 4.5), layout="constrained")
    present = set().union(*(set(s.ok()[Col.language].dropna()) for s in sweeps))
    every = languages_in(present | set(catalog.presentation_order()))
    spare = iter(sns.color_palette("husl", len(every)))
    palette = {lang: COLORS.get(lang) or next(spare) for lang in every}  # the figures' colours (figstyle)
    drawn = 0
    for i, s in enumerate(sweeps):
        d = s.ok()
        d = d[(d[Col.table] == table)]
        if d.empty or metric not in d or xcol not in d:
            continue
        d = d[d[metric].notna() & d[xcol].notna()]
        if keep is not None:
            d = d[explore.config_key(d, table).isin(keep).to_numpy()]
        if d.empty:
            continue
        others = [
            c
            for c in explore.param_columns(d, table)
            if c != xcol and c not in explore.RATE_INVARIANT and d[c].nunique() > 1
        ] + (["cores"] if d[Col.cores].nunique() > 1 else [])
        groups = d.groupby(["language", *others], dropna=False) if others else d.groupby(["language"])
        for key, g in groups:
            key = key if isinstance(key, tuple) else (key,)
            lang = key[0]
            extra = " ".join(f"{c}={_fmt(v)}" for c, v in zip(others, key[1:]))
            med = g.groupby(xcol)[metric].median().sort_index()
            ax.plot(
                med.index,
                med.to_numpy(),
                linestyle=LINESTYLES[i % 4],
                marker=MARKERS[i % 4],
                color=palette.get(lang),
                label=f"{lang} {extra} [{s.sweep_id}]".replace("  ", " "),
            )
            ax.scatter(g[xcol], g[metric], color=palette.get(lang), alpha=0.25, s=12)
            drawn += 1
    if not drawn:
        ax.text(
            0.5,
            0.5,
            f"no ok {table} runs with {metric} in these sweeps",
            ha="center",
            va="center",
            transform=ax.transAxes,
        )
        ax.set_axis_off()
        return fig
    if log:
        ax.set_xscale("log")
        ax.set_yscale("log")
    ax.set_xlabel(xcol)
    ax.set_ylabel(metric)
    ax.set_title(f"{table}: medians (lines) and trials (dots); line style = sweep")
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize=7, loc="best")
    return fig


__all__ = ["trial_distributions", "distribution_appendix", "overlay", "config_labels", "KINDS"]
