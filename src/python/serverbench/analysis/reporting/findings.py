"""The report's first screen ("findings first"): one short line per claim with its
verdict, the deciding ratios and the replication count, the claims the sweep's profile ran
none of the benchmarks of named once; and the glossary of the words those lines use, in the
numbers of the protocol version that judged the sweep (method.py). Its numbers are written
by cells.py; the report's title, sections and contents are layout.py's.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import pandas as pd

from serverbench.analysis.claims import engine, results
from serverbench.analysis.reading import registry
from serverbench.analysis.reporting import method, vocabulary
from serverbench.analysis.reporting.cells import DASH, is_missing, sig
from serverbench.analysis.reporting.layout import (  # noqa: F401  (the report's layout, once named here)
    APPENDIX,
    EVIDENCE,
    FINDINGS,
    GLOSSARY,
    PAPER_SCALE,
    SECTIONS,
    TITLE,
    anchor,
    toc,
)
from serverbench.rawdata.columns import Col

# ------------------------------------------------------------------ the first screen

_VERDICT_ORDER = (results.SUPPORTED, results.CONTRADICTED, results.INCONCLUSIVE, results.NOT_TESTABLE, results.ERROR)
_SHORT_VERDICT = {results.NOT_TESTABLE: "not testable"}
_DECIDING = (results.YES, results.NO, results.UNCLEAR)
_WHY = (  # (substring of a comparison's or verdict's why, the few words the first screen says)
    ("Holm", "a 'no' not kept after Holm"),
    ("too few rounds", "too few rounds"),
    ("load generator", "load generator saturated"),
    ("cannot pair", "rounds cannot be paired"),
    ("neither region", "interval in neither region"),
)


def _label(comparison: str) -> str:
    """'Erlang/Scala/Akka time' -> 'Erlang/Akka'; 'go/go (K=4) / scala/scala (K=1, ...)' ->
    'go/go / scala/scala': the first screen's short name of a comparison."""
    s = re.sub(r"\s+\([^()]*\)", "", str(comparison))
    s = re.sub(r",? (time|all_ready_s|spawn_call_s|µs per round trip)$", "", s)
    return s.replace("/Scala/Akka", "/Akka").strip()


def _range(values: Iterable[float]) -> str:
    v = [float(x) for x in values if not is_missing(x)]
    if not v:
        return ""
    lo, hi = sig(min(v), 2), sig(max(v), 2)
    return lo if lo == hi else f"{lo}-{hi}"


def _numbers(v) -> str:
    """The deciding ratios of a verdict, by comparison: 'Go/Akka 0.26-0.67, Erlang/Akka 0.71-0.85 (8 rounds)'."""
    ev = v.evidence
    if ev is None or ev.empty or Col.result not in ev.columns:
        return ""
    ev = ev[ev[Col.result].isin(_DECIDING)]
    if v.verdict == results.CONTRADICTED:  # the comparisons against the claim
        ev = ev[ev[Col.result] == results.NO]
    if ev.empty:
        return ""
    if Col.ratio not in ev.columns or ev[Col.ratio].isna().all():  # C3: a limit, not a ratio
        return ", ".join(f"{_label(c)}: {r}" for c, r in zip(ev[Col.comparison], ev[Col.result]))
    # a comparison without a ratio beside ones with (IM5's count of lost messages) gives its result
    return ", ".join(
        f"{_label(c)} {_range(g[Col.ratio])}" if _range(g[Col.ratio]) else f"{_label(c)}: {', '.join(g[Col.result])}"
        for c, g in ev.groupby("comparison", sort=False)
    )


def _short_why(v) -> str:
    """Why an inconclusive or not testable verdict is one, in a few words."""
    if v.verdict == results.INCONCLUSIVE:
        ev = v.evidence
        n = int((ev[Col.result] == results.UNCLEAR).sum()) if ev is not None and Col.result in ev.columns else 0
        k = int(ev[Col.result].isin(_DECIDING).sum()) if n else 0
        reasons = [w for key, w in _WHY if key in (v.why or "")] or ["undecided"]
        return (f"{n} of {k} undecided: " if n else "") + ", ".join(reasons)
    words = str(v.why or v.summary or "").split(";")[0].split()
    return " ".join(words[:14]) + (" ..." if len(words) > 14 else "")


