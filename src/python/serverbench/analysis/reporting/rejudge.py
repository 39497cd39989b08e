"""How many sweeps agree with a claim's verdict at the paper's scale, each sweep judged again
by the protocol in force from its processed tables.

A sweep's own verdict (its claims.csv) is by the version in force when it ran (protocol 1, 2
or 3, docs/protocol.md section 9), and stays so in its own listing; counting those against
a verdict at a scale that the newest rules give would count a rule change as a
disagreement (a sweep inconclusive under protocol 1 may be contradicted under today's). Here
each sweep with processed tables is judged again by the engine under the newest frozen
version (`version()`); a sweep without them (a claims.csv alone) counts by its own verdict.
The re-judged verdicts are kept in the user's cache under the digest of the sweep's files
and the code (reading/cache.py).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from serverbench import paths, protocol
from serverbench.analysis.claims import engine, scale
from serverbench.analysis.reading import cache, process

CACHE_KIND = "paper-sweep-rejudged"


def version() -> int:
    """The version the sweeps are judged again by: the newest."""
    return protocol.newest()


def _judge(folder: Path, piece: str) -> dict[str, str]:
    from serverbench.harness.planning.pieces import pieces

    spec = pieces("paper").get(piece)
    tables = set(spec.benchmarks) if spec else None  # a piece's claims: those of its benchmarks
    P = process.Processed(folder)
    opts = dataclasses.replace(engine.Options.of(), version=version())
    return {
        c.id: engine.evaluate(c, P, opts).verdict
        for c in engine.all_claims()
        if tables is None or c.needs.table in tables
    }


def verdicts(folder: Path, piece: str) -> dict[str, str] | None:
    """{claim: verdict} of one sweep judged again by version(), or None when the folder holds
    no processed tables to judge."""
    folder = Path(folder)
    if not (folder / "summary.csv").exists():
        return None
    inputs = [("piece", piece.encode()), ("version", str(version()).encode())]
    inputs += cache.folder_inputs(folder, folder.name)
    return cache.json_value(CACHE_KIND, inputs, lambda: _judge(folder, piece))


def now(c: scale.ClaimAtScale, processed_dir: Path | None = None) -> list[tuple[scale.SweepVerdict, str]]:
    """(sweep, its verdict on c judged again by version(), else its own) for every sweep of c."""
    root = Path(processed_dir) if processed_dir else paths.processed_dir()
    out = []
    for s in c.sweeps:
        again = verdicts(root / s.sweep, s.piece)
        out.append((s, again.get(c.id, s.verdict) if again is not None else s.verdict))
    return out


def agreement(c: scale.ClaimAtScale, processed_dir: Path | None = None) -> str:
    """E.g. "3 of 4", "1 of 2 (2 more could not test it)": of the sweeps that could test the
    claim, judged again by version(), how many give its verdict at the scale."""
    judged = now(c, processed_dir)
    tested = [v for _, v in judged if v != engine.NOT_TESTABLE] or [v for _, v in judged]
    agree = sum(v == c.verdict for v in tested)
    rest = len(judged) - len(tested)
    return f"{agree} of {len(tested)}" + (f" ({rest} more could not test it)" if rest else "")


def changed(c: scale.ClaimAtScale, processed_dir: Path | None = None) -> list[tuple[scale.SweepVerdict, str]]:
    """(sweep, its verdict on c judged again) for the sweeps where that differs from their own."""
    return [(s, v) for s, v in now(c, processed_dir) if v != s.verdict]


def note(claims: list[scale.ClaimAtScale], processed_dir: Path | None = None) -> str:
    """The sentence naming every sweep whose verdict judged again differs from its own (so
    that a count of sweeps agreeing and the sweeps' own verdicts can be read together), or ''."""
    parts = [
        f"{c.id} in `{s.sweep}` (its own, by protocol {s.protocol if s.protocol is not None else '?'}: "
        f"{s.verdict}; now {v})"
        for c in claims
        for s, v in changed(c, processed_dir)
    ]
    if not parts:
        return ""
    whose = "one sweep's verdict differs from its own" if len(parts) == 1 else "these verdicts differ from their own"
    return (
        f"Judged again by protocol {version()} for *sweeps agreeing*, {whose} (listed below): " + "; ".join(parts) + "."
    )
