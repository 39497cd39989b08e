"""Figure 5: throughput of process pairs, one panel per core count."""

from __future__ import annotations

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
from matplotlib.ticker import FuncFormatter

from serverbench import catalog
from serverbench.analysis.plotting.figstyle import (
    FIG5_CORES,
    _caption,
    _ci_note,
    _legend_handles,
    _panel_note,
    _pick,
    _plot_measured,
    _plot_reference,
    _style,
    footer,
    legend,
)
from serverbench.analysis.reading import reference, registry
from serverbench.analysis.reading.process import Processed
from serverbench.benchmarks.throughput.columns import Col

# ------------------------------------------------------------------ Figure 5


@registry.figure("fig5_throughput", title="Fig. 5: throughput", tables=("throughput",), order=5)
def fig5_throughput(P: Processed, languages=None, show_reference: bool = True, **kw):
    """One panel per core count; None if the sweep has no throughput runs."""
    return _fig5(P, languages, show_reference, normalised=False, **kw)


@registry.figure(
    "fig5_normalised", title="Fig. 5, each curve relative to its pairs = cores point", tables=("throughput",), order=5.1
)
def fig5_normalised(P: Processed, languages=None, show_reference: bool = True, **kw):
    """Fig. 5 with every curve divided by its own value at pairs = cores: the shapes the
    claims speak of (a peak at pairs = cores, a rise to ~62 pairs, a drop after the peak)
    compared across machines whose absolute speeds differ."""
    return _fig5(P, languages, show_reference, normalised=True, **kw)


def _at_cores(pairs, values, c):
    """values / the value at pairs == c (NaN when that point is missing)."""
    pairs, values = np.asarray(pairs, dtype=float), np.asarray(values, dtype=float)
    base = values[pairs == c]
    return values / base[0] if len(base) and np.isfinite(base[0]) and base[0] > 0 else values * np.nan


def _fig5(
    P: Processed,
    languages=None,
    show_reference: bool = True,
    normalised: bool = False,
    cores=FIG5_CORES,
    metric: str = "paper_msgs_per_min",
    variant: str = "fair",
    payload: str = "copy",
    reference_as_plotted: bool = False,
    **_,
):
    paper = catalog.paper_languages()
    languages = tuple(x for x in (languages or paper) if x in paper)
    if "throughput" not in set(P.info.get(Col.tables) or []):
        return None
    _style()
    s = P.stat("throughput", metric)
    s = s[s[Col.language].isin(languages)] if not s.empty else s
    s, variant = _pick(s, "variant", variant)
    s, payload = _pick(s, "payload", payload)
    ref = reference.fig5_median(as_plotted=reference_as_plotted) if show_reference else None
    unrunnable = set(P.info.get(Col.unrunnable_cores) or [])
    cpus = P.info.get(Col.logical_cpus)
    ncol = 3
    nrow = int(np.ceil(len(cores) / ncol))
    fig, axes = plt.subplots(nrow, ncol, figsize=(12, 3.3 * nrow + 1.2), squeeze=False)
    all_pairs = set()
    for i, c in enumerate(cores):
        ax = axes[i // ncol][i % ncol]
        ax.set_title(f"({'abcdef'[i] if i < 6 else i}) {c} core{'s' if c > 1 else ''}")
        have = drawn_ref = False
        for lang in languages:
            g = s[(s[Col.language] == lang) & (s[Col.cores] == c)] if not s.empty else s
            if not g.empty and g[Col.median].notna().any():
                g = g.sort_values("pairs")
                scale = (
                    _at_cores(g[Col.pairs], g[Col.median], c) / g[Col.median].to_numpy(float) if normalised else 1e-6
                )
                if np.isfinite(scale).any():
                    have = True
                    all_pairs |= set(g[Col.pairs].astype(int))
                    _plot_measured(
                        ax,
                        g[Col.pairs],
                        g[Col.median] * scale,
                        g[Col.ci_lo] * scale,
                        g[Col.ci_hi] * scale,
                        lang,
                        dodge=True,
                    )
            if ref is not None:
                r = ref[(ref[Col.language] == lang) & (ref[Col.cores] == c)].sort_values("pairs")
                y = _at_cores(r[Col.pairs], r["msgs_per_min"], c) if normalised else r["msgs_per_min"] / 1e6
                if not r.empty and np.isfinite(np.asarray(y, dtype=float)).any():
                    drawn_ref = True
                    all_pairs |= set(r[Col.pairs].astype(int))
                    _plot_reference(ax, r[Col.pairs], y, lang)
        if not have:
            if c in unrunnable or (cpus and c > cpus):
                msg = f"not runnable on this machine ({cpus} logical CPUs)"
            else:
                msg = "not measured in this sweep"
            if drawn_ref:
                # the paper's curves stay readable: said in the panel's title, not over them
                ax.set_title(f"{ax.get_title()}: {msg.split(' (')[0].replace(' on this machine', ' here')}, paper only")
            else:
                _panel_note(ax, msg)
        ax.set_xscale("log", base=2)
        ax.set_xlabel("Process pairs")
        ax.set_ylabel("relative to pairs = cores" if normalised else "Exchanges per minute (millions)")
        if normalised:
            ax.axhline(1.0, color="0.5", lw=0.6, ls=":")
        ax.set_ylim(bottom=0)
    ticks = sorted(all_pairs) or [1, 2, 4, 8, 16, 32, 64, 128]
    for row in axes:
        for ax in row:
            ax.set_xticks(ticks)
            ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
            ax.xaxis.set_minor_locator(matplotlib.ticker.NullLocator())
    for j in range(len(cores), nrow * ncol):
        axes[j // ncol][j % ncol].set_visible(False)
    handles = _legend_handles(languages, show_reference)
    title = "Fig. 5: Throughput of process pairs exchanging 500-byte messages (higher is better)"
    if normalised:
        title = "Fig. 5, each curve divided by its own value at pairs = cores (the shape, not the speed)"
    fig.suptitle(title, y=0.995)
    dur = s[Col.duration_s].dropna().unique() if not s.empty and Col.duration_s in s else []
    note = f"variant {variant}, payload {payload}" + (
        f", {', '.join(f'{d:g}' for d in dur)} s runs (paper: 60 s)" if len(dur) else ""
    )
    note += "; " + _ci_note(s) if _ci_note(s) else ""
    if show_reference:
        note += "; paper: median of its 3 runs" + (" (sheet's median block)" if reference_as_plotted else "")
    if normalised:
        note += "; bars: the median's interval over the pairs = cores median (not a ratio's interval)"
    bottom = footer(fig, _caption(P, note), legend_rows=-(-len(handles) // 4))
    legend(fig, handles)
    fig.tight_layout(rect=(0, bottom, 1, 0.97))
    return fig
