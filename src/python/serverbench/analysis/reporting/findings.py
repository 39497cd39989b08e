"""The report's first screen ("findings first"): one short line per claim with its
verdict, the deciding ratios and the replication count; and the glossary of the words
those lines use (from docs/protocol.md and docs/statistics.md). Its numbers are written by
cells.py; the report's title, sections and contents are layout.py's.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import pandas as pd

from serverbench import protocol
from serverbench.analysis.claims import results
from serverbench.analysis.reporting import vocabulary
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


def _rounds(V) -> str:
    """'8 rounds' or '5-6 rounds': the rounds of the deciding comparisons of every verdict."""
    n = [
        int(r)
        for v in V
        if v.evidence is not None and "rounds" in v.evidence.columns
        for r, res in zip(v.evidence["rounds"], v.evidence["result"])
        if res in _DECIDING and not is_missing(r)
    ]
    if not n:
        return ""
    return f"{min(n)} rounds" if min(n) == max(n) else f"{min(n)}-{max(n)} rounds"


def _numbers(v) -> str:
    """The deciding ratios of a verdict, by comparison: 'Go/Akka 0.26-0.67, Erlang/Akka 0.71-0.85 (8 rounds)'."""
    ev = v.evidence
    if ev is None or ev.empty or "result" not in ev.columns:
        return ""
    ev = ev[ev["result"].isin(_DECIDING)]
    if v.verdict == results.CONTRADICTED:  # the comparisons against the claim
        ev = ev[ev["result"] == results.NO]
    if ev.empty:
        return ""
    if "ratio" not in ev.columns or ev["ratio"].isna().all():  # C3: a limit, not a ratio
        return ", ".join(f"{_label(c)}: {r}" for c, r in zip(ev["comparison"], ev["result"]))
    # a comparison without a ratio beside ones with (IM5's count of lost messages) gives its result
    return ", ".join(
        f"{_label(c)} {_range(g['ratio'])}" if _range(g["ratio"]) else f"{_label(c)}: {', '.join(g['result'])}"
        for c, g in ev.groupby("comparison", sort=False)
    )


def _short_why(v) -> str:
    """Why an inconclusive or not testable verdict is one, in a few words."""
    if v.verdict == results.INCONCLUSIVE:
        ev = v.evidence
        n = int((ev["result"] == results.UNCLEAR).sum()) if ev is not None and "result" in ev.columns else 0
        k = int(ev["result"].isin(_DECIDING).sum()) if n else 0
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
        return {str(i): t for i, t in zip(col["id"], col[other[0]])} if other else {}
    return {str(k): t for k, t in dict(col).items()}


def _replication(text) -> str:
    """'inconclusive in 17 of 31 (...); supported in 13 of 31 (...)' -> 'elsewhere:
    inconclusive 17, supported 13'."""
    if not isinstance(text, str) or not text:
        return ""
    found = re.findall(r"([a-z][a-z ]*?) in (\d+) of (\d+)", text)
    if not found:
        return ""
    return "elsewhere: " + ", ".join(f"{_SHORT_VERDICT.get(v, v)} {k}" for v, k, _ in found)


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
    return f"**{len(V)} claims:** " + ", ".join(f"{by[k]} {k}" for k in keys) + "."


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


def first_screen(V, replication_col=None, own_col=None, piece: bool = False) -> str:
    """The report's first screen (Markdown): every claim's verdict in one line of a few
    dozen words (`verdict_index`), then one short line per claim in the paper's order (C,
    then E, then T). V: claims.check_all's verdicts; replication_col: replication.beside's
    table (id and its replication column) or {id: text}; own_col: the verdicts on each
    claim's source's own numbers (sourcedata.own_data_column) or {id: text}."""
    rep, own = _id_map(replication_col), _id_map(own_col)
    name = (
        next((str(c) for c in replication_col.columns if c != "id"), "")
        if isinstance(replication_col, pd.DataFrame)
        else ""
    )
    m = re.search(r"\((\d+ other \w+ sweeps)\)", name)
    elsewhere = f"the verdicts of the {m.group(1)}" if m else "the verdicts of the other committed sweeps"
    rounds = _rounds(V)
    lines = [
        verdict_index(V, piece),
        "",
        "Each line below: the claim, its verdict on this sweep, the deciding ratios (first side / second side, "
        f"lowest-highest over the deciding configurations{', ' + rounds if rounds else ''}, each judged by its "
        f"interval) and, after *elsewhere*, {elsewhere}. "
        f"The words are defined in the [Glossary](#{anchor(GLOSSARY)}).",
        "",
    ]
    lines += [f"* {claim_line(v, rep.get(v.id, ''), own.get(v.id, ''), piece)}" for v in V]
    return "\n".join(lines)


