"""The report's table of every deciding ratio at the paper's scale (layout.DECIDING), from the
committed `paper` pieces: each claim's deciding comparisons combined over the sweeps of
each piece that judged it (paperscale.at_scale, claims/scale.py), with their intervals.

Each row shows the number that decides it: a piece's row gives that piece's
verdict, the claim rule over its own combined comparisons (verdictrule.of_piece), beside
them; a claim judged in several pieces has a row of its own first, with the claim's
verdict over all its pieces' comparisons and the piece(s) whose comparisons decide it.
"""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd

from serverbench import protocol
from serverbench.analysis.claims import engine, scale
from serverbench.analysis.reporting import paperscale, thenandnow, verdictrule, vocabulary
from serverbench.rawdata.columns import Col

DECIDING = ("yes", "no", "unclear")  # a comparison's results that count (the rest only draw)
COLUMNS = ["id", "piece", "sweep", "verdict", "claim_verdict", "reason", "why", "ratios"]


def _read(f: Path) -> pd.DataFrame:
    try:
        return pd.read_csv(f)
    except (FileNotFoundError, pd.errors.EmptyDataError):
        return pd.DataFrame()


def _evidence(x) -> str:
    """One deciding comparison: 'Go/Erlang at cores=1, pairs=64: 3.64 [3.43, 3.86] yes', or
    for a limit (C3) 'Akka vs Erlang max processes (budget=8 GiB): 8,800,000 ok, ... yes'."""
    if isinstance(x.ratio, float) and not math.isnan(x.ratio):
        return f"{x.comparison} at {x.config}: {thenandnow.interval(x.ratio, x.ci_lo, x.ci_hi)} {x.result}"
    sides = "; ".join(str(s) for s in (getattr(x, "akka", None), getattr(x, "other", None)) if isinstance(s, str))
    return f"{x.comparison} ({x.config}): {sides} {x.result}"


def _combined(x: scale.Combined, ev: pd.DataFrame) -> list[str]:
    """One combined comparison as a row prints it: ratio [interval] result, and 'between N
    sweeps' when there are several, or its pool (one sweep without a pool: its own interval,
    as its evidence table gives it). A comparison without a ratio (C3's limits) shows the newest sweep's sides."""
    if math.isfinite(x.ratio):
        note = verdictrule.holm_note(x)
        spread = f" ({verdictrule.spread(x)}{'; ' + note if note else ''})" if x.n > 1 or x.pooled is not None else ""
        return [f"{x.comparison} at {x.config}: {thenandnow.interval(x.ratio, x.lo, x.hi)} {x.result}{spread}"]
    mine = (
        ev[(ev[Col.comparison] == x.comparison) & (ev[Col.config].fillna("").astype(str) == x.config)]
        if not ev.empty
        else ev
    )
    return [_evidence(r) for r in mine.itertuples()] or [f"{x.comparison} ({x.config}): {x.result}"]


def _combined_ratios(c: scale.ClaimAtScale, piece: str, ev: pd.DataFrame) -> str:
    """The deciding comparisons of claim `c` made in `piece`, combined over its sweeps."""
    return "; ".join(part for x in c.comparisons if x.piece == piece for part in _combined(x, ev))


def claims(processed_dir: Path | None = None) -> pd.DataFrame:
    """One row per (claim, piece that judged it): id, piece, sweeps (every sweep of the
    piece), verdict (the piece's, in the shared vocabulary's word), claim_verdict (the
    claim's at the paper's scale, over all its pieces), reason (for not testable), why, and
    the piece's deciding ratios with their intervals (`ratios`: 'Go/Erlang at cores=1,
    pairs=64: 3.64 [3.43, 3.86] no; ...').

    A piece's verdict is the claim rule over that piece's comparisons combined over its
    sweeps (verdictrule.of_piece); a piece whose sweeps could not test the claim keeps not
    testable with its reason. The claim's verdict is paperscale.at_scale's (protocol 2
    section 5: the union of its pieces' comparisons)."""
    combined = {c.id: c for c in paperscale.at_scale(processed_dir)}
    every = paperscale.all_sweeps(processed_dir)
    rows = []
    for piece, folder in paperscale.latest(processed_dir).items():
        c = _read(folder / "claims.csv")
        ev = _read(folder / "claims_evidence.csv")
        for r in c.itertuples():
            e = ev[(ev[Col.claim] == r.id) & ev[Col.result].isin(DECIDING)] if not ev.empty else ev
            cs = combined.get(r.id)
            ratios = _combined_ratios(cs, piece, e) if cs else "; ".join(_evidence(x) for x in e.itertuples())
            why = r.why if isinstance(r.why, str) else ""
            here = any(s.piece == piece for s in cs.sweeps) if cs else False
            verdict = vocabulary.word(verdictrule.of_piece(cs, piece) if here else r.verdict)
            rows.append(
                {
                    "id": r.id,
                    "piece": piece,
                    "sweep": ", ".join(f.name for f in every.get(piece, [folder])),
                    "verdict": verdict,
                    "claim_verdict": vocabulary.word(cs.verdict) if cs else verdict,
                    "reason": vocabulary.reason(why, piece=True) if verdict == vocabulary.NOT_TESTABLE else "",
                    "why": why,
                    "ratios": ratios,
                }
            )
    return pd.DataFrame(rows, columns=COLUMNS)


