"""The paper's conclusions as data: claim entries evaluated by one engine.

* engine.py      Claim / Needs / Comparison / Verdict, check_all(), the verdicts
* options.py     Options: how a sweep is judged (the benchmarks' options, points, the margin)
* compare.py     one interval (paired by round) judged against a region; row selection
* familywise.py  Holm's correction of a claim's "no"
* tables.py      claims.csv and claims_evidence.csv
* regime.py      the scale a claim's source measured, and the one a sweep tested
* results.py     the words of a verdict (a leaf shared by the engine and Holm's correction)
* paperdata.py   the paper's own numbers judged as points (each encoding must recover them)
* sourcedata.py  the same for the two TCP write-ups' numbers
* replication.py each claim's verdicts over every committed sweep; the table across sweeps
* golden.py      the golden raw sweep and the tables and verdicts it must give

The protocol itself (version, alpha, margin, design, each claim's words and regions) is
read from spec/protocol.json by serverbench/protocol.py. The claims' encodings live with
their benchmarks (serverbench/benchmarks/<id>/claims.py,
docs/extending.md), declared at module level (`C1 = Claim(...)`) and collected by
analysis.reading.registry.load().
"""

from serverbench.analysis.claims.engine import (  # noqa: F401
    CONTRADICTED,
    ERROR,
    INCONCLUSIVE,
    NO,
    NOT_TESTABLE,
    SUPPORTED,
    UNCLEAR,
    VERDICTS,
    YES,
    Claim,
    Comparison,
    Data,
    Needs,
    NotTestable,
    Options,
    Verdict,
    all_claims,
    check,
    check_all,
    combine,
    evaluate,
)
from serverbench.analysis.claims.tables import claims_table, evidence_table, write_claims  # noqa: F401
