"""The paper's conclusions as data: claim entries evaluated by one engine.

* engine.py      Claim / Needs / Comparison / Verdict, register(), check_all(), the verdicts
* compare.py     expectations (RatioBelow/Above/Within) and comparison helpers
* paper_pingping.py, paper_spawn.py, paper_throughput.py   the paper's claims C1-C9
* unchecked.py   C10-C12: the three statements the first reproduction left unchecked

Other modules add claims with engine.register(Claim(...)) from a module named
serverbench.analysis.*_claims (see registry.py and docs/statistics.md, "Adding claims").
"""

from serverbench.analysis.claims import paper_pingping, paper_spawn, paper_throughput, unchecked  # noqa: F401,E402
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
