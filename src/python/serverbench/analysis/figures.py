"""Figures 3-5 drawn like the paper's, from processed tables (and data/reference for the
paper's own values). Each figure is drawn by one registered function (registry.figure);
draw(name, P) is what notebooks, the report and `python -m serverbench figures` call, and
save() writes PNG and PDF to paper/figures/ (paths.figures_dir())."""

from __future__ import annotations

from pathlib import Path

import matplotlib

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402
from matplotlib.ticker import FuncFormatter  # noqa: E402

from serverbench import paths  # noqa: E402
from serverbench.analysis import reference, registry  # noqa: E402
from serverbench.analysis.process import LANGUAGE_LABELS, LANGUAGES, Processed  # noqa: E402

COLORS = {"erlang": "#A2003E", "go": "#0077A8", "scala_akka": "#E07B00", "java": "#5B8C00",
          "scala_actors": "#7A4FB5", "scala": "#B5651D", "c": "#333333", "nodejs": "#3C873A",
          "twisted": "#6E6E6E", "eventlet": "#C71585", "python_threads": "#1F3A93"}
MARKERS = {"erlang": "o", "go": "s", "scala_akka": "^", "java": "D", "scala_actors": "v", "scala": "P",
           "c": "X", "nodejs": "h", "twisted": "<", "eventlet": ">", "python_threads": "*"}
FIG3_SIZES = (5000, 10000, 50000)
FIG3A_LANGUAGES = ("erlang", "java", "scala_actors")  # Fig. 3 (a): Erlang vs Java threads vs Scala actors
FIG3A_BYTES = 5000
FIG3A_SOURCE = ("(a) in the paper is copied from da Silva, Lins & dos Santos (2013); its values are not "
                "drawn (no data was published), this sweep's runs are")
FIG5_CORES = (1, 2, 4, 8, 16, 32)
SPAWN_METRICS = {"all_ready_s": "until all processes are running", "spawn_call_s": "spawn calls only (as the original code timed)"}
PAPER_LABEL = "paper (Valkov et al. 2018)"


def color(lang: str) -> str:
    return COLORS.get(lang, "0.4")


def marker(lang: str) -> str:
    return MARKERS.get(lang, "o")


def _style():
    plt.rcParams.update({"figure.dpi": 110, "savefig.dpi": 150, "axes.grid": True, "grid.alpha": 0.3,
                         "axes.spines.top": False, "axes.spines.right": False, "font.size": 9,
                         "axes.titlesize": 10, "legend.fontsize": 8})


def _legend_handles(langs, show_reference, measured_label="this sweep: median with interval (see caption)"):
    h = [Line2D([], [], color=color(lang), marker=marker(lang), label=LANGUAGE_LABELS.get(lang, lang)) for lang in langs]
    h.append(Line2D([], [], color="0.3", marker="o", label=measured_label))
    if show_reference:
        h.append(Line2D([], [], color="0.3", ls="--", marker="o", mfc="none", label=PAPER_LABEL))
    return h


DODGE = {"erlang": 0.96, "go": 1.0, "scala_akka": 1.04, "java": 1.0, "scala_actors": 1.04}


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
    ax.plot(x[m][order], y[m][order], ls="--", lw=1, color=color(lang), marker=marker(lang), mfc="none",
            ms=5, alpha=0.75)
    return int((~m & np.isfinite(y)).sum())


def _panel_note(ax, msg: str) -> None:
    """A note on a panel that has no measured data (it never silently vanishes)."""
    ax.text(0.5, 0.97, msg, transform=ax.transAxes, ha="center", va="top", color="0.2", fontsize=8,
            bbox=dict(boxstyle="round", fc="0.96", ec="0.6", alpha=0.85), zorder=5)


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


def _caption(P: Processed, extra: str = "") -> str:
    info = P.info
    host = info.get("host", {})
    s = f"sweep {info.get('sweep_id')} on {host.get('cpu_model', '?')} ({host.get('logical_cpus', '?')} logical CPUs)"
    return s + (f"; {extra}" if extra else "")


def _pick(d: pd.DataFrame, col: str, want):
    """Filter d to col == want; want None picks the most common value."""
    if col not in d or d.empty or d[col].isna().all():
        return d, None
    if want is None:
        want = d[col].value_counts().idxmax()
    return d[d[col] == want], want


