"""The decision behind each verdict, drawn: a forest plot of every deciding comparison's
ratio and interval on a log axis, with its yes region shaded green and its no region red
(the claim's protocol regions), grouped by claim. Rows come from the claims' evidence (the same
numbers as claims_evidence.csv); comparisons shown for context only ('-') are left out."""

from __future__ import annotations

import textwrap
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from serverbench.analysis.plotting.figstyle import _style  # noqa: E402
from serverbench.rawdata.columns import Col

ROWS_PER_FIGURE = 36
ROWS_PER_CLAIM = 6  # the ones against the claim and the undecided first (summaries.default_summary's order)
RESULT_COLOURS = {"yes": "#1b7837", "no": "#b2182b", "unclear": "#555555"}
_RANK = {"no": 0, "unclear": 1, "yes": 2}


def rows(verdicts) -> pd.DataFrame:
    """The deciding comparisons to draw: claim, label, ratio, interval, regions, result."""
    out = []
    for v in verdicts:
        e = v.evidence
        if e is None or e.empty or Col.ratio not in e.columns:
            continue
        e = e[e[Col.result].isin(list(_RANK)) & e[Col.ratio].notna()].copy()
        if e.empty:
            continue
        e["_rank"] = e[Col.result].map(_RANK)
        e = e.sort_values("_rank", kind="stable").head(ROWS_PER_CLAIM)
        for r in e.itertuples():
            out.append(
                {
                    "claim": v.id,
                    "verdict": v.verdict,
                    "label": textwrap.fill(f"{v.id}  {r.comparison} @ {r.config}", 64, subsequent_indent="    "),
                    "ratio": r.ratio,
                    "lo": getattr(r, "ci_lo", np.nan),
                    "hi": getattr(r, "ci_hi", np.nan),
                    "yes_lo": getattr(r, "yes_lo", np.nan),
                    "yes_hi": getattr(r, "yes_hi", np.nan),
                    "no_below": getattr(r, "no_below", np.nan),
                    "no_above": getattr(r, "no_above", np.nan),
                    "result": r.result,
                }
            )
    return pd.DataFrame(out)


def _limits(t: pd.DataFrame) -> tuple[float, float]:
    vals = pd.concat([t[c] for c in ("ratio", "lo", "hi", "yes_lo", "yes_hi", "no_below", "no_above")])
    vals = vals[np.isfinite(vals) & (vals > 0)]
    if vals.empty:
        return 0.1, 10.0
    return float(vals.min()) / 1.5, float(vals.max()) * 1.5


def _draw(t: pd.DataFrame, title: str):
    _style()  # the figures' style, whatever was drawn before in this process (rcParams are global)
    n = len(t)
    lines = sum(str(x).count("\n") + 1 for x in t["label"])  # a long label wraps onto a second line
    fig, ax = plt.subplots(figsize=(8.5, 1.0 + 0.16 * lines + 0.08 * n))
    lo_x, hi_x = _limits(t)
    for i, r in enumerate(t.itertuples()):
        y = n - 1 - i

        def band(a, b, c, y=y):
            ax.fill_betweenx([y - 0.42, y + 0.42], a, b, color=c, alpha=0.18, lw=0)

        def clip(x, d):
            return d if not np.isfinite(x) else min(max(x, lo_x), hi_x)

        if np.isfinite(r.yes_hi) or np.isfinite(r.yes_lo):
            band(clip(r.yes_lo if r.yes_lo > 0 else lo_x, lo_x), clip(r.yes_hi, hi_x), "#1b7837")
        if np.isfinite(r.no_above):
            band(clip(r.no_above, hi_x), hi_x, "#b2182b")
        if np.isfinite(r.no_below) and r.no_below > 0:
            band(lo_x, clip(r.no_below, lo_x), "#b2182b")
        c = RESULT_COLOURS.get(r.result, "k")
        if np.isfinite(r.lo) and np.isfinite(r.hi):
            ax.plot([r.lo, r.hi], [y, y], color=c, lw=1.6)
        ax.plot([r.ratio], [y], "o", color=c, ms=4)
    ax.set_xscale("log")
    ax.set_xlim(lo_x, hi_x)
    ax.set_ylim(-0.6, n - 0.4)
    ax.set_yticks(range(n))
    ax.set_yticklabels(list(t["label"])[::-1], fontsize=6.5)
    ax.axvline(1.0, color="k", lw=0.6, ls=":")
    ax.set_xlabel("ratio, log scale (green: yes region; red: no region; white: undecided)", fontsize=8)
    ax.set_title(textwrap.fill(title, 80), fontsize=9)
    fig.tight_layout()
    return fig


def draw(verdicts, out_dir) -> list[Path]:
    """forest-1.png, forest-2.png, ... (at most ROWS_PER_FIGURE rows each, whole claims)."""
    t = rows(verdicts)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    for old in out_dir.glob("forest-*.png"):
        old.unlink()
    if t.empty:
        return []
    pages: list[pd.DataFrame] = []
    for _, g in t.groupby("claim", sort=False):
        if pages and len(pages[-1]) + len(g) <= ROWS_PER_FIGURE:
            pages[-1] = pd.concat([pages[-1], g])
        else:
            pages.append(g)
    paths = []
    for k, page in enumerate(pages, start=1):
        claims = ", ".join(dict.fromkeys(page[Col.claim]))
        fig = _draw(page, f"Deciding comparisons: {claims}")
        p = out_dir / f"forest-{k}.png"
        fig.savefig(p, dpi=130, bbox_inches="tight")  # nothing cut: long labels, a long title
        plt.close(fig)
        paths.append(p)
    return paths
