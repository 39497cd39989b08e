"""The claims at the paper's scale: every committed sweep of the `paper` profile's pieces,
each claim combined over all of them (analysis/claims/scale.py) by one protocol version's
rule, and which version's verdict stands.

Protocol 4 changed only the rule at a scale (the between-sweep variance pooled over a
benchmark's comparisons) and was frozen after the sweeps committed before it had been seen:
on those sweeps its verdicts are exploratory (docs/protocol.md section 9). So a claim's
standing verdict is protocol 4's where a sweep recorded after protocol 4's freeze enters it
(confirmatory), else the verdict by the rule frozen before those sweeps, protocol 3's; the
report shows both beside each other, labelled.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import pandas as pd

from serverbench import protocol
from serverbench.analysis.claims import engine, scale
from serverbench.analysis.claims.record import _info, kind_of
from serverbench.rawdata.columns import Col

PROFILE = "paper"
BEFORE_POOLING = 3  # the version whose scale rule was frozen before the committed pieces' sweeps


def pooling_since() -> int:
    """The first version whose rule at a scale pools the between-sweep variance (protocol 4).
    Its verdicts are the pooled rule's, and its freeze is the one a confirmatory sweep must
    follow: a later version that keeps that rule and the paper's claims (protocol 5 changed
    only the IM case study) neither re-opens nor re-labels them."""
    for v in protocol.versions():
        with protocol.in_force(v):
            if protocol.load().get("scale", {}).get("variance") == "pooled":
                return v
    return protocol.newest()


@dataclass(frozen=True)
class Both:
    """One claim at the paper's scale by the earlier and the newest rule, and which stands."""

    earlier: scale.ClaimAtScale
    newest: scale.ClaimAtScale

    @property
    def confirmatory(self) -> bool:
        return scale.confirmatory(self.newest)

    @property
    def standing(self) -> scale.ClaimAtScale:
        return self.newest if self.confirmatory else self.earlier


def scale_rule_since() -> int:
    """The first protocol version with a rule that combines sweeps at a scale (its `scale`)."""
    for v in protocol.versions():
        with protocol.in_force(v):
            if "scale" in protocol.load():
                return v
    return protocol.newest()


def _stamp(f: Path) -> tuple[int, int] | None:
    try:
        st = f.stat()
    except FileNotFoundError:
        return None
    return st.st_mtime_ns, st.st_size


@lru_cache(maxsize=256)
def _read(f: Path, stamp: tuple[int, int] | None) -> pd.DataFrame:
    """One processed table, read once while it is unchanged (`stamp`): a paper-scale section
    asks each sweep's claims.csv and claims_evidence.csv once per claim and rule (about 1,600
    reads of some 40 files in the main report). Callers select from it, never change it."""
    return pd.read_csv(f)


def sweep_verdict(piece: str, folder: Path, cid: str) -> scale.SweepVerdict:
    """One sweep's own verdict on a claim (its claims.csv) with its evidence rows."""
    f = folder / "claims.csv"
    t = _read(f, _stamp(f))
    row = t[t[Col.id] == cid]
    verdict = str(row[Col.verdict].iloc[0]) if len(row) else engine.ERROR
    version = (
        int(row[Col.protocol].iloc[0])
        if len(row) and Col.protocol in row and pd.notna(row[Col.protocol].iloc[0])
        else None
    )
    ev = pd.DataFrame()
    f = folder / "claims_evidence.csv"
    stamp = _stamp(f)
    if stamp is not None and stamp[1] > 1:
        e = _read(f, stamp)
        ev = e[e[Col.claim] == cid] if Col.claim in e else pd.DataFrame()
    return scale.SweepVerdict(piece, folder.name, kind_of(_info(folder)), version, verdict, ev)


def groups(by_piece: dict[str, list[Path]]) -> tuple[dict[str, list[scale.SweepVerdict]], dict[str, str]]:
    """({claim: its sweeps, every sweep of every piece that runs its benchmark}, {claim: its
    benchmark}) for the claims a committed piece judges."""
    from serverbench.harness.planning.pieces import pieces

    out: dict[str, list[scale.SweepVerdict]] = {}
    bench: dict[str, str] = {}
    every_piece = pieces(PROFILE).values()  # read once: each read parses and checks the profile
    for claim in engine.all_claims():
        sweeps = [
            sweep_verdict(p.name, folder, claim.id)
            for p in every_piece
            if claim.needs.table in p.benchmarks
            for folder in by_piece.get(p.name, [])
        ]
        if sweeps:
            out[claim.id], bench[claim.id] = sweeps, claim.needs.table
    return out, bench


def combined(by_piece: dict[str, list[Path]], version: int | None = None):
    """(every claim combined by `version`'s rule (default the newest), the pools it used)."""
    g, bench = groups(by_piece)
    return scale.combine_all(g, bench, version)


def both(by_piece: dict[str, list[Path]]) -> tuple[list[Both], dict[str, scale.Pool]]:
    """Each claim by the rule before pooling and by the pooled one, and the pooled one's pools."""
    earlier, _ = combined(by_piece, BEFORE_POOLING)
    newest, pools = combined(by_piece, pooling_since())
    return [Both(a, b) for a, b in zip(earlier, newest, strict=True)], pools


def side_by_side(pairs: list[Both], pools: dict[str, scale.Pool]) -> list[str]:
    """The markdown lines: each claim's verdict by both rules, which stands, and the pools."""
    v3, v4 = BEFORE_POOLING, pooling_since()
    lines = [
        f"Protocol {v4} pools the between-sweep variance of a benchmark's comparisons (docs/protocol.md section 5). "
        f"It was frozen after the sweeps committed before it had been seen, so on those sweeps its verdicts are "
        f"*exploratory*; a claim's verdict is protocol {v4}'s only where a sweep recorded after its freeze enters "
        f"it (*confirmatory*), else protocol {v3}'s:",
        "",
        f"| claim | protocol {v3} | protocol {v4} | which stands |",
        "|---|---|---|---|",
    ]
    for b in pairs:
        label = "confirmatory" if b.confirmatory else "exploratory"
        stands = f"protocol {v4}" if b.confirmatory else f"protocol {v3}"
        lines.append(f"| {b.earlier.id} | {b.earlier.verdict} | {b.newest.verdict} ({label}) | {stands} |")
    if pools:
        lines += ["", "Protocol " + str(v4) + "'s pools: " + "; ".join(p.text() for p in pools.values()) + "."]
    return lines
