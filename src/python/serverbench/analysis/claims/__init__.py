"""The paper's conclusions as data: claim entries evaluated by one engine.

* engine.py      Claim / Needs / Comparison / Verdict, register(), check_all(), the verdicts
* compare.py     expectations (RatioBelow/Above/Within) and comparison helpers
* decision.py, familywise.py, regime.py   decision regions, Holm's correction, regimes

The claims themselves live with their benchmarks (serverbench/benchmarks/<id>/claims.py,
docs/extending.md) and register with engine.register(Claim(...)) when
analysis.registry.load() imports them.
"""

from serverbench.analysis.claims.engine import (  # noqa: F401
    CONTRADICTED,
    ERROR,
    INCONCLUSIVE,
    MIN_CONFIDENCE,
    NO,
    NOT_TESTABLE,
    SPAWN_METRIC,
    SUPPORTED,
    UNCLEAR,
    VERDICTS,
    YES,
    Claim,
    Comparison,
    Data,
    Needs,
    NotTestable,
    Verdict,
    all_claims,
    check,
    check_all,
    claims_table,
    combine,
    evaluate,
    evidence_table,
    register,
    write_claims,
)
