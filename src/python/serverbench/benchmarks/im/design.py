"""Which IM design a sweep ran, and the protocol-5 rules that judge one that ran protocol 5's.

Protocol 5 changes only the IM design (its `im` section) and the claims IM2, IM4 and IM5
(docs/protocol.md while it is the newest version, section 13). A sweep ran that design when its records carry the
new searches (raw `search.phase`: the replicated rate search, the generator's capacity,
chaos, fan-out and memory-cap searches; protocol 3's rate search has no phase). Such a sweep
is judged by protocol 5's rules, read by version: the version in force when it has them (a
sweep started after protocol 5's freeze), else protocol 5 wherever it is recorded (the newest
spec/protocol.json or its archived copy), else, while protocol 5 is written, the draft
(spec/protocol-draft.json; `exploratory()` says so). A sweep of protocol 3's design keeps
protocol 3/4's rules (benchmarks/im/claims.py), whatever version is newest."""

from __future__ import annotations

from serverbench import protocol
from serverbench.benchmarks.im.columns import Col

VERSION = 5  # the version whose IM design this module reads
PHASE = "search.phase"  # the raw field only protocol 5's searches write


def is_v5(P) -> bool:
    """Whether the sweep ran protocol 5's IM design (some IM run has a search phase)."""
    r = P.runs
    if r.empty or PHASE not in r or Col.benchmark not in r:
        return False
    return bool(r.loc[r[Col.benchmark] == "im", PHASE].notna().any())


def spec() -> dict:
    """The whole protocol-5 file: the version in force if it is 5 or later, else version 5
    as recorded, else the draft while it is version 5 (KeyError when none is)."""
    if protocol.version() >= VERSION:
        return protocol.load()
    if VERSION in protocol.versions():
        with protocol.in_force(VERSION):
            return protocol.load()
    d = protocol.draft()
    if d is None or int(d[Col.protocol]) != VERSION:
        raise KeyError(f"no protocol {VERSION}: neither recorded nor the draft")
    return d


def exploratory() -> bool:
    """True while the rules come from the unfrozen draft."""
    return not (protocol.version() >= VERSION or VERSION in protocol.versions())


def im() -> dict:
    return spec()["im"]


def claim(cid: str) -> dict:
    for c in spec()["claims"]:
        if c[Col.id] == cid:
            return c
    raise KeyError(f"protocol {VERSION} has no claim {cid}")


def search() -> dict:
    return im()[Col.search]


def slos() -> tuple[float, tuple[float, ...]]:
    s = search()
    return float(s["slo_p99_s"]), tuple(float(x) for x in s["sensitivity_p99_s"])


def grid() -> tuple[float, float]:
    """(the rate grid's start, its top)."""
    g = im()["rate_grid"]
    return float(g["start_per_s"]), float(g[Col.max_per_s])


def kept_region(exponent: float = 1.0) -> tuple[float, float]:
    """IM5 (a): (yes from, no up to): the claim's lower bound [x, k] = x m^k, no one factor below."""
    x, k = claim("IM5")["yes"]["lo"]
    m = float(spec()["margin"][Col.factor]) ** float(exponent)
    yes = float(x) * m ** float(k)
    return yes, yes / m


def doc() -> str:
    """The human text of protocol 5: docs/protocol.md while it is the newest, else its
    archived copy (the draft's while it was written)."""
    if exploratory():
        return "docs/" + protocol.DRAFT.replace(".json", ".md")
    return "docs/" + (protocol.DOC if protocol.newest() == VERSION else protocol.archived(protocol.DOC, VERSION))


def label() -> str:
    """How the report names the rules: 'protocol 5' or 'protocol 5 (draft, not frozen)'."""
    return f"protocol {VERSION}" + (" (draft, not frozen)" if exploratory() else "")