def _id_map(col) -> dict[str, str]:
    """id -> text, from a DataFrame (id and one column), a Series indexed by id or a dict."""
    if col is None:
        return {}
    if isinstance(col, pd.DataFrame):
        other = [c for c in col.columns if c != "id"]
        return {str(i): t for i, t in zip(col[Col.id], col[other[0]])} if other else {}
    return {str(k): t for k, t in dict(col).items()}


def _replication(text) -> str:
    """'confirmation, protocol 1: inconclusive in 4 of 5 (...); supported in 1 of 5 (...) |
    exploratory, protocol 1: inconclusive in 37 of 38 (...)' -> 'elsewhere: in 5 confirmation
    sweeps of protocol 1, inconclusive 4, supported 1; in 38 exploratory sweeps of protocol 1,
    inconclusive 37': each group of sweeps (replication.beside's ' | '-separated parts)
    named by what it is and how many sweeps it holds; an unnamed group (a record of one
    design) as 'elsewhere: inconclusive 17, supported 13'."""
    if not isinstance(text, str) or not text:
        return ""
    groups = []
    for part in text.split(" | "):
        found = re.findall(r"([a-z][a-z ]*?) in (\d+) of (\d+)", part)
        if not found:
            continue
        counts = ", ".join(f"{_SHORT_VERDICT.get(v, v)} {k}" for v, k, _ in found)
        label = re.match(r"\s*([^:]+?):\s", part)
        if label and not re.search(r" in \d+ of \d+", label.group(1)):
            kind, _, rest = label.group(1).partition(", ")
            rest = f" of {rest}" if rest.startswith("protocol") else f" ({rest})" if rest else ""
            groups.append(f"in {found[0][2]} {kind} sweeps{rest}, {counts}")
        else:
            groups.append(counts)
    return "elsewhere: " + "; ".join(groups) if groups else ""


def verdict_label(v, piece: bool = False) -> str:
    """A verdict in the shared vocabulary, a not-testable one with its reason."""
    return vocabulary.labelled(v.verdict, v.why, piece=piece)


def verdict_index(V, piece: bool = False) -> str:
    """'**4 claims:** 2 supported, 1 contradicted, 1 not testable (machine too small).':
    the verdicts counted; each claim's code comes with its words in the lines below."""
    by: dict[str, int] = {}
    for v in V:
        label = verdict_label(v, piece)
        by[label] = by.get(label, 0) + 1
    order = {w: i for i, w in enumerate(vocabulary.ORDER)}
    keys = sorted(by, key=lambda k: (order.get(k.split(" (")[0], len(order)), k))
    return f"**{len(V)} claim{'' if len(V) == 1 else 's'}:** " + ", ".join(f"{by[k]} {k}" for k in keys) + "."


def claim_line(v, replication_text: str = "", own_text: str = "", piece: bool = False) -> str:
    """One claim: '**C1** sentence — **supported**: Go/Akka 0.26-0.67, Erlang/Akka
    0.71-0.85; elsewhere: supported 13, inconclusive 18.'"""
    detail = _numbers(v)
    if v.verdict in (results.INCONCLUSIVE, results.NOT_TESTABLE):
        why = _short_why(v)
        detail = f"{detail}; {why}" if detail and v.verdict == results.INCONCLUSIVE else why
    elif v.verdict == results.ERROR:
        detail = f"the check failed ({v.why})"
    line = f"**{v.id}** {str(v.claim).rstrip('.')} {DASH} **{verdict_label(v, piece)}**" + (
        f": {detail}" if detail else ""
    )
    rep = _replication(replication_text)
    if rep:
        line += f"; {rep}"
    if isinstance(own_text, str) and own_text and not own_text.startswith(results.SUPPORTED):
        own = own_text.split(":")[0]
        line += "; on its source's own numbers: " + (
            vocabulary.labelled(own, source_data=True) if own.startswith("not testable") else own
        )
    return line + "."


