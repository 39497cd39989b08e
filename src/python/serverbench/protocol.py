"""The verdict protocol, read from spec/protocol.json (its only copy; docs/protocol.md is
the human version): the version and hash the report prints, alpha, the interval level,
the margin, the design's rounds (which the harness gives a profile's `trials = "deciding"`
and `"figure-only"`), and each claim's sentence, deciding comparisons and yes region.

A yes region is written from the source's words as bounds `[x, k]`, meaning x * m**k with
m the protocol's margin factor (e.g. "lower": hi = [1, 0], ratio below 1, no region >= m;
"similar": lo = [1, -1], hi = [1, 1]; "2-5x": lo = [2, -1], hi = [5, 1]). The no region
starts one factor m beyond each finite bound of the yes region. `region(cid, exponent=e)`
resolves it with m**e instead (the sensitivity row: e = 0.5 halves the margin's log, e = 2
doubles it); the claims engine passes e down in its options, explicitly. From protocol 2 on, a bound written [1, 0] (the
order itself: "lower", "higher") has no margin on either side: its no region starts at 1.

Versions: spec/protocol.json is the newest; a superseded version stays, byte for byte as it
was frozen, in spec/protocol-<v>.json with its human text docs/protocol-<v>.md, and
spec/protocol-versions.json records both hashes of every version. A sweep is judged by the
version in force when its first run started (`version_for`): the newest frozen before it,
version 1 for a sweep older than every freeze. `in_force(v)` makes every reader below
answer for version v (a context variable: the version a whole evaluation is judged by).

SERVERBENCH_PROTOCOL names another file to read as the newest version instead of
spec/protocol.json (a test's copy with another alpha, level or margin); the superseded
versions and the record of hashes stay in spec/.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
import re
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from functools import cache, lru_cache
from pathlib import Path

from serverbench import paths, plugins
from serverbench.rawdata.columns import Col

FILE = "protocol.json"
DOC = "protocol.md"  # under docs/
VERSIONS = "protocol-versions.json"  # every version's hashes, append-only: a rule changes only with a new version
ENV = "SERVERBENCH_PROTOCOL"  # another file read as the newest version (a test's copy)
_VERSION: ContextVar[int | None] = ContextVar("protocol_version", default=None)  # None: the newest


def archived(name: str, v: int) -> str:
    """A superseded version's file name: protocol.json -> protocol-1.json."""
    stem, dot, ext = name.rpartition(".")
    return f"{stem}-{v}{dot}{ext}"


def _newest_file() -> Path:
    """spec/protocol.json, or the file SERVERBENCH_PROTOCOL names (ProtocolError, naming the
    variable, when that file is not there)."""
    other = os.environ.get(ENV)
    if not other:
        return paths.spec_dir() / FILE
    found = Path(other).resolve()
    if not found.is_file():
        raise ProtocolError(f"{ENV}={other}: no such file (unset it to read spec/{FILE})")
    return found


@lru_cache(maxsize=16)
def _read(file: str) -> dict:
    """One version's file, parsed once per path (so that pointing ENV elsewhere needs no reset)."""
    with open(file, encoding="utf-8") as f:
        return json.load(f)


def newest() -> int:
    return int(_read(str(_newest_file()))[Col.protocol])


def path(v: int | None = None) -> Path:
    """spec/protocol.json (or ENV's file), or a superseded version's spec/protocol-<v>.json."""
    v = _VERSION.get() if v is None else v
    return _newest_file() if v is None or v == newest() else paths.spec_dir() / archived(FILE, v)


def _load(v: int | None) -> dict:
    return _read(str(path(v)))


def load() -> dict:
    """The version in force (in_force), else the newest."""
    return _load(_VERSION.get())


def version() -> int:
    return int(load()[Col.protocol])


def versions() -> list[int]:
    """Every recorded version, oldest first."""
    known = json.loads((paths.spec_dir() / VERSIONS).read_text(encoding="utf-8"))
    return sorted(int(v) for v in known)


def version_for(first_started_utc: str | None) -> int:
    """The version that judges a sweep whose first run started then: the newest frozen
    before it; the oldest for a sweep older than every freeze (or without a start time)."""
    started = str(first_started_utc or "").rstrip("Z")
    found = versions()[0]
    for v in versions():
        if started and started > _load(v)["frozen_utc"].rstrip("Z"):
            found = v
    return found


@contextlib.contextmanager
def in_force(v: int | None) -> Iterator[None]:
    """Every reader of this module answers for version v inside the block (None: the newest)."""
    token = _VERSION.set(None if v is None or v == newest() else int(v))
    try:
        yield
    finally:
        _VERSION.reset(token)


