"""Replication, measured: each claim's verdicts over every committed sweep of a profile,
by protocol version and design, post-freeze sweeps by machine kind, and the effect sizes
behind them (docs/protocol.md section 7).

The record itself (which sweeps, their design and version, the counts) is record.py; this
module draws it for readers: `figure(record)` (each claim's verdict in each sweep),
`effects_figure(effects)` (each deciding ratio's sweep estimates by machine, effects.py) and
`readme_findings()` (README's "What we found", grouped by the verdict of the confirmation
sweeps, the exploratory ones beside). Every name of record.py is importable from here.
"""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd

from serverbench import protocol
from serverbench.analysis.claims import effects, engine, results
from serverbench.analysis.claims.record import (  # noqa: F401  (the record's names, importable from here)
    COLUMNS,
    CONFIRMATION,
    EXPLORATORY,
    FOLDER,
    _info,
    beside,
    by_sweep,
    counts,
    design_of,
    effects_table,
    flips,
    group,
    groups,
    line,
    load,
    machine_kind,
    of_raw_sweeps,
    protocol_note,
    record,
    short_machine,
    summary_lines,
    sweeps,
    unaccounted,
    write,
)
from serverbench.rawdata.columns import Col

VERDICT_COLORS = {
    engine.SUPPORTED: "#4daf4a",
    engine.CONTRADICTED: "#e41a1c",
    engine.INCONCLUSIVE: "#d9d9d9",
    engine.NOT_TESTABLE: "#ffffff",
    engine.ERROR: "#000000",
}
RESULT_OF = {engine.SUPPORTED: "yes", engine.CONTRADICTED: "no", engine.INCONCLUSIVE: "unclear"}


def figure(rec: pd.DataFrame):
    """The record as a picture: one row per claim (the protocol's order), one column per
    sweep (oldest first), each cell coloured by its verdict; a dashed line where the
    confirmation sweeps begin; the machine kind under each column."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch

    ids = [c[Col.id] for c in protocol.load()["claims"] if c[Col.id] in set(rec[Col.id])]
    sweeps_ = list(dict.fromkeys(rec[Col.sweep]))
    grid = rec.pivot_table(index="id", columns="sweep", values="verdict", aggfunc="first").reindex(ids)[sweeps_]
    codes = {v: i for i, v in enumerate(VERDICT_COLORS)}
    z = grid.apply(lambda col: col.map(lambda v: codes.get(v, codes[engine.ERROR])))
    fig, ax = plt.subplots(figsize=(max(6.0, 0.22 * len(sweeps_) + 2), 0.28 * len(ids) + 1.8))
    cmap = matplotlib.colors.ListedColormap(list(VERDICT_COLORS.values()))
    ax.imshow(z.to_numpy(dtype=float), aspect="auto", cmap=cmap, vmin=-0.5, vmax=len(codes) - 0.5)
    ax.set_yticks(range(len(ids)), ids, fontsize=8)
    per = rec.drop_duplicates("sweep").set_index("sweep").loc[sweeps_]
    ax.set_xticks(range(len(sweeps_)), [short_machine(m).split()[0] for m in per[Col.machine]], rotation=90, fontsize=6)
    ax.set_xticks([x - 0.5 for x in range(len(sweeps_) + 1)], minor=True)
    ax.set_yticks([y - 0.5 for y in range(len(ids) + 1)], minor=True)
    ax.grid(which="minor", color="0.6", lw=0.4)
    ax.grid(which="major", visible=False)
    ax.tick_params(which="minor", length=0)
    labels = [group(d, v) for d, v in zip(per[Col.design], per[Col.protocol])]
    for x in range(1, len(labels)):
        if labels[x] != labels[x - 1]:
            ax.axvline(x - 0.5, color="k", ls="--", lw=1.2)
    names = " | ".join(f"{n}: {labels.count(n)}" for n in dict.fromkeys(labels))
    ax.set_xlabel(f"{len(sweeps_)} committed sweeps, oldest first (machine of each; dashed: a new group)\n{names}")
    ax.set_title("Each claim's verdict in each sweep (judged by the protocol in force when it ran)", fontsize=10)
    seen = set(rec[Col.verdict])
    handles = [Patch(facecolor=c, edgecolor="0.5", label=v) for v, c in VERDICT_COLORS.items() if v in seen]
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1), fontsize=7, frameon=False)
    fig.tight_layout()
    return fig


def effects_figure(eff: pd.DataFrame):
    """Each deciding ratio's sweep estimates by machine and design (effects.figure)."""
    return effects.figure(eff)


def quote(cid: str) -> str:
    """A claim's code with its full sentence (never cut), as README and the report quote it."""
    return f"**{cid}** \u201c{protocol.claim(cid)['sentence'].rstrip('.')}\u201d"


NOT_TESTABLE = results.NOT_TESTABLE_WORD  # the claims tables' "not testable on this machine", without its reason
_word = results.word