def id_ranges(ids: Iterable[str], order: Iterable[str]) -> str:
    """'C1-C12, E1-E4, T1-T3': the ids, in `order`, each run of three or more consecutive
    ones of the same letters written as its first and last."""
    pos = {c: i for i, c in enumerate(order)}
    runs: list[list[str]] = []
    for c in sorted(ids, key=lambda c: pos.get(c, len(pos))):
        letters = re.match(r"[A-Za-z]*", c).group(0)
        last = runs[-1][-1] if runs else None
        if (
            last is not None
            and re.match(r"[A-Za-z]*", last).group(0) == letters
            and pos.get(c) == pos.get(last, -9) + 1
        ):
            runs[-1].append(c)
        else:
            runs.append([c])
    return ", ".join(f"{r[0]}-{r[-1]}" if len(r) > 2 else ", ".join(r) for r in runs)


def split_undecided(V, ran: Iterable[str], piece: bool = False) -> tuple[list, str]:
    """(the verdicts the report shows, one line naming the rest): a claim is left to that
    line when it is not testable and the sweep ran none of the benchmark of the table it
    reads (`ran`: the sweep's tables, report.tables_run), so that a report of one benchmark's profile lists
    the claims of the others once ('Not decided by this profile: C1-C12, E1-E4, T1-T3.')
    instead of a not-testable line each. A claim whose benchmark ran keeps its line and
    reason (a configuration the profile left out, a machine too small)."""
    # by benchmark, as the line says: IM's searches run in a table of their own (im_rate)
    tables = registry.tables()
    ran_benchmarks = {tables[t].benchmark if t in tables else t for t in ran}
    reads = {c.id: (tables[c.needs.table].benchmark if c.needs.table in tables else c.needs.table)
             for c in engine.all_claims()}  # fmt: skip
    out = [
        v.id
        for v in V
        if vocabulary.word(v.verdict) == vocabulary.NOT_TESTABLE and v.id in reads and reads[v.id] not in ran_benchmarks
    ]
    if not out:
        return list(V), ""
    shown = [v for v in V if v.id not in out]
    line = f"**Not decided by this {'piece' if piece else 'profile'}** (it ran none of their benchmarks): "
    return shown, line + id_ranges(out, [v.id for v in V]) + "."


def first_screen(V, replication_col=None, own_col=None, piece: bool = False, not_decided: str = "") -> str:
    """The report's first screen (Markdown): every claim's verdict in one line of a few
    dozen words (`verdict_index`), then one short line per claim in the paper's order (C,
    then E, then T). V: claims.check_all's verdicts; replication_col: replication.beside's
    table (id and its replication column) or {id: text}; own_col: the verdicts on each
    claim's source's own numbers (sourcedata.own_data_column) or {id: text}; not_decided:
    split_undecided's line naming the claims left out of V, shown last."""
    if not V:  # a figure-only sweep (an im fan-out piece): no "0 claims: ." and no legend for no lines
        return "\n".join(["**No claim is judged by this sweep.**", *(["", not_decided] if not_decided else [])])
    rep, own = _id_map(replication_col), _id_map(own_col)
    name = (
        next((str(c) for c in replication_col.columns if c != "id"), "")
        if isinstance(replication_col, pd.DataFrame)
        else ""
    )
    m = re.search(r"\(((\d+) other (\w+) sweeps)\)", name)
    elsewhere = f"the verdicts of the {m.group(1)}" if m else "the verdicts of the other committed sweeps"
    elsewhere = f"and, after *elsewhere*, {elsewhere}, each kind of sweep apart"
    if m and int(m.group(2)) == 0:
        elsewhere = f"and no *elsewhere*: no other {m.group(3)} sweep is committed"
    rounds = method.rounds_text(V)
    lines = [
        verdict_index(V, piece),
        "",
        "Each line below: the claim, its verdict on this sweep, the deciding ratios (first side / second side, "
        f"lowest-highest over the deciding configurations{', ' + rounds if rounds else ''}, each judged by its "
        f"interval) {elsewhere}. "
        f"The words are defined in the [Glossary](#{anchor(GLOSSARY)}).",
        "",
    ]
    lines += [f"* {claim_line(v, rep.get(v.id, ''), own.get(v.id, ''), piece)}" for v in V]
    return "\n".join(lines + (["", not_decided] if not_decided else []))


# ------------------------------------------------------------------ glossary


def glossary(V=None, info: dict | None = None) -> str:
    """Each word of the verdicts once, in the numbers and rules of the protocol version that
    judged the sweep (method.glossary)."""
    return method.glossary(V, info)