# ------------------------------------------------------------------ Figure 3

def _fig3_panel(ax, s, ref, languages, size, title, hidden_ref: list) -> bool:
    """One panel: time vs repetitions at one message size; False if nothing was drawn."""
    ax.set_title(title)
    drawn = False
    for lang in languages:
        g = s[(s["language"] == lang) & (s["message_bytes"] == size)] if not s.empty else s
        g = g[g["median"].notna()] if not g.empty else g
        if not g.empty:
            drawn = True
            _plot_measured(ax, g["repetitions"], g["median"], g["ci_lo"], g["ci_hi"], lang, dodge=True)
        if ref is not None:
            r = ref[(ref["language"] == lang) & (ref["message_bytes"] == size)]
            if not r.empty:
                drawn = True
                hidden_ref.append(_plot_reference(ax, r["repetitions"], r["time_s"], lang, positive_only=True))
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("Repetitions (messages each way)")
    ax.set_ylabel("Time (s)")
    return drawn


@registry.figure("fig3_pingping", title="Fig. 3: PingPing latency", tables=("pingping",), order=3)
def fig3_pingping(P: Processed, languages=None, show_reference: bool = True, sizes=FIG3_SIZES,
                  variant: str = "fair", payload: str = "copy", cores=None, **_):
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
    main = tuple(x for x in (languages or LANGUAGES) if x in LANGUAGES)
    a_langs = tuple(x for x in FIG3A_LANGUAGES if languages is None or x in languages)
    have = set(s["language"])
    ref = reference.fig3() if show_reference else None
    panels = []
    if have & (set(a_langs) - {"erlang"}):
        panels.append(("a", FIG3A_BYTES, a_langs, None))
    for i, size in enumerate(sizes):
        measured = bool(have & set(main)) and (s["message_bytes"] == size).any()
        if measured or (ref is not None and (ref["message_bytes"] == size).any()):
            panels.append(("bcd"[i] if i < 3 else str(i), size, main, ref))
    if not panels:
        return None
    fig, axes = plt.subplots(1, len(panels), figsize=(4.0 * len(panels), 3.6), squeeze=False)
    hidden: list[int] = []
    shown_langs: list[str] = []
    for ax, (letter, size, langs, r) in zip(axes[0], panels):
        title = f"({letter}) PingPing, {size / 1000:g} kB messages"
        if letter == "a":
            title += "\nErlang vs Java threads vs Scala actors"
        _fig3_panel(ax, s, r, langs, size, title, hidden)
        if letter == "a":
            ax.text(0.02, 0.98, "source of the paper's (a):\nda Silva, Lins & dos Santos (2013);\nvalues not drawn",
                    transform=ax.transAxes, va="top", fontsize=6.5, color="0.3")
        shown_langs += [x for x in langs if x not in shown_langs and x in have]
    note = f"variant {variant}, payload {payload}, {cores} core(s)" if cores is not None else ""
    note += "; " + _ci_note(s) if _ci_note(s) else ""
    if sum(hidden):
        note += f"; {sum(hidden)} paper value(s) of 0 s not drawn on the log axis"
    if panels[0][0] == "a":
        note += "; " + FIG3A_SOURCE
    fig.legend(handles=_legend_handles(shown_langs, show_reference), loc="lower center", ncol=7, frameon=False)
    fig.suptitle("Fig. 3: PingPing latency, time for R round trips (lower is better)", y=0.99)
    fig.text(0.5, 0.065, _caption(P, note), ha="center", fontsize=7, color="0.35", wrap=True)
    fig.tight_layout(rect=(0, 0.1, 1, 0.96))
    return fig


# ------------------------------------------------------------------ Figure 4