def _confirming(rec: pd.DataFrame) -> tuple[pd.DataFrame, str]:
    """The sweeps the findings are grouped by: the confirmation sweeps of the newest version
    that has any (else the exploratory ones), and that group's name."""
    conf = rec[rec[Col.design] == CONFIRMATION]
    if conf.empty:
        return rec, group(EXPLORATORY, int(rec[Col.protocol].max()))
    v = int(conf[Col.protocol].max())
    return conf[conf[Col.protocol] == v], group(CONFIRMATION, v)


def readme_findings(
    rec: pd.DataFrame | None = None,
    eff: pd.DataFrame | None = None,
    not_testable_reason: Callable[[str], str] | None = None,
) -> str:
    """README's "What we found": each claim under the verdict it gets in at least three
    quarters of the newest version's confirmation sweeps (else "differ"), with that count,
    the exploratory sweeps' count beside, and the deciding ratio that most often gave the
    verdict with its spread over the sweeps; every committed sweep accounted for (a
    generated block). not_testable_reason: a claim's reason for being not testable (the four
    of reporting/vocabulary.py), named beside it."""
    rec_is_committed = rec is None  # the committed record: every committed sweep is accounted for
    rec = load("quick") if rec is None else rec
    if eff is None:
        eff = effects_table("quick", rec=rec) if not rec.empty else pd.DataFrame(columns=effects.COLUMNS)
    base, base_name = _confirming(rec)
    design = base[Col.design].iloc[0] if len(base) else CONFIRMATION
    explo = rec[rec[Col.design] == EXPLORATORY]
    by: dict[str, list[str]] = {}
    for cid in [c[Col.id] for c in protocol.load()["claims"]]:
        g = base[base[Col.id].eq(cid)]
        if g.empty:
            continue
        top = g[Col.verdict].map(_word).value_counts()
        verdict, k = top.index[0], int(top.iloc[0])
        key = verdict if k >= 0.75 * len(g) else "split"
        if key == "split":
            detail = "; ".join(
                f"{v} {len(gv)}/{len(g)}"
                for v, gv in sorted(g.groupby(g[Col.verdict].map(_word)), key=lambda x: -len(x[1]))
            )
        else:
            detail = f"{k}/{len(g)}"
        e = explo[explo[Col.id].eq(cid)]
        if design == CONFIRMATION and not e.empty:
            detail += f"; exploratory: {e[Col.verdict].map(_word).eq(verdict).sum()}/{len(e)} {verdict}"
        if key == NOT_TESTABLE and not_testable_reason is not None:
            detail = f"{not_testable_reason(cid)}; {detail}"
        effect = effects.headline(eff, cid, RESULT_OF.get(verdict, "unclear"), design) if not eff.empty else ""
        by.setdefault(key, []).append(f"{quote(cid)} ({detail}" + (f"; {effect}" if effect else "") + ")")
    names = {
        engine.SUPPORTED: "Supported",
        engine.CONTRADICTED: "Contradicted",
        engine.INCONCLUSIVE: "Inconclusive at this scale",
        "split": "Split: no verdict given by three quarters of these sweeps (each verdict's count in brackets)",
        NOT_TESTABLE: "Not testable (the reason in brackets)",
        engine.ERROR: "Error",
    }
    per = rec.drop_duplicates("sweep")
    only = [
        short_machine(m)
        for m in sorted(set(per[Col.machine]))
        if set(per.loc[per[Col.machine] == m, "design"]) == {EXPLORATORY}
    ]
    lines = [
        f"Each claim judged by the protocol in force when its sweep ran, in each of {len(per)} committed `quick` "
        "sweeps (the quick profile's reduced scale): " + "; ".join(summary_lines(rec)[0].split(": ", 1)[1:]) + ". "
        f"Grouped by the verdict of the {base[Col.sweep].nunique()} {base_name} sweeps; in brackets, how many of "
        "them gave it, the exploratory sweeps beside (an earlier design: 5 deciding rounds, some with a "
        "second stage), and the deciding ratio that most often gave the verdict, with its spread over the sweeps:",
        "",
    ]
    for key, title in names.items():
        if by.get(key):
            lines.append(f"* {title}: " + "; ".join(by[key]) + ".")
    fl = flips(rec)
    lines += [
        "",
        f"No claim was supported in one sweep and contradicted in another ({len(fl)} such pairs)."
        if not fl
        else f"{len(fl)} pair{'s' * (len(fl) != 1)} of sweeps in which a claim was supported in one and contradicted "
        "in the other: " + "; ".join(f"{c} (`{a}` vs `{b}`)" for c, a, b in fl) + ".",
    ]
    left = unaccounted("quick") if rec_is_committed else []
    if left:
        lines.append("Not in the record: " + "; ".join(f"`{sweep}` ({why})" for sweep, why in left) + ".")
    if only:
        lines.append(
            f"Machine and design are confounded: every {', '.join(only)} sweep is exploratory, so a difference "
            "between machines is also one of date and design."
        )
    return "\n".join(lines)
