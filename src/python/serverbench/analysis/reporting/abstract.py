"""The abstract at the top of report.html and README (at most 150 plain words), from
committed data (the table of every deciding ratio beside its verdict is deciding.py's):
the `paper` profile's pieces (their sweep.json, claims.csv and claims_evidence.csv), the
then-and-now rows (thenandnow.py), the verdicts on the paper's own numbers
(data/processed/paper-reference/claims.csv) and, when it is committed, the attribution of
the gap between ours and the paper's values (data/processed/gap-*/attribution.csv). No number is typed.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pandas as pd

from serverbench import paths
from serverbench.analysis.claims.record import kind_of
from serverbench.analysis.reading import gap_tables
from serverbench.analysis.reading.process import LANGUAGE_LABELS
from serverbench.analysis.reporting import deciding, paperscale, thenandnow, vocabulary
from serverbench.analysis.reporting.cells import sig
from serverbench.analysis.reporting.deciding import (  # noqa: F401  (the deciding table's, read here by others)
    claim_verdict,
    claims,
    deciding_markdown,
    one_verdict,
)
from serverbench.rawdata.columns import Col

MAX_WORDS = 150
PAPER = "Valkov, Chechina and Trinder (SAC 2018)"
REFERENCE_FOLDER = "paper-reference"  # the claims judged on the paper's own numbers
GAP_COLUMNS = ("benchmark", "language", "config", "factor", "ratio", "lo", "hi", "n_rounds")


def _root(processed_dir: Path | None) -> Path:
    return Path(processed_dir) if processed_dir else paths.processed_dir()


def _read(f: Path) -> pd.DataFrame:
    try:
        return pd.read_csv(f)
    except (FileNotFoundError, pd.errors.EmptyDataError):
        return pd.DataFrame()


# ------------------------------------------------------------------ the abstract


def _machine(folders: list[Path]) -> str:
    """Where the sweeps ran, as the data can show it: each kind of machine (CPU name,
    family/model/stepping, CPUs, memory in GiB: record.kind_of), what the kinds share said
    once, the number of boots only where every sweep recorded its boot id, and the days the
    sweeps started. Two boots of one VM type with another kernel build or memory a few KiB
    apart are one kind; nothing in the older manifests tells instances apart."""
    infos = [json.loads((f / "sweep.json").read_text(encoding="utf-8")) for f in folders]
    kinds = sorted({kind_of(i) for i in infos})
    days = sorted({str(i.get(Col.first_started_utc) or "")[:10] for i in infos} - {""})
    cpus = [k.split(", ", 1) for k in kinds]
    shared = {rest[0] if rest else "" for _, rest in (([c[0]], c[1:]) for c in cpus)}

    def listed(xs: list[str]) -> str:
        return xs[0] if len(xs) == 1 else ", ".join(xs[:-1]) + " and " + xs[-1]

    if len(kinds) > 1 and len(shared) == 1 and "" not in shared:
        head = f"{listed([c[0] for c in cpus])} machines, each with {shared.pop()}"
    else:
        head = listed(kinds) + (" machines" if len(kinds) > 1 else "")
    boots = [((i.get(Col.manifest) or {}).get(Col.machine) or {}).get(Col.boot_id) for i in infos]
    notes = [f"{len(set(boots))} boots"] if boots and all(boots) and len(set(boots)) > 1 else []
    if days:
        notes.append(days[0] + (f" to {days[-1]}" if len(days) > 1 else ""))
    return head + (f" ({'; '.join(notes)})" if notes else "")


def _range(x: pd.Series) -> str:
    lo, hi = sig(float(x.min()), 2), sig(float(x.max()), 2)
    return lo if lo == hi else f"{lo}-{hi}"


def largest_change(t: pd.DataFrame) -> tuple[str, str, pd.DataFrame] | None:
    """(figure, language, its rows) of the figure and language whose values moved furthest
    from the paper's (the largest median |log(ours / paper)|), or None without rows."""
    d = t[t[Col.ratio].notna() & (t[Col.ratio] > 0)].copy()
    if d.empty:
        return None
    d["fig"] = d["figure"].str.replace(r"\(.\)$", "", regex=True).str.strip()
    d["move"] = d[Col.ratio].map(lambda r: abs(math.log(r)))
    fig, lang = d.groupby(["fig", "language"])["move"].median().idxmax()
    return fig, lang, d[d["fig"] == fig]