@registry.figure("fig4_spawn", title="Fig. 4: spawning dormant processes", tables=("spawn", "spawn_max"), order=4)
def fig4_spawn(P: Processed, languages=None, show_reference: bool = True, metric: str | None = None,
               max_fixed: int = 100_000, cores=None, spawn_metric: str = "all_ready_s", **_):
    """(a) the max-processes search, (b) fixed N; None if the sweep has no spawn runs."""
    metric = metric or spawn_metric
    languages = tuple(x for x in (languages or LANGUAGES) if x in LANGUAGES)
    if not {"spawn", "spawn_max"} & set(P.info.get("tables") or []):
        return None
    if metric not in SPAWN_METRICS:
        raise ValueError(f"metric must be one of {sorted(SPAWN_METRICS)}")
    _style()
    fig, (axa, axb) = plt.subplots(1, 2, figsize=(11, 4.0))
    # (a) the max-processes search
    steps = P.spawn_max
    lim = P.spawn_max_limits
    ra, rfail = reference.fig4a() if show_reference else (None, None)
    any_a = False
    fail_notes = []
    for lang in languages:
        if steps is not None and not steps.empty:
            g = steps[(steps["language"] == lang) & (steps["status"] == "ok")]
            if not g.empty and g[metric].notna().any():
                any_a = True
                st = P.stat("spawn_max", metric)
                st = st[st["language"] == lang]
                _plot_measured(axa, st["processes"], st["median"], st["ci_lo"], st["ci_hi"], lang, dodge=True)
        if lim is not None and not lim.empty and lang in set(lim["language"]):
            row = lim[lim["language"] == lang].iloc[0]
            if pd.notna(row["first_failed_processes"]):
                any_a = True
                found = bool(row["limit_found"])
                axa.axvline(row["first_failed_processes"], color=color(lang), ls=":", lw=1)
                axa.plot([row["first_failed_processes"]], [0.02], marker="X" if found else "P", ms=9,
                         color=color(lang), transform=axa.get_xaxis_transform(), clip_on=False)
                status = str(row["failure"]).split(":")[0]
                fail_notes.append(f"{LANGUAGE_LABELS.get(lang, lang)}: ok to {_num(row['max_ok_processes'])}, "
                                  + (f"fails at {int(row['first_failed_processes']):,} ({status})" if found else
                                     f"stopped at {int(row['first_failed_processes']):,}\n    ({status}: limit not established)"))
            elif pd.notna(row["max_ok_processes"]):
                fail_notes.append(f"{LANGUAGE_LABELS.get(lang, lang)}: ok to {_num(row['max_ok_processes'])}, no failure reached")
        if ra is not None:
            r = ra[ra["language"] == lang]
            _plot_reference(axa, r["processes"], r["time_s"], lang, positive_only=True)
            f = rfail[rfail["language"] == lang]
            for _, fr in f.iterrows():
                axa.plot([fr["processes"]], [0.98], marker="x", ms=7, color=color(lang), alpha=0.75,
                         transform=axa.get_xaxis_transform(), clip_on=False)
    if fail_notes:
        axa.text(0.98, 0.1, "This sweep's search:\n" + "\n".join(fail_notes), transform=axa.transAxes, va="bottom",
                 ha="right", fontsize=6.5, bbox=dict(boxstyle="round", fc="white", ec="0.7", alpha=0.85), zorder=5)
    if not any_a:
        _panel_note(axa, "no max-processes search in this sweep")
    budget = lim["budget_bytes"].dropna().iloc[0] if lim is not None and not lim.empty and lim["budget_bytes"].notna().any() else None
    axa.set_title("(a) Spawn up to the maximum supported" + (f" (budget {budget / 2**30:.3g} GiB)" if budget else ""))
    axa.set_xscale("log")
    axa.set_yscale("log")
    axa.set_xlabel("Processes (log)")
    axa.set_ylabel(f"Time to spawn (s), {metric}")
    # (b) fixed N
    s = P.stat("spawn", metric)
    s = s[(s["language"].isin(languages)) & (s["processes"] <= max_fixed)] if not s.empty else s
    s, cores = _pick(s, "cores", cores)
    rb = reference.fig4b() if show_reference else None
    any_b = False
    for lang in languages:
        g = s[s["language"] == lang] if not s.empty else s
        if not g.empty and g["median"].notna().any():
            any_b = True
            _plot_measured(axb, g["processes"], g["median"], g["ci_lo"], g["ci_hi"], lang)
        if rb is not None:
            r = rb[rb["language"] == lang]
            _plot_reference(axb, r["processes"], r["time_s"], lang)
    if not any_b:
        _panel_note(axb, "no fixed-N spawn runs in this sweep")
    axb.set_title(f"(b) Spawn up to {max_fixed:,} processes")
    axb.set_xlabel("Processes")
    axb.set_ylabel(f"Time to spawn (s), {metric}")
    axb.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v / 1000:g}k" if v else "0"))
    axb.set_xlim(left=0)
    axb.set_ylim(bottom=0)
    fig.legend(handles=_legend_handles(languages, show_reference) +
               ([Line2D([], [], color="0.3", marker="X", ls=":", label="first failing N (this sweep)")] if any_a else []),
               loc="lower center", ncol=7, frameon=False)
    fig.suptitle(f"Fig. 4: Time to spawn dormant processes ({SPAWN_METRICS[metric]})", y=0.99)
    note = f"{cores} core(s)" if cores is not None else ""
    note += "; (b) " + _ci_note(s) if _ci_note(s) else ""
    if show_reference:
        note += "; paper (a) points are means of its runs, x = paper's failure"
    fig.text(0.5, 0.075, _caption(P, note), ha="center", fontsize=7, color="0.35")
    fig.tight_layout(rect=(0, 0.1, 1, 0.96))
    return fig


