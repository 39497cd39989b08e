"""The words of a verdict and of one comparison's result: a leaf, so that the claims
engine and Holm's correction (familywise.py) share them without importing each other."""

SUPPORTED = "supported"
CONTRADICTED = "contradicted"
INCONCLUSIVE = "inconclusive"
NOT_TESTABLE = "not testable on this machine"
ERROR = "error"
VERDICTS = (SUPPORTED, CONTRADICTED, INCONCLUSIVE, NOT_TESTABLE, ERROR)

# One comparison's result (an evidence row).
YES, NO, UNCLEAR = "yes", "no", "unclear"
EVIDENCE_ONLY = "-"  # a row shown for context that does not take part in the verdict
