"""The words of the verdicts, one set for README, report, PDF and notebooks: *supported*,
*contradicted*, *inconclusive*, *not testable* (docs/protocol.md's, the claims tables'),
and for *not testable* always one of four reasons, since the claims tables' single
"not testable on this machine" covers four different situations:

* the machine is too small (the claim needs more cores than it has);
* the piece did not run it (a `paper` piece runs one benchmark at one core count, an `im`
  piece some of the case study's parts);
* the profile did not run it (the sweep's profile has no deciding configuration of it);
* the source's data lack it (on a source's own numbers: no value for a side it compares).
"""

from __future__ import annotations

import re

from serverbench.analysis.claims import results

SUPPORTED, CONTRADICTED, INCONCLUSIVE = results.SUPPORTED, results.CONTRADICTED, results.INCONCLUSIVE
NOT_TESTABLE = results.NOT_TESTABLE_WORD
ERROR = results.ERROR
ORDER = (SUPPORTED, CONTRADICTED, INCONCLUSIVE, NOT_TESTABLE, ERROR)

MACHINE = "machine too small"
PIECE = "the piece did not run it"
PROFILE = "the profile did not run it"
SOURCE = "the source's data lack it"

# The claims engine names the machine's CPUs, '(this machine: 2 CPUs)', in the reason of the
# claims that need more cores than a small machine has (C7b: more than 8; C9: more than 4).
_MACHINE_CPUS = re.compile(r"this machine: (\d+) CPU")
LARGEST_CORES_NEEDED = 8


def reason(why: str | None, *, piece: bool = False, source_data: bool = False) -> str:
    """Which of the four reasons a not-testable verdict has, from its `why` and where it was
    judged: a `paper` piece (piece=True), a whole sweep, or a source's own numbers."""
    if source_data:
        return SOURCE
    m = _MACHINE_CPUS.search(str(why or ""))
    if m and int(m.group(1)) <= LARGEST_CORES_NEEDED:
        return MACHINE
    return PIECE if piece else PROFILE


word = results.word  # 'not testable on this machine' -> 'not testable' (its reason apart, by `reason`)


def labelled(verdict: str, why: str | None = None, *, piece: bool = False, source_data: bool = False) -> str:
    """'supported', or 'not testable (machine too small)': the verdict with its reason."""
    w = word(verdict)
    return f"{w} ({reason(why, piece=piece, source_data=source_data)})" if w == NOT_TESTABLE else w


def glossary_line() -> str:
    """The four reasons in one sentence, for the report's glossary."""
    return (
        "the claim could not be judged, for one of four reasons, always named: the "
        f"*{MACHINE}* (it needs more cores than the machine has); *{PIECE}* (a piece runs part of its profile: "
        f"a `paper` piece one benchmark at one core count, an `im` piece some of the case study's parts); "
        f"*{PROFILE}* (the sweep's profile has no deciding configuration "
        f"of it); *{SOURCE}* (on a source's own numbers: no value for a side it compares)."
    )


def source_data_text(text: str) -> str:
    """A claim's verdict on its source's own numbers, as sourcedata.own_data_column writes
    it, in the shared words: 'not testable on this machine: ...' (never the machine's doing
    there) reads 'not testable (the source's data lack it): ...'."""
    t = str(text)
    if t.startswith(results.NOT_TESTABLE):
        return labelled(results.NOT_TESTABLE, source_data=True) + t[len(results.NOT_TESTABLE) :]
    return t