# ------------------------------------------------------------------ glossary and contents


def glossary() -> str:
    """Each word of the verdicts once, as docs/protocol.md and docs/statistics.md define it."""
    m = protocol.margin_factor()
    half, double = m**0.5, m**2
    deciding, figure_only = protocol.rounds_deciding(), protocol.rounds_figure_only()
    level = f"{protocol.level():.0%}"
    terms = [
        ("supported", f"every deciding comparison is *yes*: its {level} interval lies inside the yes region."),
        (
            "contradicted",
            "at least one deciding comparison is *no*: its interval lies inside the no region, after Holm's "
            "correction over the claim's comparisons.",
        ),
        ("inconclusive", "neither: some comparison is *unclear*, and the verdict says why."),
        ("not testable", vocabulary.glossary_line()),
        (
            "deciding comparison",
            "a ratio of two sides' times or rates (two languages at one configuration, or one language at two), "
            "paired by round, at a configuration the claim decides at (listed per claim in docs/protocol.md, "
            "section 4). A ratio below 1 means the first side took less time (or had the lower rate).",
        ),
        (
            "round",
            "round k runs trial k of every language of a configuration close together in time, so a slow spell "
            f"of the machine slows both sides of a pair. Deciding configurations get {deciding} rounds.",
        ),
        (
            "figure-only",
            f"a configuration that only draws a figure: {figure_only} rounds; it never decides a claim.",
        ),
        (
            "yes / no region",
            'the yes region holds the ratios the source\'s sentence asserts, read from its words ("lower": at '
            "most 1); the no region starts one margin factor beyond every finite bound of the yes region. "
            "Between them (the gap) a ratio decides nothing.",
        ),
        (
            "margin",
            f"the factor m = {m:g} between the regions, from the paper's own vocabulary (the ratios it calls "
            "'very similar' against those it calls 'lower') and the 80-125 % equivalence bounds.",
        ),
        (
            "Hodges-Lehmann",
            "the estimate of a comparison's ratio: the exponential of the median of the Walsh averages of the "
            f"per-round log ratios, with its exact Wilcoxon signed-rank interval at {level} (the level it "
            "achieves is printed).",
        ),
        (
            "TOST",
            f"two one-sided tests: a {level} interval inside a region is a one-sided "
            f"{protocol.alpha():.0%} test of each of its bounds.",
        ),
        (
            "Holm",
            "Holm's step-down correction: with k comparisons a *no* must hold at the two-sided level "
            "1 - 2 alpha / k, so that many comparisons do not make a wrong *contradicted* likely.",
        ),
        (
            "regime / reduced",
            "the scale a verdict was tested at: *as the source* when the sweep's ok runs reach the source's "
            "largest value of every deciding parameter, else *reduced*, naming each shortfall.",
        ),
        (
            "sensitivity",
            f"the verdict recomputed with the margin's log halved (m = {half:.4g}) and doubled (m = {double:.5g}): "
            "a verdict that changes hangs on the constant.",
        ),
        (
            "replication",
            "a claim's verdicts counted over every other committed sweep of the same profile, by kind of machine "
            "(CPU model and logical CPUs); counted, not modelled.",
        ),
    ]
    return "\n".join(f"* **{t}**: {d}" for t, d in terms)