def sha256(v: int | None = None) -> str:
    """The hash of the version's file bytes: what the report prints beside the version."""
    return hashlib.sha256(path(v).read_bytes()).hexdigest()


class ProtocolError(Exception):
    """spec/protocol.json or docs/protocol.md differs from the hash recorded for its version."""


def verify(spec_dir=None, docs_dir=None) -> str:
    """The newest version's hash, after checking every version's machine-readable file and
    human text against spec/protocol-versions.json: a rule changed without a new version (or
    a new version not recorded there, or a superseded version edited) is an error, naming
    what to do."""
    folder = spec_dir or paths.spec_dir()
    docs = docs_dir or folder.parent / "docs"
    text = (folder / FILE).read_bytes()
    newest_v = int(json.loads(text)[Col.protocol])
    known = json.loads((folder / VERSIONS).read_text(encoding="utf-8"))
    fix = (
        f"Raise 'protocol' to {max(map(int, known), default=0) + 1} and record both hashes in spec/{VERSIONS}; "
        f"keep the superseded version as spec/{archived(FILE, newest_v)} and docs/{archived(DOC, newest_v)}."
    )
    for v, want in known.items():
        current = int(v) == newest_v
        for kind, where, name in (("spec", folder, FILE), ("doc", docs, DOC)):
            f = where / (name if current else archived(name, int(v)))
            got = hashlib.sha256(f.read_bytes()).hexdigest() if f.exists() else "nothing"
            if want.get(kind) != got:
                raise ProtocolError(
                    f"{where.name}/{f.name} (version {v}) has sha256 {got[:12]}, but spec/{VERSIONS} records "
                    f"{(want.get(kind) or 'nothing')[:12]} for it: a rule changed without a new version. {fix}"
                )
    if str(newest_v) not in known:
        raise ProtocolError(f"spec/{FILE} is version {newest_v}, which spec/{VERSIONS} does not record. {fix}")
    return hashlib.sha256(text).hexdigest()


DRAFT = "protocol-draft.json"  # the next version while it is written: the instrument reads it, no verdict does


def draft() -> dict | None:
    """spec/protocol-draft.json, the next version before its freeze (frozen_utc null), or None.
    Only the instrument reads it (the design a profile runs: `designing`); verdicts use
    frozen versions only, and a sweep recorded under a draft is exploratory."""
    f = paths.spec_dir() / DRAFT
    if not f.is_file():
        return None
    try:
        return _read(str(f))
    except ValueError as e:  # a draft being edited by hand: name it, not a traceback from every command
        raise ProtocolError(f"spec/{DRAFT} is not valid JSON ({e}); fix it or remove it") from None


DRAFT_MARK = "DRAFT, NOT FROZEN"  # the draft's human text says so where the frozen one gives its freeze time
# and its text between <!-- draft --> and <!-- /draft --> (what only a draft says) goes at the freeze


def freeze(now_utc: str, spec_dir: Path | None = None, docs_dir: Path | None = None) -> int:
    """Make the draft the newest version, frozen at now_utc ("2026-12-02T06:00:00Z"): the
    newest version's two files move, byte for byte, to their archived names; the draft's
    frozen_utc and its human text's DRAFT_MARK get the time; both new hashes are recorded.
    Checks first (ProtocolError, nothing changed): the draft is the next number, unfrozen,
    with its human text; the recorded hashes hold. Returns the new version."""
    spec = spec_dir or paths.spec_dir()
    docs = docs_dir or spec.parent / "docs"
    verify(spec, docs)
    old = int(json.loads((spec / FILE).read_text(encoding="utf-8"))[Col.protocol])
    text = (spec / DRAFT).read_text(encoding="utf-8") if (spec / DRAFT).is_file() else ""
    doc_draft = docs / DRAFT.replace(".json", ".md")
    doc = doc_draft.read_text(encoding="utf-8") if doc_draft.is_file() else ""
    try:
        d = json.loads(text) if text else {}
    except ValueError as e:
        raise ProtocolError(f"spec/{DRAFT} is not valid JSON ({e}); nothing was changed") from None
    if d.get(Col.protocol) != old + 1 or d.get("frozen_utc") is not None or text.count('"frozen_utc": null') != 1:
        raise ProtocolError(f'spec/{DRAFT} must be version {old + 1} with one "frozen_utc": null')
    if doc.count(DRAFT_MARK) < 1:
        raise ProtocolError(f"docs/{doc_draft.name} must say {DRAFT_MARK!r} where the freeze time goes")
    (spec / FILE).rename(spec / archived(FILE, old))
    (docs / DOC).rename(docs / archived(DOC, old))
    (spec / FILE).write_text(text.replace('"frozen_utc": null', f'"frozen_utc": "{now_utc}"'), encoding="utf-8")
    doc = re.sub(r"<!-- draft -->.*?<!-- /draft -->\n*", "", doc, flags=re.S)  # what only a draft says
    (docs / DOC).write_text(doc.replace(DRAFT_MARK, f"frozen {now_utc}"), encoding="utf-8")
    (spec / DRAFT).unlink()
    doc_draft.unlink()
    known = json.loads((spec / VERSIONS).read_text(encoding="utf-8"))
    digest = {k: hashlib.sha256(f.read_bytes()).hexdigest() for k, f in (("spec", spec / FILE), ("doc", docs / DOC))}
    known[str(old + 1)] = digest
    (spec / VERSIONS).write_text(json.dumps(known, indent=2) + "\n", encoding="utf-8")
    _read.cache_clear()
    return old + 1


