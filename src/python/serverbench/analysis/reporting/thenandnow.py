"""Then and now: the paper's own value (from the authors' spreadsheets, data/reference/)
beside ours at the paper's scale (the `paper` profile's committed pieces: median and its
interval from the piece's summary.csv) and their ratio, for each of Figures 3-5 at the
figure's headline points and at every point that decides a claim there (the configurations
named in the pieces' claims_evidence.csv).

Why a table of its own: a verdict says whether a sentence of the paper holds; only the
values side by side say what changed since 2017 and by how much (as ReScience C's
replications print the original's number, theirs and the difference). Every number here is
read from committed tables; none is typed.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from serverbench import catalog
from serverbench.analysis.reading import reference
from serverbench.analysis.reading.process import LANGUAGE_LABELS
from serverbench.analysis.reporting import paperscale
from serverbench.rawdata.columns import Col

COLUMNS = [
    "figure",
    "benchmark",
    "piece",
    "sweep",
    "language",
    "point",
    "unit",
    "paper",
    "ours",
    "ours_lo",
    "ours_hi",
    "ratio",
    "ratio_lo",
    "ratio_hi",
    "decides",
    "other_ratios",
]
FIG5_HEADLINE_PAIRS = (1, 4, 64)  # the and the paper's text's points: one pair, a few, many
FIG4B_HEADLINE_N = (10_000, 100_000)
MEGA = 1e6


@dataclass(frozen=True)
class Point:
    """One row's configuration: the figure (and panel), the summary table's keys and their text."""

    figure: str
    table: str
    keys: tuple[tuple[str, int], ...]
    text: str


def _numbers(config: str) -> list[int]:
    return [int(x.replace(",", "")) for x in re.findall(r"\d[\d,]*", str(config))]


def _languages_of(comparison: str) -> set[str]:
    """The languages a comparison's name mentions ('Go/Scala/Akka' -> go, scala_akka)."""
    text = str(comparison)
    found = set()
    for lang, label in sorted(LANGUAGE_LABELS.items(), key=lambda kv: -len(kv[1])):
        if label in text:
            found.add(lang)
            text = text.replace(label, "")
    return found


def deciding_points(folder: Path) -> dict[tuple[str, tuple], set[str]]:
    """{(table, keys): claim ids} for every (language, configuration) a piece's claims
    decided at, read from its claims_evidence.csv; keys as in summary.csv."""
    f = Path(folder) / "claims_evidence.csv"
    try:
        ev = pd.read_csv(f)
    except (FileNotFoundError, pd.errors.EmptyDataError):  # a piece none of whose claims had evidence
        return {}
    ev = ev[ev[Col.config].notna() & ev[Col.result].isin(["yes", "no", "unclear"])]
    out: dict[tuple[str, tuple], set[str]] = {}
    for r in ev.itertuples():
        n, cfg = _numbers(r.config), str(r.config)
        langs = _languages_of(r.comparison)
        keys: list[tuple] = []
        if " kB x " in cfg and len(n) >= 2:  # pingping: '5 kB x 1,000,000'
            keys = [("pingping", (("message_bytes", n[0] * 1000), ("repetitions", n[1])))]
        elif "cores=" in cfg and len(n) >= 2:  # throughput: 'cores=1, pairs=64', 'cores=2, 1 vs 2 pairs'
            keys = [("throughput", (("cores", n[0]), ("pairs", p))) for p in n[1:]]
        elif Col.processes in cfg or "->" in cfg:  # spawn: 'processes=100,000', '10,000 -> 20,000'
            keys = [("spawn", (("processes", p),)) for p in n]
        for lang in langs:
            for k in keys:
                out.setdefault((lang, k), set()).add(r.claim)
    return out


def _ours(summary: pd.DataFrame, table: str, metric: str, lang: str, keys) -> tuple[float, float, float] | None:
    d = summary[(summary[Col.table] == table) & (summary[Col.metric] == metric) & (summary[Col.language] == lang)]
    for k, v in keys:
        d = d[d[k] == v]
    d = d[d[Col.n_ok] > 0]
    if d.empty or pd.isna(d[Col.median].iloc[0]):
        return None
    r = d.iloc[0]
    return float(r[Col.median]), float(r[Col.ci_lo]), float(r[Col.ci_hi])


