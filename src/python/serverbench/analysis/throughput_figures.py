"""Figure 5: throughput of process pairs, one panel per core count."""

from __future__ import annotations

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
from matplotlib.ticker import FuncFormatter

from serverbench.analysis import reference, registry
from serverbench.analysis.figstyle import (
    FIG5_CORES,
    _caption,
    _ci_note,
    _legend_handles,
    _panel_note,
    _pick,
    _plot_measured,
    _plot_reference,
    _style,
)
from serverbench.analysis.process import LANGUAGES, Processed

# ------------------------------------------------------------------ Figure 5


@registry.figure("fig5_throughput", title="Fig. 5: throughput", tables=("throughput",), order=5)
def fig5_throughput(
    P: Processed,
    languages=None,
    show_reference: bool = True,
    cores=FIG5_CORES,
    metric: str = "paper_msgs_per_min",
    variant: str = "fair",
    payload: str = "copy",
    reference_as_plotted: bool = False,
    **_,
):
    """One panel per core count; None if the sweep has no throughput runs."""
    languages = tuple(x for x in (languages or LANGUAGES) if x in LANGUAGES)
    if "throughput" not in set(P.info.get("tables") or []):
        return None
    _style()
    s = P.stat("throughput", metric)
    s = s[s["language"].isin(languages)] if not s.empty else s
    s, variant = _pick(s, "variant", variant)
    s, payload = _pick(s, "payload", payload)
    ref = reference.fig5_median(as_plotted=reference_as_plotted) if show_reference else None
    unrunnable = set(P.info.get("unrunnable_cores") or [])
    cpus = P.info.get("logical_cpus")
    ncol = 3
    nrow = int(np.ceil(len(cores) / ncol))
    fig, axes = plt.subplots(nrow, ncol, figsize=(12, 3.3 * nrow), squeeze=False)
    all_pairs = set()
    for i, c in enumerate(cores):
        ax = axes[i // ncol][i % ncol]
        ax.set_title(f"({'abcdef'[i] if i < 6 else i}) {c} core{'s' if c > 1 else ''}")
        have = False
        for lang in languages:
            g = s[(s["language"] == lang) & (s["cores"] == c)] if not s.empty else s
            if not g.empty and g["median"].notna().any():
                have = True
                all_pairs |= set(g["pairs"].astype(int))
                _plot_measured(ax, g["pairs"], g["median"] / 1e6, g["ci_lo"] / 1e6, g["ci_hi"] / 1e6, lang, dodge=True)
            if ref is not None:
                r = ref[(ref["language"] == lang) & (ref["cores"] == c)]
                if not r.empty:
                    all_pairs |= set(r["pairs"].astype(int))
                    _plot_reference(ax, r["pairs"], r["msgs_per_min"] / 1e6, lang)
        if not have:
            if c in unrunnable or (cpus and c > cpus):
                msg = f"not runnable on this machine\n({cpus} logical CPUs)"
            else:
                msg = "not measured in this sweep"
            if show_reference:
                msg += "\n(paper's values only)"
            _panel_note(ax, msg)
        ax.set_xscale("log", base=2)
        ax.set_xlabel("Process pairs")
        ax.set_ylabel("Exchanges per minute (millions)")
        ax.set_ylim(bottom=0)
    ticks = sorted(all_pairs) or [1, 2, 4, 8, 16, 32, 64, 128]
    for row in axes:
        for ax in row:
            ax.set_xticks(ticks)
            ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
            ax.xaxis.set_minor_locator(matplotlib.ticker.NullLocator())
    for j in range(len(cores), nrow * ncol):
        axes[j // ncol][j % ncol].set_visible(False)
    fig.legend(handles=_legend_handles(languages, show_reference), loc="lower center", ncol=6, frameon=False)
    fig.suptitle("Fig. 5: Throughput of process pairs exchanging 500-byte messages (higher is better)", y=0.995)
    dur = s["duration_s"].dropna().unique() if not s.empty and "duration_s" in s else []
    note = f"variant {variant}, payload {payload}" + (
        f", {', '.join(f'{d:g}' for d in dur)} s runs (paper: 60 s)" if len(dur) else ""
    )
    note += "; " + _ci_note(s) if _ci_note(s) else ""
    if show_reference:
        note += "; paper: median of its 3 runs" + (" (sheet's median block)" if reference_as_plotted else "")
    fig.text(0.5, 0.045, _caption(P, note), ha="center", fontsize=7, color="0.35")
    fig.tight_layout(rect=(0, 0.06, 1, 0.97))
    return fig
