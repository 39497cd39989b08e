"""The report's account of its method: the glossary of the verdicts' words and the paragraph
that opens "The claims, checked". Every protocol version, level, alpha, margin and rule
they print is read from the protocol version that judged the sweep (serverbench.protocol:
spec/protocol.json or a superseded spec/protocol-<v>.json), and every round count from the
sweep's own deciding comparisons, never typed in prose: a report of a sweep judged by
protocol 1 states protocol 1's no region, one judged by a later version that version's.
"""

from __future__ import annotations

from collections.abc import Iterable

from serverbench import protocol
from serverbench.analysis.claims import results
from serverbench.analysis.reporting import vocabulary
from serverbench.analysis.reporting.cells import is_missing
from serverbench.rawdata.columns import Col

_DECIDING = (results.YES, results.NO, results.UNCLEAR)
_EXPONENT_WORDS = {0.5: "halved", 2.0: "doubled"}
_WORDS = {1: "one", 2: "two", 3: "three", 4: "four"}


def version_of(V: Iterable | None = None, info: dict | None = None) -> int:
    """The protocol version that judged the sweep: the one in force when its first run
    started (info: its sweep.json), else its verdicts' own, else the newest."""
    if info is not None:
        return protocol.version_for(info.get(Col.first_started_utc))
    found = sorted({int(v.protocol) for v in V or () if getattr(v, "protocol", None)})
    return found[-1] if found else protocol.newest()


def observed_rounds(V: Iterable | None) -> list[int]:
    """The rounds of every deciding comparison of the verdicts (the evidence's `rounds`)."""
    return [
        int(r)
        for v in V or ()
        if v.evidence is not None and Col.rounds in v.evidence.columns
        for r, res in zip(v.evidence[Col.rounds], v.evidence[Col.result])
        if res in _DECIDING and not is_missing(r)
    ]


def rounds_text(V) -> str:
    """'8 rounds' or '5-6 rounds': the rounds of the deciding comparisons of every verdict."""
    n = observed_rounds(V)
    if not n:
        return ""
    return f"{min(n)} rounds" if min(n) == max(n) else f"{min(n)}-{max(n)} rounds"


def _designs() -> list[dict]:
    """The designs of the version in force: its `design`, then any section with its own
    rounds (a case study's design), each with rounds_deciding and rounds_figure_only."""
    p = protocol.load()
    rest = [s for k, s in p.items() if k != "design" and isinstance(s, dict)]
    return [d for d in [p[Col.design], *rest] if isinstance(d, dict) and "rounds_deciding" in d]


def design_rounds(V=None) -> tuple[str, str]:
    """(deciding, figure-only) rounds in words, for the version in force: the design whose
    deciding rounds this sweep's deciding comparisons had (the protocol's `design`, or a
    case study's own); when none matches (an exploratory sweep's earlier design), the rounds
    the comparisons had, as this sweep ran them."""
    n = observed_rounds(V)
    designs = _designs()
    match = next((d for d in designs if n and int(d["rounds_deciding"]) == max(n)), None)
    if match is None and n:
        return f"had {rounds_text(V)} in this sweep", "fewer rounds"
    d = match or designs[0]
    deciding = f"get {int(d['rounds_deciding'])} rounds"
    if V is not None and not n and any(True for _ in V):  # e.g. an IM rate piece: searches, no rounds
        deciding += " (none of this sweep's deciding comparisons is paired by round)"
    if n and min(n) < max(n):
        deciding += f" (this sweep's deciding comparisons had {rounds_text(V)})"
    return deciding, f"{int(d['rounds_figure_only'])} rounds"


def _pct(x: float) -> str:
    return f"{x:.0%}"


def _shifted(exponent: float) -> str:
    """What a sensitivity exponent does to the margin's log: 'halved', 'doubled'."""
    return _EXPONENT_WORDS.get(float(exponent), f"multiplied by {float(exponent):g}")


def no_region_rule() -> str:
    """Where the version in force starts the no region (decision.ordinal_no_region)."""
    if protocol.ordinal_no_region():
        return (
            "the no region starts one margin factor beyond a bound set by the margin or by a number of the source; "
            "beyond a bound that is the order itself (the 1 of 'lower') it starts at 1, so that a significant "
            "difference the wrong way contradicts the claim as one the right way supports it"
        )
    return "the no region starts one margin factor beyond every finite bound of the yes region"


def _newest_differs(v: int) -> str:
    """A sentence naming the newest version's no region when it differs from version v's."""
    newest = protocol.newest()
    if v == newest:
        return ""
    with protocol.in_force(newest):
        rule, frozen = no_region_rule(), protocol.load()["frozen_utc"]
    with protocol.in_force(v):
        if rule == no_region_rule():
            return ""
    return f" Protocol {newest} (the newest, frozen {frozen}, which judges later sweeps): {rule}."


