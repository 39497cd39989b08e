"""Shared look of the figures: one colour and marker per language, median lines with
interval bars, the paper's values as dashed lines, panel notes and captions."""

from __future__ import annotations

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402

from serverbench import catalog  # noqa: E402
from serverbench.analysis.reading.process import LANGUAGE_LABELS, Processed  # noqa: E402
from serverbench.rawdata.columns import Col

# Each language's colour and marker (spec/cli.json, languages.<lang>.plot; a build of it such
# as go[gc=nogreentea] has its own, in its setting's `plot`)
COLORS = catalog.StyleMap("color")
MARKERS = catalog.StyleMap("marker")
FIG3_SIZES = (5000, 10000, 50000)
FIG3A_BYTES = 5000
FIG3A_SOURCE = (
    "(a): this sweep's runs only; the paper's (a) is copied from da Silva, Lins & dos Santos (2013), "
    "whose values were not published"
)
FIG5_CORES = (1, 2, 4, 8, 16, 32)
SPAWN_METRICS = {
    "all_ready_s": "until all processes are running",
    "spawn_call_s": "spawn calls only (as the original code timed)",
}
PAPER_LABEL = "paper (Valkov et al. 2018)"


def color(lang: str) -> str:
    return COLORS.get(lang, "0.4")


def marker(lang: str) -> str:
    return MARKERS.get(lang, "o")


def _style():
    plt.rcParams.update(
        {
            "figure.dpi": 110,
            "savefig.dpi": 150,
            "axes.grid": True,
            "grid.alpha": 0.3,
            "axes.spines.top": False,
            "axes.spines.right": False,
            "font.size": 9,
            "axes.titlesize": 10,
            "legend.fontsize": 8,
        }
    )


def _legend_handles(langs, show_reference, measured_label="this sweep: median with interval (see caption)"):
    h = [
        Line2D([], [], color=color(lang), marker=marker(lang), label=LANGUAGE_LABELS.get(lang, lang)) for lang in langs
    ]
    h.append(Line2D([], [], color="0.3", marker="o", label=measured_label))
    if show_reference:
        h.append(Line2D([], [], color="0.3", ls="--", marker="o", mfc="none", label=PAPER_LABEL))
    return h


# each language's shift along a log x axis where several share a point (plot.dodge; 1 if none)
DODGE = catalog.StyleMap("dodge")


def _plot_measured(ax, x, med, lo, hi, lang, label=None, dodge: bool = False):
    """Median line with interval bars; dodge=True shifts each language a little along a
    log x axis so that bars at the same x do not hide each other."""
    x, med, lo, hi = map(lambda a: np.asarray(a, dtype=float), (x, med, lo, hi))
    if dodge:
        x = x * DODGE.get(lang, 1.0)
    order = np.argsort(x)
    x, med, lo, hi = x[order], med[order], lo[order], hi[order]
    ax.plot(x, med, color=color(lang), marker=marker(lang), ms=4.5, lw=1.5, label=label)
    yerr = np.vstack([np.clip(med - lo, 0, None), np.clip(hi - med, 0, None)])
    ax.errorbar(x, med, yerr=yerr, fmt="none", ecolor=color(lang), elinewidth=1, capsize=2.5, alpha=0.8)


def _plot_reference(ax, x, y, lang, positive_only=False):
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    m = np.isfinite(y) & (y > 0 if positive_only else np.isfinite(y))
    order = np.argsort(x[m])
    ax.plot(
        x[m][order], y[m][order], ls="--", lw=1, color=color(lang), marker=marker(lang), mfc="none", ms=5, alpha=0.75
    )
    return int((~m & np.isfinite(y)).sum())


def _panel_note(ax, msg: str) -> None:
    """A note on a panel that has no measured data (it never silently vanishes)."""
    ax.text(
        0.5,
        0.97,
        msg,
        transform=ax.transAxes,
        ha="center",
        va="top",
        color="0.2",
        fontsize=8,
        bbox=dict(boxstyle="round", fc="0.96", ec="0.6", alpha=0.85),
        zorder=5,
    )