# ------------------------------------------------------------------ Figure 5

@registry.figure("fig5_throughput", title="Fig. 5: throughput", tables=("throughput",), order=5)
def fig5_throughput(P: Processed, languages=None, show_reference: bool = True, cores=FIG5_CORES,
                    metric: str = "paper_msgs_per_min", variant: str = "fair", payload: str = "copy",
                    reference_as_plotted: bool = False, **_):
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
    note = f"variant {variant}, payload {payload}" + (f", {', '.join(f'{d:g}' for d in dur)} s runs (paper: 60 s)" if len(dur) else "")
    note += "; " + _ci_note(s) if _ci_note(s) else ""
    if show_reference:
        note += "; paper: median of its 3 runs" + (" (sheet's median block)" if reference_as_plotted else "")
    fig.text(0.5, 0.045, _caption(P, note), ha="center", fontsize=7, color="0.35")
    fig.tight_layout(rect=(0, 0.06, 1, 0.97))
    return fig


def save(fig, name: str, out_dir=None) -> dict:
    out = Path(out_dir) if out_dir else paths.figures_dir()
    out.mkdir(parents=True, exist_ok=True)
    written = {}
    for ext in ("png", "pdf"):
        p = out / f"{name}.{ext}"
        # No creation date: the same raw logs give byte-identical figures.
        meta = {"CreationDate": None} if ext == "pdf" else {"Software": None}
        fig.savefig(p, bbox_inches="tight", metadata=meta)
        written[ext] = p
    return written


NAMES = {"fig3": "fig3_pingping", "fig4": "fig4_spawn", "fig5": "fig5_throughput"}


def draw(name: str, P: Processed, languages=None, show_reference: bool = True, spawn_metric: str = "all_ready_s",
         out_dir=None, save_files: bool = True, **options):
    """Draw the registered figure `name` (e.g. "fig3_pingping") and save it (PNG + PDF);
    options go to the figure function (e.g. cores=[1, 2] for Fig. 5). Returns the Figure,
    or None when the sweep has nothing for it (nothing is saved, and a stale file of that
    name is removed)."""
    spec = registry.load().figures.get(NAMES.get(name, name))
    if spec is None:
        raise KeyError(f"no figure {name!r}; registered: {', '.join(f.name for f in registry.figures())}")
    fig = spec.draw(P, languages=languages, show_reference=show_reference, spawn_metric=spawn_metric, **options)
    out = Path(out_dir) if out_dir else paths.figures_dir()
    if save_files:
        if fig is None:
            for ext in ("png", "pdf"):
                (out / f"{spec.name}.{ext}").unlink(missing_ok=True)
        else:
            save(fig, spec.name, out)
    return fig


def draw_all(P: Processed, out_dir=None, show_reference=True, languages=None, spawn_metric="all_ready_s") -> dict:
    """Every registered figure: {name: {"png": path, "pdf": path}} for those drawn."""
    out = {}
    for spec in registry.figures():
        fig = draw(spec.name, P, languages, show_reference, spawn_metric, out_dir)
        if fig is not None:
            d = Path(out_dir) if out_dir else paths.figures_dir()
            out[spec.name] = {ext: d / f"{spec.name}.{ext}" for ext in ("png", "pdf")}
            plt.close(fig)
    return out
