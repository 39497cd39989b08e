"""The words of a verdict and of one comparison's result: a leaf, so that the claims
engine and Holm's correction (familywise.py) share them without importing each other."""

SUPPORTED = "supported"
CONTRADICTED = "contradicted"
INCONCLUSIVE = "inconclusive"
NOT_TESTABLE = "not testable on this machine"
NOT_TESTABLE_WORD = "not testable"  # the shared vocabulary's word (reporting/vocabulary.py), its reason apart
ERROR = "error"
VERDICTS = (SUPPORTED, CONTRADICTED, INCONCLUSIVE, NOT_TESTABLE, ERROR)

# One comparison's result (an evidence row).
YES, NO, UNCLEAR = "yes", "no", "unclear"
EVIDENCE_ONLY = "-"  # a row shown for context that does not take part in the verdict


def word(verdict: str) -> str:
    """The verdict in the shared vocabulary: the claims tables' 'not testable on this machine'
    becomes 'not testable' (its reason is given apart: reporting/vocabulary.py's reasons)."""
    return NOT_TESTABLE_WORD if str(verdict).startswith(NOT_TESTABLE_WORD) else str(verdict)
