"""The verdict protocol, read from spec/protocol.json (its only copy; docs/protocol.md is
the human version): the version and hash the report prints, alpha, the interval level,
the margin, the design's rounds (which the harness gives a profile's `trials = "deciding"`
and `"figure-only"`), and each claim's sentence, deciding comparisons and yes region.

A yes region is written from the source's words as bounds `[x, k]`, meaning x * m**k with
m the protocol's margin factor (e.g. "lower": hi = [1, 0], ratio below 1, no region >= m;
"similar": lo = [1, -1], hi = [1, 1]; "2-5x": lo = [2, -1], hi = [5, 1]). The no region
starts one factor m beyond each finite bound of the yes region. `region(cid, exponent=e)`
resolves it with m**e instead (the sensitivity row: e = 0.5 halves the margin's log, e = 2
doubles it); the claims engine passes e down in its options, explicitly.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass
from functools import cache, lru_cache

from serverbench import paths

FILE = "protocol.json"
VERSIONS = "protocol-versions.json"  # every version's hash, append-only: a rule changes only with a new version


def path():
    return paths.spec_dir() / FILE


@lru_cache(maxsize=1)
def load() -> dict:
    with open(path(), encoding="utf-8") as f:
        return json.load(f)


def version() -> int:
    return int(load()["protocol"])


def sha256() -> str:
    """The hash of the file's bytes: what the report prints beside the version."""
    return hashlib.sha256(path().read_bytes()).hexdigest()


class ProtocolError(Exception):
    """spec/protocol.json differs from the hash recorded for its version."""


def verify(spec_dir=None) -> str:
    """The file's hash, checked against spec/protocol-versions.json: a rule changed without
    a new version (or a new version not recorded there) is an error, naming what to do."""
    folder = spec_dir or paths.spec_dir()
    text = (folder / FILE).read_bytes()
    got = hashlib.sha256(text).hexdigest()
    v = str(json.loads(text)["protocol"])
    known = json.loads((folder / VERSIONS).read_text(encoding="utf-8"))
    if known.get(v) != got:
        raise ProtocolError(
            f"spec/{FILE} (version {v}) has sha256 {got[:12]}, but spec/{VERSIONS} records "
            f"{(known.get(v) or 'nothing')[:12]} for version {v}: a rule changed without a new version. "
            f"Raise 'protocol' to {max(map(int, known), default=0) + 1} and add its hash to spec/{VERSIONS}."
        )
    return got


def alpha() -> float:
    return float(load()["alpha"])


def level() -> float:
    """The two-sided level of every deciding interval (two one-sided tests at alpha)."""
    return float(load()["interval"]["level"])


def margin_factor(exponent: float = 1.0) -> float:
    """The margin: the protocol's factor, raised to a sensitivity exponent (1: as written)."""
    return float(load()["margin"]["factor"]) ** exponent


def rounds_deciding() -> int:
    return int(load()["design"]["rounds_deciding"])


def rounds_figure_only() -> int:
    return int(load()["design"]["rounds_figure_only"])


DESIGN_TRIALS = {"deciding": rounds_deciding, "figure-only": rounds_figure_only}


def trials(value):
    """A profile's trials: an integer as given, or the design's "deciding" / "figure-only"."""
    return DESIGN_TRIALS[value]() if isinstance(value, str) and value in DESIGN_TRIALS else value


def sensitivity_exponents() -> tuple[float, ...]:
    return tuple(float(e) for e in load()["sensitivity"]["margin_exponents"])


@cache
def claim(cid: str) -> dict:
    for c in load()["claims"]:
        if c["id"] == cid:
            return c
    raise KeyError(f"claim {cid!r} is not in {FILE}")


def claim_ids() -> tuple[str, ...]:
    return tuple(c["id"] for c in load()["claims"])


@dataclass(frozen=True)
class Region:
    """A yes region from the source's words, resolved with the margin raised to `exponent`;
    `point_values`: a ratio judged against it is one of a source's values per point (a
    point), not an interval of rounds (analysis/claims/compare.py)."""

    words: str
    lo_spec: tuple[float, float] | None
    hi_spec: tuple[float, float] | None
    exponent: float = 1.0
    point_values: bool = False

    def yes(self) -> tuple[float, float]:
        m = margin_factor(self.exponent)
        lo = self.lo_spec[0] * m ** self.lo_spec[1] if self.lo_spec else 0.0
        hi = self.hi_spec[0] * m ** self.hi_spec[1] if self.hi_spec else math.inf
        return lo, hi

    def no(self) -> tuple[float, float]:
        """(below, above): a ratio <= below or >= above is in the no region."""
        m = margin_factor(self.exponent)
        lo, hi = self.yes()
        return (lo / m if self.lo_spec else 0.0), (hi * m if self.hi_spec else math.inf)

    def text(self) -> str:
        lo, hi = self.yes()
        nb, na = self.no()
        yes = f"<= {hi:.3g}" if not self.lo_spec else f">= {lo:.3g}" if not self.hi_spec else f"[{lo:.3g}, {hi:.3g}]"
        no = " or ".join([f"<= {nb:.3g}"] * bool(self.lo_spec) + [f">= {na:.3g}"] * bool(self.hi_spec))
        return f"{self.words}: yes {yes}; no {no}"


def region(cid: str, key: str = "yes", exponent: float = 1.0, point_values: bool = False) -> Region:
    """The region `key` of claim cid (most claims have one, "yes"; C4b and C5 name a second),
    with the margin raised to `exponent` (the sensitivity columns)."""
    r = claim(cid)[key]
    lo, hi = r.get("lo"), r.get("hi")
    return Region(r["words"], tuple(lo) if lo else None, tuple(hi) if hi else None, float(exponent), point_values)