def gap_attribution(processed_dir: Path | None = None) -> tuple[str, pd.DataFrame] | None:
    """(the sweeps it comes from, comma-separated; the attribution table) of the gap between
    ours and the paper's values, combined from every committed gap sweep (each piece measures
    part of it: analysis/reading/gap_tables), or None when none is committed (or it lacks its
    columns)."""
    tables = {s: t for s, t in gap_tables.committed(_root(processed_dir)).items() if set(GAP_COLUMNS) <= set(t.columns)}
    if not tables:
        return None
    t = gap_tables.combine(tables)
    used = [s for s in tables if s in set(t.loc[t[Col.ratio].notna(), "sweep"])]
    return ", ".join(used or sorted(tables)), t  # its `sweep` column names each row's sweep


def _why(processed_dir: Path | None, fig: str, lang: str, bench: str, sweeps: bool = True) -> str:
    """Why the largest change happened, as far as the attribution measured it: the whole gap
    and its factors at the figure's benchmark in that language (with the gap sweeps named,
    unless `sweeps` is False: the table after the abstract names them)."""
    gap = gap_attribution(processed_dir)
    t = None if gap is None else gap[1]
    if t is not None:
        t = t[(t[Col.benchmark] == bench) & (t[Col.language] == lang)]
        t = t[t[Col.factor].isin(gap_tables.HEADLINE) & t[Col.ratio].notna()]
    if t is None or t.empty:
        return (
            f"Why is not measured yet: no attribution of the {fig} gap in {LANGUAGE_LABELS.get(lang, lang)} "
            "(data/processed/gap-*/attribution.csv) is committed."
        )
    parts = [f"{f} {_range(g[Col.ratio])}x" for f, g in t.groupby("factor", sort=False)]
    where = f" ({', '.join(sorted(set(t[Col.sweep])))})" if sweeps else ""
    return f"Measured attribution{_scope(t)}{where}: " + "; ".join(parts) + "."


def _scope(t: pd.DataFrame) -> str:
    """' at 1 core': the measured points' parts (of their `point` texts), each part shared by
    all of them as it is and one that varies as the span of its numbers ('1 and 2 cores',
    '1-64 pairs'), so a reader sees which part of the figure's range the attribution covers;
    ' at 6 points' when a varying part is not '<number> <unit>'; '' for a table without points."""
    if "point" not in t or t["point"].isna().all():
        return ""
    # split on ', ' only: '1,000,000' is one part
    points = [q.split(", ") for q in dict.fromkeys(t["point"].dropna().astype(str))]
    if len({len(q) for q in points}) != 1:
        return f" at {len(points)} points"
    out = []
    for values in zip(*points):
        span = values[0] if len(set(values)) == 1 else _span(list(dict.fromkeys(values)))
        if span is None:
            return f" at {len(points)} points"
        out.append(span)
    return " at " + ", ".join(out)


def _span(values: list[str]) -> str | None:
    """'1 and 2 cores' from '1 core', '2 cores'; '1-64 pairs' from three or more; None unless
    every value is '<number> <unit>' with one unit (singular or plural)."""
    parsed = []
    for v in values:
        m = re.fullmatch(r"([0-9]{1,3}(?:,[0-9]{3})*(?:\.[0-9]+)?|[0-9]+(?:\.[0-9]+)?) (\S+)", v)
        if not m:
            return None
        parsed.append((float(m.group(1).replace(",", "")), m.group(1), m.group(2)))
    if len({u.removesuffix("s") for _, _, u in parsed}) != 1:
        return None
    parsed.sort()
    unit = max((u for _, _, u in parsed), key=len)  # the plural
    if len(parsed) == 2:
        return f"{parsed[0][1]} and {parsed[1][1]} {unit}"
    return f"{parsed[0][1]}-{parsed[-1][1]} {unit}"


def verdict_groups(ran: pd.DataFrame) -> dict[tuple[str, str], list[str]]:
    """{(verdict, reason): claim ids in the paper's order}: one verdict per claim, the claim's
    at the paper's scale over all its pieces (claim_verdict), not a piece's."""
    groups: dict[tuple[str, str], list[str]] = {}
    for cid, g in ran.groupby("id", sort=False):
        groups.setdefault(claim_verdict(g), []).append(cid)
    order = {v: i for i, v in enumerate(vocabulary.ORDER)}
    keys = sorted(groups, key=lambda k: (order.get(k[0], len(order)), k[1]))
    return {k: sorted(groups[k], key=thenandnow.claim_order) for k in keys}


