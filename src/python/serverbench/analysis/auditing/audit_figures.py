"""The audit figure: per benchmark and language, paper/fair with its interval, decomposed
quirk by quirk (a waterfall on a log scale). Data: analysis.auditing.audit."""

from __future__ import annotations

import math

import matplotlib.pyplot as plt
import numpy as np

from serverbench.analysis.auditing import audit
from serverbench.analysis.claims.engine import label as _label
from serverbench.analysis.plotting import figstyle
from serverbench.analysis.reading import registry
from serverbench.rawdata.columns import Col


@registry.figure("audit", title="Audit: paper/fair, quirk by quirk", tables=(), order=90)
def audit_figure(P, languages=None, show_reference: bool = True, **_):
    """None unless the sweep has paper-variant runs."""
    runs = audit.audit_runs(P)
    if runs.empty or not (runs[Col.step] == "paper").any():
        return None
    R = audit.ratios(runs)
    D = audit.decomposition(R)
    langs = [x for x in audit.languages() if x in set(runs[Col.language]) and (languages is None or x in languages)]
    specs = audit.specs()
    benches = [b for b in specs if b in set(runs[Col.benchmark])]
    fig, axes = plt.subplots(len(benches), len(langs), figsize=(4.2 * len(langs), 2.9 * len(benches)), squeeze=False)
    for i, b in enumerate(benches):
        for j, lang in enumerate(langs):
            _waterfall(axes[i][j], R, D, b, lang)
            if i == 0:
                axes[i][j].set_title(_label(lang))
            if j == 0:
                axes[i][j].set_ylabel(f"{b}\n{specs[b].what}", fontsize=8)
    # The quick report shows the newest audit sweep's figure, not its own sweep's: name it.
    sweeps = ", ".join(sorted({str(s) for s in runs[Col.sweep_id].dropna()})) if Col.sweep_id in runs else ""
    fig.suptitle(
        "Paper variant / fair variant, quirk by quirk: each bar is one quirk alone "
        "(cumulative on a log scale), then their interaction; the last bar is paper/fair "
        "with its Hodges-Lehmann interval (achieved level in the label)" + (f"\nsweep {sweeps}" if sweeps else ""),
        fontsize=8,
    )
    fig.tight_layout(rect=(0, 0, 1, 0.95))
    return fig


def _waterfall(ax, R, D, bench, lang):
    r = R[(R[Col.benchmark] == bench) & (R[Col.language] == lang)]
    d = D[(D[Col.benchmark] == bench) & (D[Col.language] == lang)]
    if r.empty or d.empty:
        ax.text(0.5, 0.5, "no paper runs", ha="center", va="center", transform=ax.transAxes)
        ax.set_axis_off()
        return
    row = d.iloc[0]
    singles = r[(r[Col.step] != "paper") & r[Col.ratio].notna() & (r[Col.ratio] > 0)]
    names, starts, ends = [], [], []
    cum = 0.0
    for s, ratio in zip(singles[Col.step], singles[Col.ratio]):
        names.append(s)
        starts.append(cum)
        cum += math.log(ratio)
        ends.append(cum)
    pr = row[Col.paper_ratio]
    if pr > 0 and not math.isnan(pr):
        names.append("interaction")
        starts.append(cum)
        ends.append(math.log(pr))
    for k, (a, e) in enumerate(zip(starts, ends)):
        ax.bar(
            k,
            math.exp(max(a, e)) - math.exp(min(a, e)),
            bottom=math.exp(min(a, e)),
            color="#c44e52" if e > a else "#4c72b0",
            alpha=0.75 if names[k] != "interaction" else 0.35,
        )
    k = len(names)
    if pr > 0 and not math.isnan(pr):
        lo, hi = row[Col.paper_lo], row[Col.paper_hi]
        ax.bar(k, abs(pr - 1), bottom=min(1, pr), color="black", alpha=0.8)
        ax.errorbar([k], [pr], yerr=[[max(pr - lo, 0)], [max(hi - pr, 0)]], color="grey", capsize=3)
        names.append(f"paper\n{pr:.2g}x ({row[Col.paper_level] * 100:.0f}%)")
        if row[Col.not_printed]:
            ax.text(k, pr, f" {int(row[Col.not_printed])} printed nothing", fontsize=6, rotation=90, va="bottom")
    else:
        names.append("paper\nnothing printed" if row[Col.not_printed] else "paper\nn/a")
    ax.axhline(1.0, color="grey", lw=0.6)
    ax.set_yscale("log")
    figstyle.plain_ratio_ticks(ax)
    ax.set_xticks(np.arange(len(names)))
    ax.set_xticklabels(names, rotation=60, ha="right", fontsize=6)
    ax.tick_params(axis="y", labelsize=7)