@dataclass(frozen=True)
class _Piece:
    """One committed piece: its name, newest folder, that sweep's summary.csv and deciding
    points, and the summaries of its older sweeps (oldest first)."""

    name: str
    folder: Path
    summary: pd.DataFrame
    deciding: dict
    older: tuple[pd.DataFrame, ...] = ()


def _rows_at(pc: _Piece, pt: Point, ref: pd.DataFrame, ref_col: str, metric: str, unit: str, scale: float) -> list:
    """The rows of one point, a row per language: the paper's value (ref's rows with the
    point's keys), ours (the piece's summary), their ratio and the claims it decides."""
    out = []
    for lang in catalog.paper_languages():  # the paper's three (Fig. 3's Scala actors are not in its sheet)
        paper = ref[ref[Col.language] == lang]
        for k, v in pt.keys:
            paper = paper[paper[k] == v]
        ours = _ours(pc.summary, pt.table, metric, lang, pt.keys)
        med, lo, hi = ours if ours else (math.nan,) * 3
        p = float(paper[ref_col].iloc[0]) if len(paper) else math.nan
        ok = p > 0 and not math.isnan(p)
        before = [_ours(o, pt.table, metric, lang, pt.keys) for o in pc.older]
        other = ", ".join(num(b[0] / p) if b and ok else "\u2014" for b in before)
        out.append(
            {
                "figure": pt.figure,
                "benchmark": pt.table,
                "piece": pc.name,
                "sweep": pc.folder.name,
                "language": lang,
                "point": pt.text,
                "unit": unit,
                "paper": p / scale,
                "ours": med / scale,
                "ours_lo": lo / scale,
                "ours_hi": hi / scale,
                "ratio": med / p if ok else math.nan,
                "ratio_lo": lo / p if ok else math.nan,
                "ratio_hi": hi / p if ok else math.nan,
                "decides": ", ".join(sorted(pc.deciding.get((lang, (pt.table, pt.keys)), ()), key=claim_order)),
                "other_ratios": other,
            }
        )
    return out


def claim_order(cid: str) -> tuple:
    m = re.fullmatch(r"([A-Z]+)(\d+)(\w*)", cid)
    return (m.group(1), int(m.group(2)), m.group(3)) if m else (cid, 0, "")


def _fig3(pc: _Piece) -> list[dict]:
    ref = reference.fig3()
    s = pc.summary
    s = s[(s[Col.table] == "pingping") & (s[Col.metric] == "elapsed_s") & (s[Col.n_ok] > 0)]
    rows = []
    for size in sorted(s[Col.message_bytes].unique()):
        common = set(s.loc[s[Col.message_bytes] == size, "repetitions"]) & set(
            ref.loc[ref[Col.message_bytes] == size, "repetitions"]
        )
        if not common:
            continue
        reps = max(common)
        keys = (("message_bytes", int(size)), ("repetitions", int(reps)))
        pt = Point("Fig. 3", "pingping", keys, f"{int(size) // 1000} kB, R = {int(reps):,}")
        rows += _rows_at(pc, pt, ref, "time_s", "elapsed_s", "s", 1.0)
    return rows


def _fig4(pc: _Piece) -> list[dict]:
    b = reference.fig4b()
    a, _ = reference.fig4a()
    s = pc.summary
    s = s[(s[Col.table] == "spawn") & (s[Col.metric] == "all_ready_s") & (s[Col.n_ok] > 0)]
    decided = {dict(k[1])[Col.processes] for (_, k) in pc.deciding if k[0] == "spawn"}
    panel_b = sorted(set(FIG4B_HEADLINE_N) | {n for n in decided if n <= 100_000})
    largest = max(set(s[Col.processes]) & set(a[Col.processes]), default=None)
    wanted = [("Fig. 4(b)", n, b) for n in panel_b] + ([("Fig. 4(a)", largest, a)] if largest else [])
    rows = []
    for fig, n, ref in wanted:
        pt = Point(fig, "spawn", (("processes", int(n)),), f"N = {int(n):,}")
        rows += _rows_at(pc, pt, ref, "time_s", "all_ready_s", "s", 1.0)
    return rows


