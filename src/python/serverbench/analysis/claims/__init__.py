"""The paper's conclusions as data: claim entries evaluated by one engine.

* engine.py      Claim / Needs / Comparison / Verdict, register(), check_all(), the verdicts
* compare.py     expectations (RatioBelow/Above/Within) and comparison helpers
* paper.py       the paper's claims C1-C9 (Sections 4.1-4.3)
* unchecked.py   C10-C12: the three statements the first reproduction left unchecked

Other modules add claims with engine.register(Claim(...)) from a module named
serverbench.analysis.*_claims (see registry.py and docs/statistics.md, "Adding claims").
"""

from serverbench.analysis.claims.engine import (  # noqa: F401
    CONTRADICTED, ERROR, INCONCLUSIVE, MIN_CONFIDENCE, NO, NOT_TESTABLE, SPAWN_METRIC, SUPPORTED, UNCLEAR,
    VERDICTS, YES, Claim, Comparison, Data, Needs, NotTestable, Verdict, all_claims, check, check_all, claims_table,
    combine, evaluate, evidence_table, register, write_claims,
)
from serverbench.analysis.claims import paper, unchecked  # noqa: F401,E402  (register C1-C12)
