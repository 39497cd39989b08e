"""Why Scala/Akka's throughput here is many times the paper's: the gap, factor by factor
(docs/akka-gap.md), from one akka-gap sweep (its runs.jsonl and original.jsonl).

Every factor is a ratio "the side nearer today / the side nearer the paper", so that the
factors multiply to the whole gap (ours today / the paper's value):

- ``release``: our program, fair, on Akka 2.6 / the same on Akka 2.4.12;
- ``quirks``: our port on Akka 2.4.12, fair / its paper variant (every quirk of the
  original); ``quirk:<knob>``: fair / that quirk alone (beside, not in the product);
- ``program``: our paper variant on Akka 2.4.12 / the authors' original program on Akka
  2.4.12, as it printed its count;
- ``unexplained (machine, year)``: the original here / the paper's value (the sheet's median of
  three runs); what is left when program, quirks and release are taken out, which the JDK 8
  the paper ran (none in the registries reached here), the machine and the year share;
- ``jdk 25 / 17``: the same Pekko jar on JDK 25 / on JDK 17 (beside, not in the product:
  both ends are today's);
- ``total``: ours today (scala_akka, fair) / the paper's value; ``product``: the
  product of release, quirks, program and unexplained, which should be near total.

Two sides of one sweep are compared paired by round (trial k of every side ran in round k;
Hodges-Lehmann with the exact Wilcoxon signed-rank interval, analysis.statistics.paired);
a side against the paper's single value is its median with the order-statistic interval,
divided by that value. Our runs count what they measured (paper_msgs_per_min, which the
exit race does not change); the original counts what it printed, and a round in which it
printed nothing has no pair (``n_rounds`` says how many paired).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd

from serverbench import audit_steps, paths
from serverbench.analysis.auditing import audit
from serverbench.analysis.reading import reference
from serverbench.analysis.statistics import paired, stats
from serverbench.benchmarks.throughput import original as akka_original

FILE_NAME = "attribution.csv"
TODAY = "scala_akka:fair"  # Akka 2.6, the committed sweeps' Scala/Akka
PORT_FAIR, PORT_PAPER = "scala_akka24:fair", "scala_akka24:paper"
ORIGINAL = "original"
JDK17, JDK25 = "scala_pekko:fair", "scala_pekko_jdk25:fair"
PRODUCT = ("release", "quirks", "program", "unexplained (machine, year)")
QUIRKS = tuple(s.name for s in audit_steps.steps("throughput", "scala_akka24")[2:])  # after fair, paper
COLUMNS = ["factor", "cores", "pairs", "ratio", "lo", "hi", "level", "n_rounds", "what"]


def sides(sweep_dir) -> pd.DataFrame:
    """One row per measured run: side ('<language>:<step>' or 'original'), cores, pairs,
    trial (the round), value (messages per minute), printed."""
    R = audit.load_runs(sweep_dir)
    rows = []
    if not R.empty:
        R = R[R["benchmark"] == "throughput"]
        for r in R.itertuples():
            rows.append(
                {
                    "side": f"{r.language}:{r.step}",
                    "cores": int(r.cores),
                    "pairs": int(r.pairs),
                    "trial": int(r.trial),
                    "value": float(r.true_value) if r.true_value is not None else np.nan,
                    "printed": bool(r.printed),
                }
            )
    path = Path(sweep_dir) / akka_original.FILE_NAME
    if path.exists():
        for line in path.read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            rec = json.loads(line)
            v = akka_original.msgs_per_min(rec)
            rows.append(
                {
                    "side": ORIGINAL,
                    "cores": int(rec["cores"]),
                    "pairs": int(rec["params"]["pairs"]),
                    "trial": int(rec["trial"]),
                    "value": np.nan if v is None else v,
                    "printed": v is not None,
                }
            )
    return pd.DataFrame(rows, columns=["side", "cores", "pairs", "trial", "value", "printed"])


def _paired(S: pd.DataFrame, num: str, den: str) -> stats.RatioCI:
    a, b = (S[(S["side"] == s) & S["value"].notna()][["trial", "value"]] for s in (num, den))
    got = paired.pairs_by_round(a, b)
    if isinstance(got, str):
        nan = float("nan")
        return stats.RatioCI(0, 0, nan, nan, nan, 0.0, paired.METHOD)
    return paired.paired_ratio_ci(*got, confidence=stats.CONFIDENCE)


def _to_paper(S: pd.DataFrame, side: str, paper_value: float) -> stats.RatioCI:
    m = stats.median_ci(S.loc[S["side"] == side, "value"].dropna())
    return stats.RatioCI(m.n, 1, m.median / paper_value, m.lo / paper_value, m.hi / paper_value, m.level, "median")


def _row(factor: str, cores: int, pairs: int, ci: stats.RatioCI, what: str) -> dict:
    return {
        "factor": factor,
        "cores": cores,
        "pairs": pairs,
        "ratio": ci.ratio,
        "lo": ci.lo,
        "hi": ci.hi,
        "level": ci.level,
        "n_rounds": ci.n_num,
        "what": what,
    }


def attribution(S: pd.DataFrame, paper: pd.DataFrame) -> pd.DataFrame:
    """The attribution table (COLUMNS) per core and pair count the sweep ran; `paper` has
    the paper's Scala/Akka msgs_per_min per cores and pairs (reference.fig5_median)."""
    out = []
    for (cores, pairs), g in S.groupby(["cores", "pairs"]):
        ref = paper[(paper["language"] == "scala_akka") & (paper["cores"] == cores) & (paper["pairs"] == pairs)]
        pv = float(ref["msgs_per_min"].iloc[0]) if not ref.empty else float("nan")
        rows = [
            _row("total", cores, pairs, _to_paper(g, TODAY, pv), "ours on Akka 2.6, fair / the paper's value"),
            _row("release", cores, pairs, _paired(g, TODAY, PORT_FAIR), "ours fair: Akka 2.6 / Akka 2.4.12"),
            _row("quirks", cores, pairs, _paired(g, PORT_FAIR, PORT_PAPER), "ours on 2.4.12: fair / paper variant"),
            _row("program", cores, pairs, _paired(g, PORT_PAPER, ORIGINAL), "ours paper on 2.4.12 / the original"),
            _row(
                "unexplained (machine, year)",
                cores,
                pairs,
                _to_paper(g, ORIGINAL, pv),
                f"the original here / the paper's value; {int((~g.loc[g['side'] == ORIGINAL, 'printed']).sum())} "
                "run(s) of the original printed nothing",
            ),
        ]
        logs = [math.log(r["ratio"]) for r in rows if r["factor"] in PRODUCT and r["ratio"] > 0]
        prod = math.exp(sum(logs)) if len(logs) == len(PRODUCT) else float("nan")
        nan = float("nan")
        rows.append(
            _row(
                "product",
                cores,
                pairs,
                stats.RatioCI(0, 0, prod, nan, nan, 0.0),
                "release x quirks x program x unexplained",
            )
        )
        for step in QUIRKS:
            rows.append(
                _row(
                    f"quirk:{step}", cores, pairs, _paired(g, PORT_FAIR, f"scala_akka24:{step}"), f"fair / {step} alone"
                )
            )
        rows.append(_row("jdk 25 / 17", cores, pairs, _paired(g, JDK25, JDK17), "the Pekko jar: JDK 25 / JDK 17"))
        out += rows
    return pd.DataFrame(out, columns=COLUMNS)