def designing(key: str) -> dict:
    """A section of the design the harness runs (a benchmark's, e.g. IM's): the draft's while
    one is written, else the newest version's. The analysis judges a sweep by its own
    version's section instead."""
    return (draft() or _load(None))[key]


def alpha() -> float:
    return float(load()["alpha"])


def level() -> float:
    """The two-sided level of every deciding interval (two one-sided tests at alpha)."""
    return float(load()["interval"][Col.level])


def margin_factor(exponent: float = 1.0) -> float:
    """The margin: the protocol's factor, raised to a sensitivity exponent (1: as written)."""
    return float(load()["margin"][Col.factor]) ** exponent


def rounds_deciding() -> int:
    return int(load()[Col.design]["rounds_deciding"])


def rounds_figure_only() -> int:
    return int(load()[Col.design]["rounds_figure_only"])


DESIGN_TRIALS = {"deciding": rounds_deciding, "figure-only": rounds_figure_only}


def trials(value):
    """A profile's trials: an integer as given, or the design's "deciding" / "figure-only"."""
    return DESIGN_TRIALS[value]() if isinstance(value, str) and value in DESIGN_TRIALS else value


def ordinal_no_region() -> bool:
    """Protocol 2 on: an order word's no region starts at 1 (decision.ordinal_no_region)."""
    return bool(load()["decision"].get("ordinal_no_region"))


def section(key: str) -> dict:
    """A section of the version in force that only later versions have (warmup, reruns,
    scale, throughput_metric), named in the error when the version lacks it."""
    p = load()
    if key not in p:
        raise KeyError(f"protocol {p[Col.protocol]} has no '{key}' section (it came with a later version)")
    return p[key]


def warmup_rule() -> dict:
    return section("warmup")


def rerun_rule() -> dict:
    return section("reruns")


def sensitivity_exponents() -> tuple[float, ...]:
    return tuple(float(e) for e in load()["sensitivity"]["margin_exponents"])


def claim(cid: str) -> dict:
    """A claim's entry: the protocol version's, else a plug-in benchmark's own (its
    spec.json's "claims": a claim the frozen protocol does not hold, judged by its words)."""
    return _claim(str(path(_VERSION.get())), cid, plugins.spec_files())


@cache
def _claim(file: str, cid: str, plugged: tuple[tuple[str, str, str], ...]) -> dict:
    for c in _read(file)["claims"]:
        if c[Col.id] == cid:
            return c
    for kind, _, entry_file in plugged:
        for c in plugins.spec_entry(entry_file).get("claims", []) if kind == "benchmark" else ():
            if c[Col.id] == cid:
                return c
    raise KeyError(f"claim {cid!r} is not in {Path(file).name}")


def claim_ids() -> tuple[str, ...]:
    return tuple(c[Col.id] for c in load()["claims"])


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
        """(below, above): a ratio <= below or >= above is in the no region: one margin
        factor beyond the yes region, or, from protocol 2 on, right at an ordinal bound [1, 0]."""
        m = margin_factor(self.exponent)
        lo, hi = self.yes()
        ordinal = ordinal_no_region()
        below = lo if ordinal and self.lo_spec == (1, 0) else lo / m
        above = hi if ordinal and self.hi_spec == (1, 0) else hi * m
        return (below if self.lo_spec else 0.0), (above if self.hi_spec else math.inf)

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
