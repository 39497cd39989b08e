"""Family-wise control of a claim's "no" (docs/statistics.md, "Several comparisons").

A claim is contradicted when any of its comparisons says "no". With m comparisons each
allowed a 5 % chance of a wrong "no", the chance that at least one is wrong grows towards
1 - 0.95^m. Holm's step-down procedure keeps it at most 5 % (ALPHA) for any dependence
between the comparisons: with `left` comparisons not yet shown to be "no", every one whose
interval at the confidence 1 - ALPHA / left lies on the "no" side is a "no"; repeat with the
smaller `left` until none is added. (Testing each at its own one-sided p-value against
ALPHA / left, smallest first, is the same procedure.) A "no" at 95 % that does not survive
becomes "unclear", saying what level it needed.

"Supported" needs every comparison to say "yes": an intersection-union test, whose error
is at most the largest single comparison's, so "yes" needs no correction.

A comparison is paired by round only where its pairs can reach the strictest level the
family may ask (1 - ALPHA / m; 6 pairs reach 96.9 %, not the 97.5 % of two comparisons);
otherwise its "no" is tested unpaired. The choice depends on the counts only, never on the
data, and within one method the intervals are nested, as Holm's procedure needs.

Comparisons that cannot be judged at another level (rejudge is None: C3's process limits,
C11's peak sets, T3's median) keep their own result and are not counted in the family.
"""

from __future__ import annotations

from serverbench.analysis.claims.results import MIN_CONFIDENCE, NO, UNCLEAR, YES

ALPHA = 1.0 - MIN_CONFIDENCE


def holm(comps: list, alpha: float = ALPHA) -> list:
    """Apply Holm's correction to the "no" results of comps (engine.Comparison), in place
    (and return them).
    Every family member gets extra["holm_level"]: the confidence its "no" was decided at,
    or the one it would have needed."""
    family = [c for c in comps if c.result in (YES, NO, UNCLEAR) and c.rejudge is not None]
    m = len(family)
    if m == 0:
        return comps
    decided: dict[int, float] = {}  # id(comparison) -> the level its "no" holds at
    strictest = 1.0 - alpha / m
    while True:
        level = 1.0 - alpha / (m - len(decided))
        new = [c for c in family if c.result == NO and id(c) not in decided and _no_at(c, level, strictest)]
        if not new:
            break
        decided.update((id(c), level) for c in new)
        if len(decided) == m:
            break
    for c in family:
        c.extra["holm_level"] = round(decided.get(id(c), level), 4)
        if c.result == NO and id(c) not in decided:
            c.result = UNCLEAR
            c.why = (
                f"'no' at {c.ci.level:.1%} but not at the {level:.2%} Holm's correction over {m} comparisons needs"
                if c.ci is not None
                else f"'no' but not after Holm's correction over {m} comparisons"
            )
    return comps


def _no_at(c, level: float, choose_at: float) -> bool:
    """Whether c's interval at (at least) `level` confidence, its method chosen for
    `choose_at`, lies on the "no" side."""
    assert c.rejudge is not None
    result, _, ci = c.rejudge(level, choose_at)
    return result == NO and ci is not None and ci.level >= level - 1e-12
