"""The committed attribution tables of the gap between ours and the paper's values
(data/processed/gap-*/attribution.csv, written by originals/attribution.py; docs/gap.md),
read, combined into one and printed.

It lives with the readers, below the originals, because the report's abstract and opening
(analysis/reporting) read it as well as docs/gap.md's generated table.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from serverbench import paths
from serverbench.analysis.reading.process import LANGUAGE_LABELS
from serverbench.rawdata.columns import Col

FILE_NAME = "attribution.csv"
COLUMNS = ["benchmark", "language", "config", "point", "factor", "ratio", "lo", "hi", "level", "n_rounds", "what"]
CELL = ["benchmark", "language", "config", "factor"]  # one number each
PREFIX = "gap-"
PILOT = "gap-pilot-"
JVM_FLAGS = "jvm flags"  # the original with our JVM flags / as the authors ran it (JVM originals)
# they multiply to the gap, each the step from the side nearer today to the one nearer the
# paper; a table has the ones its sweep measured ("jvm flags" only where it ran the original both ways)
# what no measured factor explains: the original here as the authors ran it / the paper's
# value. Not "the machine": Go's and Erlang's originals match the paper on the same machines
NOT_ATTRIBUTED = "not attributed"
PRODUCT = ("release", "quirks", "program", JVM_FLAGS, NOT_ATTRIBUTED)
HEADLINE = ("total", *PRODUCT)  # what the abstract names


def is_pilot(sweep_name: str) -> bool:
    """A pilot sweep proves the pipeline and measures nothing (docs/gap.md)."""
    return sweep_name.startswith(PILOT)


def _factor_rank(f: str) -> tuple[int, str]:
    order = [*HEADLINE, "product"]
    if f in order:
        return order.index(f), ""
    return (len(order), "") if f.startswith("quirk:") else (len(order) + 1, f)


def combine(tables: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """One table from the attribution tables of several sweeps ({sweep id: table}): each
    piece measures part of the cells (throughput-1core the Akka factors at 1 core, jdk the
    JDK row, pingping each language's PingPing), so each cell (benchmark, language, config,
    factor) comes from the newest sweep (by the id's UTC time) that measured it; a cell no
    sweep measured stays n/a. A column `sweep` names where each row comes from."""
    if not tables:
        return pd.DataFrame(columns=[*COLUMNS, "sweep"])
    by_time = sorted(tables, key=lambda sid: (sid.rsplit("-", 1)[-1], sid))
    rows = pd.concat([tables[sid].assign(sweep=sid) for sid in by_time], ignore_index=True)
    rows["_measured"] = np.isfinite(pd.to_numeric(rows[Col.ratio], errors="coerce"))
    rows["_order"] = range(len(rows))
    # per cell: a measured row beats an unmeasured one, a newer sweep an older one
    best = rows.sort_values(["_measured", "_order"]).groupby(CELL, sort=False).tail(1)
    seen = {f: i for i, f in enumerate(dict.fromkeys(rows[Col.factor]))}
    best = best.assign(_f=best[Col.factor].map(lambda f: (*_factor_rank(f), seen[f])))
    best = best.sort_values(["benchmark", "language", "_f", "_order"], kind="stable")
    return best.reindex(columns=[*COLUMNS, "sweep"]).reset_index(drop=True)


def committed(processed_root=None) -> dict[str, pd.DataFrame]:
    """{sweep id: attribution table} of every gap sweep processed under processed_root
    (default data/processed), pilots left out."""
    root = Path(processed_root) if processed_root is not None else paths.processed_dir()
    out = {}
    for f in sorted(root.glob(PREFIX + "*/" + FILE_NAME)):
        if not is_pilot(f.parent.name):
            out[f.parent.name] = pd.read_csv(f)
    return out


FEW = 3  # a cell paired over fewer rounds is flagged: its interval's level is at most 50 %


def _cell(r) -> str:
    if not np.isfinite(r[Col.ratio]):
        return "n/a"
    if not np.isfinite(r["lo"]):
        return f"{r[Col.ratio]:.3g}"
    n = int(r[Col.n_rounds])
    rounds = f"**n={n}, fewer than {FEW}**" if n < FEW else f"n={n}"
    return f"{r[Col.ratio]:.3g} [{r['lo']:.3g}, {r['hi']:.3g}] {rounds} @{r[Col.level] * 100:.0f}%"


def markdown(table: pd.DataFrame) -> str:
    """The attribution as markdown: a table per benchmark and language, a row per factor, a
    column per configuration (headed by its `point`, in the table's order); each cell ratio
    [lo, hi], the rounds paired (or runs, against the paper's value) and the interval's
    achieved level."""
    out = []
    for (b, lang), t in table.groupby(["benchmark", "language"], sort=False):
        cols = list(dict.fromkeys(t[Col.config]))
        point = dict(zip(t[Col.config], t["point"] if "point" in t else t[Col.config]))
        head = ["factor", *(str(point[c]) for c in cols)]
        out += [
            f"**{b}, {LANGUAGE_LABELS.get(lang, lang)}**",
            "",
            "| " + " | ".join(head) + " |",
            "|" + "---|" * len(head),
        ]
        for factor in dict.fromkeys(t[Col.factor]):
            f = t[t[Col.factor] == factor]
            cells = [_cell(f[f[Col.config] == c].iloc[0]) if (f[Col.config] == c).any() else "n/a" for c in cols]
            out.append(f"| {factor} | " + " | ".join(cells) + " |")
        out.append("")
    return "\n".join(out)