def plain_ratio_ticks(ax) -> None:
    """A log-scaled ratio y axis labelled in plain numbers (0.6, 1, 1.5) instead of matplotlib's
    default for a range within one decade, 6x10^-1 and 1.5x10^0 on every minor tick."""
    from matplotlib.ticker import FuncFormatter

    fmt = FuncFormatter(lambda v, _pos: f"{v:.3g}")
    ax.yaxis.set_major_formatter(fmt)
    ax.yaxis.set_minor_formatter(fmt)


def _num(x) -> str:
    return "none" if x is None or pd.isna(x) else f"{int(x):,}"


def _ci_note(s: pd.DataFrame) -> str:
    """What the bars are, honestly: with fewer than 6 trials the 95% order-statistic interval
    does not exist and the bars are [min, max] with a lower coverage."""
    if s is None or s.empty or "n" not in s:
        return ""
    n = s["n"][s["n"] > 0]
    if n.empty:
        return ""
    lo, hi = int(n.min()), int(n.max())
    trials = f"{lo}" if lo == hi else f"{lo}-{hi}"
    if lo >= 6:
        return f"{trials} trials per point; bars: 95% CI of the median"
    lv = s.loc[s["n"] == lo, "ci_level"].min()
    return f"{trials} trials per point; bars: [min, max] where n < 6 (coverage {lv:.0%} at n = {lo})"


FOOTER_PT = 8.5  # the footer's font: legible printed at the page's width


def footer(fig, text: str, legend_rows: int = 1) -> float:
    """The figure's footer (its caption: sweep, machine, trials, notes), wrapped to the
    figure's width at a legible size at its bottom; returns the share of the figure's height
    that the footer and a legend of `legend_rows` rows above it take, for tight_layout's rect
    (the legend is drawn there by `legend`). Why: one unwrapped line of 7-point grey text ran
    off the figure or printed too small to read."""
    import textwrap

    w_in, h_in = fig.get_size_inches()
    chars = max(40, int(w_in * 72 / (FOOTER_PT * 0.52)))  # an average character is about half an em
    lines = textwrap.wrap(text, chars) or [""]
    line = FOOTER_PT * 1.35 / 72 / h_in
    foot = len(lines) * line + 0.01
    fig.text(0.5, 0.005, "\n".join(lines), ha="center", va="bottom", fontsize=FOOTER_PT, color="0.15")
    fig.serverbench_footer = foot  # where legend() puts the legend
    return foot + legend_rows * (plt.rcParams["legend.fontsize"] * 2.0 / 72 / h_in)


def legend(fig, handles, ncol: int = 4) -> None:
    """The figure's legend, centred just above its footer (footer() first)."""
    foot = getattr(fig, "serverbench_footer", 0.0)
    fig.legend(handles=handles, loc="lower center", bbox_to_anchor=(0.5, foot), ncol=ncol, frameon=False)


def _caption(P: Processed, extra: str = "") -> str:
    info = P.info
    host = info.get(Col.host, {})
    cpus = host.get(Col.logical_cpus, "?")
    s = f"sweep {info.get(Col.sweep_id)} on {host.get(Col.cpu_model, '?')} ({cpus} logical CPUs)"
    if info.get("machines_differ"):  # panels of different pieces (paperscale._Joined)
        s += "; the panels ran on different machines: compare languages within a panel, not one panel with another"
    return s + (f"; {extra}" if extra else "")


def _pick(d: pd.DataFrame, col: str, want):
    """Filter d to col == want; want None picks the most common value."""
    if col not in d or d.empty or d[col].isna().all():
        return d, None
    if want is None:
        want = d[col].value_counts().idxmax()
    return d[d[col] == want], want
