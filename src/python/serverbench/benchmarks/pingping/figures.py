"""Figure 3: PingPing latency, panels (a)-(d)."""

from __future__ import annotations

import matplotlib.pyplot as plt

from serverbench import catalog
from serverbench.analysis.plotting.figstyle import (
    FIG3_SIZES,
    FIG3A_BYTES,
    FIG3A_SOURCE,
    _caption,
    _ci_note,
    _legend_handles,
    _pick,
    _plot_measured,
    _plot_reference,
    _style,
    footer,
    legend,
)
from serverbench.analysis.reading import reference, registry
from serverbench.analysis.reading.process import Processed
from serverbench.rawdata.columns import Col

FIG3A_LANGUAGES = ("erlang", "java", "scala_actors")  # Fig. 3 (a): Erlang vs Java threads vs Scala actors

# ------------------------------------------------------------------ Figure 3


def _fig3_panel(ax, s, ref, languages, size, title, hidden_ref: list) -> bool:
    """One panel: time vs repetitions at one message size; False if nothing was drawn."""
    ax.set_title(title)
    drawn = False
    for lang in languages:
        g = s[(s[Col.language] == lang) & (s[Col.message_bytes] == size)] if not s.empty else s
        g = g[g[Col.median].notna()] if not g.empty else g
        if not g.empty:
            drawn = True
            _plot_measured(ax, g[Col.repetitions], g[Col.median], g[Col.ci_lo], g[Col.ci_hi], lang, dodge=True)
        if ref is not None:
            r = ref[(ref[Col.language] == lang) & (ref[Col.message_bytes] == size)]
            if not r.empty:
                drawn = True
                hidden_ref.append(_plot_reference(ax, r[Col.repetitions], r["time_s"], lang, positive_only=True))
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("Repetitions (messages each way)")
    ax.set_ylabel("Time (s)")
    return drawn


@registry.figure("fig3_pingping", title="Fig. 3: PingPing latency", tables=("pingping",), order=3)
def fig3_pingping(
    P: Processed,
    languages=None,
    show_reference: bool = True,
    sizes=FIG3_SIZES,
    variant: str = "fair",
    payload: str = "copy",
    cores=None,
    **_,
):
    """Panel (a) 5 kB Erlang vs Java threads vs Scala actors (only when the sweep has Java
    or Scala actors runs), panels (b)-(d) Erlang, Go, Scala/Akka at 5, 10 and 50 kB (only
    sizes with data, this sweep's or the paper's). None when there is nothing to draw."""
    _style()
    s = P.stat("pingping", "elapsed_s")
    if s.empty:
        return None
    s, variant = _pick(s, "variant", variant)
    s, payload = _pick(s, "payload", payload)
    s, cores = _pick(s, "cores", cores)
    paper = catalog.paper_languages()
    main = tuple(x for x in (languages or paper) if x in paper)
    a_langs = tuple(x for x in FIG3A_LANGUAGES if languages is None or x in languages)
    have = set(s[Col.language])
    ref = reference.fig3() if show_reference else None
    panels = []
    if have & (set(a_langs) - {"erlang"}):
        panels.append(("a", FIG3A_BYTES, a_langs, None))
    for i, size in enumerate(sizes):
        measured = bool(have & set(main)) and (s[Col.message_bytes] == size).any()
        if measured or (ref is not None and (ref[Col.message_bytes] == size).any()):
            panels.append(("bcd"[i] if i < 3 else str(i), size, main, ref))
    if not panels:
        return None
    # two panels a row: printed at a page's width each panel stays legible (four in a row
    # made a strip a sixth of a page high)
    ncol = min(2, len(panels))
    nrow = -(-len(panels) // ncol)
    fig, axes = plt.subplots(nrow, ncol, figsize=(5.2 * ncol, 3.6 * nrow + 1.4), squeeze=False)
    for ax in axes.flat[len(panels) :]:  # a grid cell without a panel
        fig.delaxes(ax)
    hidden: list[int] = []
    shown_langs: list[str] = []
    for ax, (letter, size, langs, r) in zip(axes.flat, panels):
        title = f"({letter}) PingPing, {size / 1000:g} kB messages"
        if letter == "a":
            title += "\nErlang vs Java threads vs Scala actors"
        _fig3_panel(ax, s, r, langs, size, title, hidden)
        if letter == "a":
            ax.text(
                0.02,
                0.98,
                "source of the paper's (a):\nda Silva, Lins & dos Santos (2013);\nvalues not drawn",
                transform=ax.transAxes,
                va="top",
                fontsize=6.5,
                color="0.3",
            )
        shown_langs += [x for x in langs if x not in shown_langs and x in have]
    note = f"variant {variant}, payload {payload}, {cores} core(s)" if cores is not None else ""
    note += "; " + _ci_note(s) if _ci_note(s) else ""
    if sum(hidden):
        note += f"; {sum(hidden)} paper value(s) of 0 s not drawn on the log axis"
    if panels[0][0] == "a":
        note += "; " + FIG3A_SOURCE
    handles = _legend_handles(shown_langs, show_reference)
    bottom = footer(fig, _caption(P, note), legend_rows=-(-len(handles) // 4))
    legend(fig, handles)
    fig.suptitle("Fig. 3: PingPing latency, time for R round trips (lower is better)", y=0.995)
    fig.tight_layout(rect=(0, bottom, 1, 0.97))
    return fig
