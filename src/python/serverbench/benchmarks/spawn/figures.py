"""Figure 4: spawning dormant processes, (a) the max-processes search and (b) fixed N."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd
from matplotlib.lines import Line2D
from matplotlib.ticker import FuncFormatter

from serverbench import catalog
from serverbench.analysis.plotting.figstyle import (
    SPAWN_METRICS,
    _caption,
    _ci_note,
    _legend_handles,
    _num,
    _panel_note,
    _pick,
    _plot_measured,
    _plot_reference,
    _style,
    color,
    footer,
    legend,
)
from serverbench.analysis.reading import reference, registry
from serverbench.analysis.reading.process import LANGUAGE_LABELS, Processed
from serverbench.benchmarks.spawn.columns import Col

# ------------------------------------------------------------------ Figure 4

# The first failing N of each language (this sweep's search and the paper's) are marked in a
# strip above panel (a), in axes coordinates: inside the panel they sat on its time axis,
# where a cross at 0.03 s read as a time.
FAIL_STRIP, FAIL_STEP = 1.04, 0.045


@registry.figure("fig4_spawn", title="Fig. 4: spawning dormant processes", tables=("spawn", "spawn_max"), order=4)
def fig4_spawn(
    P: Processed,
    languages=None,
    show_reference: bool = True,
    metric: str | None = None,
    max_fixed: int = 100_000,
    cores=None,
    spawn_metric: str = "all_ready_s",
    **_,
):
    """(a) the max-processes search, (b) fixed N; None if the sweep has no spawn runs."""
    metric = metric or spawn_metric
    paper = catalog.paper_languages()
    languages = tuple(x for x in (languages or paper) if x in paper)
    if not {"spawn", "spawn_max"} & set(P.info.get(Col.tables) or []):
        return None
    if metric not in SPAWN_METRICS:
        raise ValueError(f"metric must be one of {sorted(SPAWN_METRICS)}")
    _style()
    fig, (axa, axb) = plt.subplots(1, 2, figsize=(11, 5.2))
    # (a) the max-processes search
    steps = P.spawn_max
    lim = P.spawn_max_limits
    ra, rfail = reference.fig4a() if show_reference else (None, None)
    any_a = False
    fail_notes = []
    stacked: dict[tuple, int] = {}  # markers at one x are stacked, so one does not hide another

    def height(kind: str, x, base: float, step: float) -> float:
        k = stacked.get((kind, x), 0)
        stacked[(kind, x)] = k + 1
        return base + k * step

    for lang in languages:
        if steps is not None and not steps.empty:
            g = steps[(steps[Col.language] == lang) & (steps[Col.status] == "ok")]
            if not g.empty and g[metric].notna().any():
                any_a = True
                st = P.stat("spawn_max", metric)
                st = st[st[Col.language] == lang]
                _plot_measured(axa, st[Col.processes], st[Col.median], st[Col.ci_lo], st[Col.ci_hi], lang, dodge=True)
        if lim is not None and not lim.empty and lang in set(lim[Col.language]):
            row = lim[lim[Col.language] == lang].iloc[0]
            failed_at = row[Col.first_failed_processes]
            if pd.notna(failed_at):
                any_a = True
                found = bool(row[Col.limit_found])
                axa.axvline(failed_at, color=color(lang), ls=":", lw=1)
                axa.plot(  # above the panel, off its time axis: a failure is not a time
                    [failed_at],
                    [height("fail", failed_at, FAIL_STRIP, FAIL_STEP)],
                    marker="X" if found else "P",
                    ms=9,
                    color=color(lang),
                    transform=axa.get_xaxis_transform(),
                    clip_on=False,
                )
                status = str(row[Col.failure]).split(":")[0]
                fail_notes.append(
                    f"{LANGUAGE_LABELS.get(lang, lang)}: ok to {_num(row[Col.max_ok_processes])}, "
                    + (
                        f"fails at {int(failed_at):,} ({status})"
                        if found
                        else f"stopped at {int(failed_at):,}\n    ({status}: limit not established)"
                    )
                )
            elif pd.notna(row[Col.max_ok_processes]):
                fail_notes.append(
                    f"{LANGUAGE_LABELS.get(lang, lang)}: ok to {_num(row[Col.max_ok_processes])}, no failure reached"
                )
        if ra is not None:
            r = ra[ra[Col.language] == lang]
            _plot_reference(axa, r[Col.processes], r["time_s"], lang, positive_only=True)
            f = rfail[rfail[Col.language] == lang]
            for _, fr in f.iterrows():
                axa.plot(
                    [fr[Col.processes]],
                    [height("fail", fr[Col.processes], FAIL_STRIP, FAIL_STEP)],
                    marker="x",
                    ms=7,
                    color=color(lang),
                    alpha=0.75,
                    transform=axa.get_xaxis_transform(),
                    clip_on=False,
                )
    if fail_notes:
        axa.text(  # top left: the curves rise to the right, so the corner they leave empty
            0.02,
            0.98,
            "This sweep's search:\n" + "\n".join(fail_notes),
            transform=axa.transAxes,
            va="top",
            ha="left",
            fontsize=6.5,
            bbox=dict(boxstyle="round", fc="white", ec="0.7", alpha=0.85),
            zorder=5,
        )
    if not any_a:
        _panel_note(axa, "no max-processes search in this sweep")
    budget = (
        lim[Col.budget_bytes].dropna().iloc[0]
        if lim is not None and not lim.empty and lim[Col.budget_bytes].notna().any()
        else None
    )
    axa.set_title(
        "(a) Spawn up to the maximum supported" + (f" (budget {budget / 2**30:.3g} GiB)" if budget else ""),
        pad=30 if any_a or rfail is not None else 6,  # room for the strip of first failing N
    )
    if any_a or (rfail is not None and not rfail.empty):
        axa.text(0.0, FAIL_STRIP, "first failing N → ", transform=axa.transAxes, ha="right", va="center", fontsize=7)
    axa.set_xscale("log")
    axa.set_yscale("log")
    axa.set_xlabel("Processes (log)")
    axa.set_ylabel("Time to spawn (s)")  # which time: the suptitle (SPAWN_METRICS)
    # (b) fixed N
    s = P.stat("spawn", metric)
    s = s[(s[Col.language].isin(languages)) & (s[Col.processes] <= max_fixed)] if not s.empty else s
    s, cores = _pick(s, "cores", cores)
    rb = reference.fig4b() if show_reference else None
    any_b = False
    for lang in languages:
        g = s[s[Col.language] == lang] if not s.empty else s
        if not g.empty and g[Col.median].notna().any():
            any_b = True
            _plot_measured(axb, g[Col.processes], g[Col.median], g[Col.ci_lo], g[Col.ci_hi], lang)
        if rb is not None:
            r = rb[rb[Col.language] == lang]
            _plot_reference(axb, r[Col.processes], r["time_s"], lang)
    if not any_b:
        _panel_note(axb, "no fixed-N spawn runs in this sweep")
    axb.set_title(f"(b) Spawn up to {max_fixed:,} processes")
    axb.set_xlabel("Processes")
    axb.set_ylabel("Time to spawn (s)")
    axb.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v / 1000:g}k" if v else "0"))
    axb.set_xlim(left=0)
    axb.set_ylim(bottom=0)
    handles = _legend_handles(languages, show_reference)
    if any_a:
        handles.append(Line2D([], [], color="0.3", marker="X", ls=":", label="first failing N (this sweep; above (a))"))
    if show_reference and rfail is not None and not rfail.empty:
        handles.append(Line2D([], [], color="0.3", marker="x", ls="none", label="first failing N (paper; above (a))"))
    note = f"{cores} core(s)" if cores is not None else ""
    note += "; (b) " + _ci_note(s) if _ci_note(s) else ""
    if show_reference:
        note += "; paper (a) points are means of its runs"
    bottom = footer(fig, _caption(P, note), legend_rows=-(-len(handles) // 4))
    legend(fig, handles)
    fig.suptitle(f"Fig. 4: Time to spawn dormant processes ({SPAWN_METRICS[metric]})", y=0.995)
    fig.tight_layout(rect=(0, bottom, 1, 0.96))
    return fig