def write(sweep_dir, processed_root=None) -> Path:
    """data/processed/<sweep id>/attribution.csv (or under processed_root) from the sweep's
    raw folder."""
    sweep_dir = Path(sweep_dir)
    table = attribution(sides(sweep_dir), reference.fig5_median())
    folder = (Path(processed_root) if processed_root is not None else paths.processed_dir()) / sweep_dir.name
    folder.mkdir(parents=True, exist_ok=True)
    out = folder / FILE_NAME
    table.to_csv(out, index=False, float_format="%.6g")
    return out


def read(path) -> pd.DataFrame:
    """A written attribution table."""
    return pd.read_csv(path)


def _cell(r) -> str:
    if not np.isfinite(r["ratio"]):
        return "n/a"
    if not np.isfinite(r["lo"]):
        return f"{r['ratio']:.3g}"
    return f"{r['ratio']:.3g} [{r['lo']:.3g}, {r['hi']:.3g}] n={int(r['n_rounds'])} @{r['level'] * 100:.0f}%"


def markdown(table: pd.DataFrame) -> str:
    """The attribution table as markdown: a row per factor, a column per core and pair
    count; each cell ratio [lo, hi], the rounds paired (or runs, against the paper's value)
    and the interval's achieved level (docs/akka-gap.md embeds it; a test keeps them equal)."""
    cols = sorted({(int(c), int(p)) for c, p in zip(table["cores"], table["pairs"])})
    head = ["factor", *(f"{c} core{'s' if c > 1 else ''}, {p} pair{'s' if p > 1 else ''}" for c, p in cols)]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for factor in dict.fromkeys(table["factor"]):
        f = table[table["factor"] == factor]
        cells = []
        for c, p in cols:
            r = f[(f["cores"] == c) & (f["pairs"] == p)]
            cells.append(_cell(r.iloc[0]) if not r.empty else "n/a")
        lines.append(f"| {factor} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"
