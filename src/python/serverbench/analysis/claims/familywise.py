"""Holm's correction of a claim's "no" (docs/protocol.md, "The procedure in six lines").

A claim is contradicted when any deciding comparison says "no". With k comparisons each
allowed a 5 % chance of a wrong "no", the chance that at least one is wrong grows towards
1 - 0.95^k; Holm's step-down procedure keeps it at most alpha for any dependence between
them: with `left` comparisons not yet shown to be "no", each whose interval at two-sided
level 1 - 2 alpha / left lies in the no region is a "no"; repeat with the smaller `left`
until none is added. A "no" at the protocol's level that does not survive becomes
"unclear", saying what level it needed.

"Supported" needs every comparison to say "yes": an intersection-union test, whose error
is at most the largest single comparison's, so "yes" needs no correction. Comparisons
without a rejudge (C3's process limits) keep their own result and are not in the family.
"""

from __future__ import annotations

from serverbench import protocol
from serverbench.analysis.claims.results import NO, UNCLEAR, YES
from serverbench.rawdata.columns import Col


def holm(comps: list) -> list:
    """Apply Holm's correction to the "no" results of comps (engine.Comparison), in place.
    Every family member gets extra["holm_level"]: the level its "no" held at, or the one
    it would have needed."""
    family = [c for c in comps if c.result in (YES, NO, UNCLEAR) and c.rejudge is not None]
    m = len(family)
    if m == 0:
        return comps
    a = protocol.alpha()
    decided: dict[int, float] = {}
    while len(decided) < m:
        at = 1.0 - 2.0 * a / (m - len(decided))
        new = [c for c in family if c.result == NO and id(c) not in decided and c.rejudge(at)[0] == NO]
        if not new:
            break
        decided.update((id(c), at) for c in new)
    at = 1.0 - 2.0 * a / max(m - len(decided), 1)
    for c in family:
        c.extra[Col.holm_level] = round(decided.get(id(c), at), 4)
        if c.result == NO and id(c) not in decided:
            c.result = UNCLEAR
            lv = level_text(at)
            c.why = f"'no' at {protocol.level():.0%} but not at the {lv} Holm's correction over {m} comparisons needs"
    return comps


def level_text(at: float) -> str:
    """A Holm level as every report prints it ('96.67%'), so one claim's level reads alike in
    its reason and in the paper-scale rows."""
    return f"{at:.2%}"
