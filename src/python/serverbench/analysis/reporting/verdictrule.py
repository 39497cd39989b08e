"""The claim rule on combined comparisons, and the comparison a row shows for its verdict
(each row shows the number that decides it).

The protocol's claim rule (docs/protocol.md section 1): supported when every deciding
comparison is yes, contradicted when any is no, inconclusive otherwise. At the paper's
scale it is applied to the comparisons combined over sweeps (claims/scale.py): to all of a
claim's, which gives the claim's verdict, or to one piece's only, which gives that piece's.
A row that shows one comparison for a verdict shows one that gives it: a 'no' for a
contradicted claim, an 'unclear' for an inconclusive one, and for a supported one the yes
nearest its region's edge.
"""

from __future__ import annotations

import math

from serverbench import protocol
from serverbench.analysis.claims import engine, familywise, scale


def rule(comps: list[scale.Combined]) -> str:
    """The claim rule over these comparisons (not testable when there is none)."""
    return engine.combine([x.result for x in comps])


def of_piece(c: scale.ClaimAtScale, piece: str) -> str:
    """The verdict of claim c from one piece's combined comparisons only; without any, from
    the piece's sweeps' own verdicts as scale.combine takes them (one verdict when those that
    could test it agree, else scale.DIFFER); an error when a sweep's check failed."""
    sweeps = [s for s in c.sweeps if s.piece == piece]
    if any(s.verdict == engine.ERROR for s in sweeps):
        return engine.ERROR
    comps = [x for x in c.comparisons if x.piece == piece]
    return rule(comps) if comps else scale.own_verdict(sweeps)


def room(x: scale.Combined) -> float:
    """How far a comparison's interval lies inside its yes region (the log of the nearer
    margin; infinite for an open side, nan without a ratio)."""
    if not math.isfinite(x.ratio):
        return math.nan
    yes_lo, yes_hi = x.regions[0], x.regions[1]
    return min(
        math.log(x.lo / yes_lo) if yes_lo > 0 else math.inf,
        math.log(yes_hi / x.hi) if math.isfinite(yes_hi) else math.inf,
    )


def deciders(comps: list[scale.Combined]) -> list[scale.Combined]:
    """The comparisons that give the rule's verdict over comps: every 'no' when there is one,
    else every 'unclear', else every yes (all of them decide a supported verdict)."""
    for result in (scale.NO, scale.UNCLEAR):
        found = [x for x in comps if x.result == result]
        if found:
            return found
    return list(comps)


def pick(comps: list[scale.Combined]) -> scale.Combined | None:
    """The one comparison a row shows: the first 'no', else the first 'unclear', else the yes
    nearest its region's edge (a comparison with a ratio before one without)."""
    found = deciders(comps)
    if not found:
        return None
    if found[0].result != scale.YES:
        with_ratio = [x for x in found if math.isfinite(x.ratio)]
        return (with_ratio or found)[0]
    with_ratio = [x for x in found if math.isfinite(x.ratio)]
    return min(with_ratio, key=room) if with_ratio else found[0]


def cell(c: scale.ClaimAtScale) -> str:
    """The summary table's deciding ratio: pick()'s comparison with its interval, its result
    and its spread, and how many comparisons there are; '–' without any."""
    x = pick(c.comparisons)
    if x is None:
        return "–"
    more = f" (1 of {len(c.comparisons)})" if len(c.comparisons) > 1 else ""
    where = f"{x.comparison}, {x.config}" if x.config else x.comparison
    if not math.isfinite(x.ratio):  # a limit (C3): the sweeps' results, as they agree
        return f"{where}: {x.result} in {x.n} sweep{'s' * (x.n != 1)}{more}"
    note = holm_note(x)
    return f"{where}: {x.ratio:.3g} [{x.lo:.3g}, {x.hi:.3g}] {x.result}, {spread(x)}{'; ' + note if note else ''}{more}"


def holm_note(x: scale.Combined) -> str:
    """Why an unclear comparison whose printed interval lies in the no region is not a 'no':
    a 'no' must hold at Holm's level (its `holm_level`), at which the interval is wider
    ('' for any other comparison)."""
    if x.result != scale.UNCLEAR or x.holm_level is None or not math.isfinite(x.ratio):
        return ""
    no_below, no_above = x.regions[2], x.regions[3]
    if not (x.hi <= no_below or x.lo >= no_above):
        return ""
    asked = familywise.level_text(x.holm_level)
    return f"in the no region at {protocol.level():.0%}, not at the {asked} Holm's correction asks"


def spread(x: scale.Combined) -> str:
    """Where a combined comparison's interval comes from: 'between 3 sweeps', '2 sweeps,
    pooled sd on 9 df' (protocol 4's pool), or its one sweep's own."""
    sweeps = f"{x.n} sweep{'s' * (x.n != 1)}"
    if x.pooled is not None:
        return f"{sweeps}, pooled sd on {x.pooled.df} df"
    return f"between {sweeps}" if x.n > 1 else "one sweep: between-sweep spread unknown"