def ran(processed_dir: Path | None = None) -> pd.DataFrame:
    """claims() restricted to the claims a piece runs the benchmark of (paperscale.verdicts)."""
    v = paperscale.verdicts(processed_dir)
    v = v[v[Col.verdict] != paperscale.NOT_RUN][["id", "piece"]].drop_duplicates()  # a row per sweep there
    return claims(processed_dir).merge(v, on=["id", "piece"], how="inner")


def one_verdict(g: pd.DataFrame) -> tuple[str, str]:
    """(verdict, reason) of a claim judged in several pieces: the one tested verdict when
    the pieces that could test it agree, 'differs between pieces' when they do not, else
    not testable with the reasons of its pieces."""
    tested = list(dict.fromkeys(g.loc[g[Col.verdict] != vocabulary.NOT_TESTABLE, "verdict"]))
    if len(tested) == 1:
        return tested[0], ""
    if tested:
        return "differs between pieces", ""
    reasons = list(dict.fromkeys(g[Col.reason]))
    return vocabulary.NOT_TESTABLE, "; ".join(reasons)


def claim_verdict(g: pd.DataFrame) -> tuple[str, str]:
    """(verdict, reason) of the claim whose pieces' rows (of claims()) are g: its verdict at
    the paper's scale, with its pieces' reasons when it is not testable."""
    return one_verdict(g.assign(verdict=g["claim_verdict"]))


def _newest_evidence(c: scale.ClaimAtScale, piece: str) -> pd.DataFrame:
    """The deciding evidence rows of c in the newest sweep of `piece` (what its row shows)."""
    mine = [s.evidence for s in c.sweeps if s.piece == piece and s.evidence is not None and not s.evidence.empty]
    return mine[-1][mine[-1][Col.result].isin(DECIDING)] if mine and Col.result in mine[-1] else pd.DataFrame()


def _decided_by(c: scale.ClaimAtScale) -> str:
    """The claim's own row: 'decided by `piece` (...)' for each piece whose comparisons give
    its verdict, with the comparisons that do: every 'no' of a contradicted claim; of an
    inconclusive one the piece's unclear ones, counted, the first shown; of a supported one
    the piece's yes ones, counted, the one nearest its region's edge shown."""
    found = verdictrule.deciders(c.comparisons)
    if not found or c.verdict not in (engine.SUPPORTED, engine.CONTRADICTED, engine.INCONCLUSIVE):
        return ""
    parts = []
    for p in dict.fromkeys(x.piece for x in found):
        xs = [x for x in found if x.piece == p]
        ev = _newest_evidence(c, p)
        if c.verdict == engine.CONTRADICTED:
            shown = "; ".join(part for x in xs for part in _combined(x, ev))
        else:
            one = "; ".join(_combined(verdictrule.pick(xs), ev))
            if c.verdict == engine.INCONCLUSIVE:
                shown = f"{len(xs)} unclear, none no" + (f"; the first: {one}" if len(xs) > 1 else f": {one}")
            else:
                shown = f"all {len(xs)} yes; the nearest its region's edge: {one}" if len(xs) > 1 else one
        parts.append(f"`{p}` ({shown})")
    return "decided by " + " and ".join(parts)


def deciding_markdown(processed_dir: Path | None = None) -> str:
    """Every claim judged at the paper's scale: its full text (the first time its code
    appears), its verdict and the comparisons that decide it, and each piece's verdict with
    that piece's deciding ratios and their intervals."""
    t = ran(processed_dir)
    if t.empty:
        return "No piece of the `paper` profile is committed yet."
    combined = {c.id: c for c in paperscale.at_scale(processed_dir)}
    lines = [
        "Each deciding ratio is first side / second side, the median of the per-round ratios (Hodges-Lehmann) "
        "with its interval, and the comparison's result (yes / no / unclear against the claim's regions, "
        "docs/protocol.md). A piece's verdict is the claim rule over that piece's comparisons alone (supported "
        "when all are yes, contradicted when any is no, inconclusive otherwise); a claim judged in several "
        "pieces has its own verdict, over all of them, on a row of its own naming the piece(s) that decide it.",
        "",
        "| claim | piece | verdict | deciding ratios [interval] |",
        "|---|---|---|---|",
    ]
    for cid, g in t.groupby("id", sort=False):
        head = f"**{cid}** {protocol.claim(cid)['sentence']}"
        c = combined.get(cid)
        if len(g) > 1:
            verdict, reason = claim_verdict(g)
            detail = _decided_by(c) if c else ""
            if not detail and verdict == vocabulary.NOT_TESTABLE:
                detail = "; ".join(dict.fromkeys(w for w in g[Col.why] if w))
            said = f"**{verdict}**" + (f" ({reason})" if reason else "")
            lines.append(f"| {head} | the claim ({len(g)} pieces) | {said} | {detail} |")
        for i, r in enumerate(g.itertuples()):
            first = i == 0 and len(g) == 1
            said = f"**{r.verdict}**" + (f" ({r.reason})" if r.reason else "")
            detail = r.ratios or (r.why if r.verdict != vocabulary.SUPPORTED else "")
            lines.append(f"| {head if first else f'{cid} (continued)'} | `{r.piece}` | {said} | {detail} |")
    return "\n".join(lines)