def _searches_note(V) -> str:
    """A sentence for a sweep whose claims include one decided by searches (C3's and IM2's
    largest N within a cap, IM4's and IM5's rates: no ratio paired by round, no interval),
    '' otherwise."""
    ids = [v.id for v in V or () if getattr(v, "comparisons", None) and all(c.ci is None for c in v.comparisons)]
    if not ids:
        return ""
    return (
        f" {', '.join(ids)} {'is' if len(ids) == 1 else 'are'} decided by searches, not by ratios paired by round: "
        "a comparison there has no interval, and its rule is the claim's own (its definition below)."
    )


def glossary(V=None, info: dict | None = None) -> str:
    """Each word of the verdicts once, as the protocol version that judged the sweep defines
    it (docs/protocol.md, docs/statistics.md), with this sweep's rounds."""
    v = version_of(V, info)
    with protocol.in_force(v):
        m = protocol.margin_factor()
        a, level = protocol.alpha(), _pct(protocol.level())
        deciding, figure_only = design_rounds(V)
        exps = protocol.sensitivity_exponents()
        rule = no_region_rule()
    shifted = " and ".join(f"{_shifted(e)} (m = {m**e:.5g})" for e in exps)
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
            f"of the machine slows both sides of a pair. Deciding configurations {deciding}.",
        ),
        ("figure-only", f"a configuration that only draws a figure: {figure_only}; it never decides a claim."),
        (
            "yes / no region",
            'the yes region holds the ratios the source\'s sentence asserts, read from its words ("lower": at '
            f"most 1); under protocol {v}, which judged this sweep, {rule}. Between them (the gap) a ratio "
            "decides nothing." + _newest_differs(v),
        ),
        (
            "margin",
            f"the factor m = {m:g} between the regions, from the paper's own vocabulary (the ratios it calls "
            f"'very similar' against those it calls 'lower') and the {100 / m:.0f}-{100 * m:.0f} % equivalence "
            "bounds.",
        ),
        (
            "Hodges-Lehmann",
            "the estimate of a comparison's ratio: the exponential of the median of the Walsh averages of the "
            f"per-round log ratios, with its exact Wilcoxon signed-rank interval at {level} (the level it "
            "achieves is printed).",
        ),
        (
            "TOST",
            f"two one-sided tests: a {level} interval inside a region is a one-sided {_pct(a)} test of each of "
            "its bounds.",
        ),
        (
            "Holm",
            "Holm's step-down correction: with k comparisons a *no* must hold at the two-sided level "
            f"1 - 2 alpha / k (alpha = {a:g}), so that many comparisons do not make a wrong "
            "*contradicted* likely.",
        ),
        (
            "regime / reduced",
            "the scale a verdict was tested at: *as the source* when the sweep's ok runs reach the source's "
            "largest value of every deciding parameter, else *reduced*, naming each shortfall.",
        ),
        (
            "sensitivity",
            f"the verdict recomputed with the margin's log {shifted}: a verdict that changes hangs on the constant.",
        ),
        (
            "replication",
            "a claim's verdicts counted over every other committed sweep of the same profile, by kind of machine "
            "(CPU model and logical CPUs); counted, not modelled.",
        ),
    ]
    return "\n".join(f"* **{t}**: {d}" for t, d in terms)


def claims_checked(V=None, info: dict | None = None) -> str:
    """The paragraphs that open "The claims, checked": which protocol every verdict of the
    sweep follows and its rule, and what the table's columns are, in that version's numbers."""
    v = version_of(V, info)
    human = "docs/protocol.md" if v == protocol.newest() else f"docs/protocol-{v}.md"
    with protocol.in_force(v):
        level, m = _pct(protocol.level()), protocol.margin_factor()
        rule = no_region_rule()
        shifted = " and ".join(_shifted(e) for e in protocol.sensitivity_exponents())
        n = len(protocol.sensitivity_exponents())
    return (
        f"Every verdict of this sweep follows protocol {v} ({human}), written down and frozen before the sweeps "
        f"that confirm it. Each deciding comparison is one ratio, paired by round, with its {level} interval "
        "(Hodges-Lehmann estimate, exact Wilcoxon signed-rank interval; the level it achieves is printed). It says "
        "*yes* when the interval lies inside the claim's yes region, *no* when it lies inside the no region (the "
        f"margin factor is m = {m:g}: {rule}; after Holm's correction over the claim's comparisons), and nothing "
        "in between. A claim is *supported* if every deciding comparison says yes, *contradicted* if any says no, "
        "*inconclusive* otherwise (the reason is given) and *not testable on this machine* when the sweep lacks a "
        "deciding configuration (named). Only configurations given the design's rounds decide; figure-only points "
        "never do." + _searches_note(V) + "\n\n"
        f"The {_WORDS.get(n, str(n))} columns after the verdict judge again with the margin's log {shifted}: a "
        "verdict that changes there hangs on the constant. The replication column counts the claim's verdicts "
        "over every other committed sweep of this profile, by kind of machine. The last column runs the same "
        "checks on each claim's source's own published numbers (`data/reference/`), as points."
    )