def _fig5(pc: _Piece) -> list[dict]:
    ref = reference.fig5_median()
    s = pc.summary
    s = s[(s[Col.table] == "throughput") & (s[Col.metric] == "paper_msgs_per_min") & (s[Col.n_ok] > 0)]
    rows = []
    for cores in sorted(s[Col.cores].unique()):
        decided = {
            dict(k[1])[Col.pairs] for (_, k) in pc.deciding if k[0] == "throughput" and dict(k[1])[Col.cores] == cores
        }
        for pairs in sorted(set(FIG5_HEADLINE_PAIRS) | decided):
            keys = (("cores", int(cores)), ("pairs", int(pairs)))
            pt = Point("Fig. 5", "throughput", keys, _plural(int(cores), "core") + ", " + _plural(int(pairs), "pair"))
            rows += _rows_at(pc, pt, ref, "msgs_per_min", "paper_msgs_per_min", "M exchanges/min", MEGA)
    return rows


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("s" if n != 1 else "")


_BY_TABLE = {"pingping": _fig3, "spawn": _fig4, "throughput": _fig5}


def rows(processed_dir: Path | None = None) -> pd.DataFrame:
    """Every then-and-now row of the committed pieces (COLUMNS); empty when none is committed.
    Ours is each piece's newest sweep; `other_ratios` gives ours / paper in its older sweeps
    (oldest first), so the spread between sweeps shows beside it."""
    out: list[dict] = []
    for piece, folders in sorted(paperscale.all_sweeps(processed_dir).items()):
        folder = folders[-1]
        older = tuple(pd.read_csv(f / "summary.csv") for f in folders[:-1])
        pc = _Piece(piece, folder, pd.read_csv(folder / "summary.csv"), deciding_points(folder), older)
        for table, fn in _BY_TABLE.items():
            if (pc.summary[Col.table] == table).any():
                out.extend(fn(pc))
    t = pd.DataFrame(out, columns=COLUMNS)
    order = {"Fig. 3": 0, "Fig. 4(b)": 1, "Fig. 4(a)": 2, "Fig. 5": 3}
    return t.sort_values("figure", key=lambda c: c.map(order), kind="stable").reset_index(drop=True)


# ------------------------------------------------------------------ words and tables


def num(x: float) -> str:
    """A value of the table: 3 significant digits, thousands separated, '—' when missing."""
    from serverbench.analysis.reporting.cells import sig

    return sig(x)


def interval(mid: float, lo: float, hi: float) -> str:
    """'0.508 [0.484, 0.533]', or '—' when the value is missing."""
    if mid is None or math.isnan(mid):
        return "\u2014"
    return f"{num(mid)} [{num(lo)}, {num(hi)}]"


def markdown(t: pd.DataFrame | None = None) -> str:
    """The tables in Markdown, one per figure, with a line saying how to read them."""
    t = rows() if t is None else t
    if t.empty:
        return "No piece of the `paper` profile is committed, so nothing can be set beside the paper's values."
    out = [
        "Ours: the median of the piece's runs with its interval (`data/processed/<sweep>/summary.csv`); the "
        "paper's: its spreadsheets' value (data/reference/: Fig. 3 one number per point, Fig. 4 means, Fig. 5 "
        "the median of 3 runs). *ours / paper* above 1 means a longer time (Figs. 3-4) or a higher "
        "throughput (Fig. 5) now; its interval is our interval divided by the paper's single value. *decides*: the "
        "claims this point is a deciding configuration of.",
    ]
    if t["other_ratios"].fillna("").astype(bool).any():
        out[0] += (
            " Ours is each piece's newest sweep; the *older sweeps* column gives ours / paper in the piece's "
            "other sweeps (oldest first), the spread between sweeps."
        )
    for fig, g in t.groupby("figure", sort=False):
        unit = g["unit"].iloc[0]
        sweeps = ", ".join(f"`{s}`" for s in dict.fromkeys(g[Col.sweep]))
        older = g["other_ratios"].fillna("").astype(bool).any()
        head = ["point", "language", "paper", "ours [interval]", "ours / paper [interval]"]
        head += ["older sweeps", "decides"] if older else ["decides"]
        out += ["", f"**{fig}** ({unit}; {sweeps})", "", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        for r in g.itertuples():
            cells = [
                r.point,
                LANGUAGE_LABELS.get(r.language, r.language),
                num(r.paper),
                interval(r.ours, r.ours_lo, r.ours_hi),
                interval(r.ratio, r.ratio_lo, r.ratio_hi),
            ]
            cells += [r.other_ratios or "", r.decides or ""] if older else [r.decides or ""]
            out.append("| " + " | ".join(cells) + " |")
    return "\n".join(out)