def _verdict_sentence(ran: pd.DataFrame) -> str:
    """The counts only: the claims' codes come with their texts in the table after the
    abstract (a code never appears on a page before its claim's words)."""
    parts = [f"{len(ids)} {v}" + (f" ({r})" if r else "") for (v, r), ids in verdict_groups(ran).items()]
    listed = parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]
    return f"Of the {ran[Col.id].nunique()} claims judged there: {listed}."


def _flipped(processed_dir: Path | None, ran: pd.DataFrame, rows: pd.DataFrame, lang: str) -> list[str]:
    """The claims decided at points of `rows` that involve `lang`, supported on the paper's
    own numbers and contradicted here."""
    own = _read(_root(processed_dir) / REFERENCE_FOLDER / "claims.csv")
    if own.empty:
        return []
    own_v = dict(zip(own[Col.id], own[Col.verdict]))
    ids = {c.strip() for d in rows.loc[rows[Col.language] == lang, "decides"] for c in str(d).split(",") if c.strip()}
    here = {cid: claim_verdict(g)[0] for cid, g in ran.groupby("id")}
    return sorted(
        (c for c in ids if own_v.get(c) == vocabulary.SUPPORTED and here.get(c) == vocabulary.CONTRADICTED),
        key=thenandnow.claim_order,
    )


def text(processed_dir: Path | None = None) -> str:
    """The abstract (plain words, at most MAX_WORDS): what was re-run, where, what holds, what
    changed most since 2017 and why as far as measured."""
    by_piece = paperscale.all_sweeps(processed_dir)
    ran = deciding.ran(processed_dir)
    if ran.empty:
        return (
            f"No sweep at the paper's own parameters is committed yet, so this package cannot yet say whether the "
            f"conclusions of {PAPER} hold at their scale; the quick sweeps below test them at a reduced scale."
        )
    pieces = sorted(set(ran["piece"]))
    out = [
        f"We re-ran the experiments of {PAPER} at the paper's own parameters, in {len(pieces)} pieces "
        f"({', '.join(pieces)}), on {_machine([f for p in pieces for f in by_piece[p]])}.",
        _verdict_sentence(ran),
    ]
    t = thenandnow.rows(processed_dir)
    big = largest_change(t)
    if big is not None:
        fig, lang, rows = big
        others = [
            f"{LANGUAGE_LABELS.get(o, o)}'s {_range(g[Col.ratio])}" for o, g in rows.groupby("language") if o != lang
        ]
        what = "throughput" if fig == "Fig. 5" else "time"
        sentence = (
            f"The largest change since 2017 is in {fig}: {LANGUAGE_LABELS.get(lang, lang)}'s {what} is "
            f"{_range(rows.loc[rows[Col.language] == lang, 'ratio'])} times the paper's"
            + (f"; on the same machines {' and '.join(others)}" if others else "")
            + "."
        )
        flipped = _flipped(processed_dir, ran, rows, lang)
        bench = str(rows[Col.benchmark].iloc[0])
        # within the budget, in this order: everything; the attribution without its sweeps'
        # ids (the table names them); the flipped claims by id alone; a pointer to the table
        for named, sweeps, why in (
            (True, True, True),
            (True, False, True),
            (False, False, True),
            (False, False, False),
        ):
            turns = f" It turns {_named(flipped, named)} from supported on the paper's own numbers to contradicted."
            tail = [
                sentence + (turns if flipped else ""),
                _why(processed_dir, fig, lang, bench, sweeps)
                if why
                else "The measured attribution of the gap is in the table below.",
            ]
            if len(" ".join(out + tail).split()) <= MAX_WORDS:
                break
        out += tail
    return " ".join(out)


def _named(ids: list[str], short_names: bool = True) -> str:
    """'C6 (Go 2-5x the throughput) and C11 (Akka's slow start)': each claim by its id and its
    short name (engine.Claim.short), its id alone without one or without short_names."""
    from serverbench.analysis.claims import engine

    short = {c.id: c.short for c in engine.all_claims()} if short_names else {}
    names = [f"{c} ({short[c]})" if short.get(c) else c for c in ids]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
