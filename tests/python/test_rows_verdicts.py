"""Each row shows the number that decides it: in the report's table of every
deciding ratio at the paper's scale and in the paper-scale section's summary table, the
verdict printed in a row follows, by the protocol's claim rule (supported when every
comparison is yes, contradicted when any is no, inconclusive otherwise), from the
comparisons printed in that same row; and each printed comparison's result is that
comparison's own (scale.Combined.result), not a word borrowed from another row.

Built on the committed data (data/processed/paper-*), read through the functions that
render the tables; the rows are parsed back from their markdown."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from serverbench.analysis.claims import engine, scale
from serverbench.analysis.reporting import abstract, paperscale, verdictrule, vocabulary

ROOT = Path(__file__).resolve().parents[2]
PROCESSED = ROOT / "data" / "processed"
RULED = (vocabulary.SUPPORTED, vocabulary.CONTRADICTED, vocabulary.INCONCLUSIVE)

pytestmark = pytest.mark.skipif(not paperscale.latest(PROCESSED), reason="no paper piece committed")

# a comparison's result as a row prints it: after its interval (or its limits' sides), before
# its spread " (between N sweeps)", the next comparison "; ", a ", between ...", a ")" closing
# a piece's part of a claim's row, " in N sweeps" (a limit's) or the cell's end
RESULT = re.compile(r"(?<![\w-])(yes|no|unclear)(?= \(|;|,|\)| in \d+ sweep|\s*$)")


@pytest.fixture(scope="module")
def claims() -> dict[str, scale.ClaimAtScale]:
    return {c.id: c for c in paperscale.at_scale(PROCESSED)}


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split(" | ")]


def _table(md: str, header_start: str) -> list[list[str]]:
    """The body rows (as cells) of the markdown table whose header row starts so."""
    lines = md.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(header_start))
    rows = []
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        rows.append(_cells(line))
    assert rows, f"no rows under {header_start!r}"
    return rows


def _verdict(cell: str) -> str:
    m = re.match(r"\*\*(.+?)\*\*", cell)
    assert m, f"no verdict in {cell!r}"
    return vocabulary.word(m.group(1))


def _printed(cell: str, comps: list[scale.Combined], sep: str) -> list[tuple[scale.Combined, str]]:
    """(comparison, the result printed for it) for every comparison of `comps` this cell
    prints, found by its label ('<comparison> at <config>: ' in the per-piece table,
    '<comparison>, <config>: ' in the summary; '<comparison> (<config>): ' without a ratio)."""
    out = []
    for x in comps:
        labels = [f"{x.comparison}{sep}{x.config}: ", f"{x.comparison} ({x.config}): "]
        for label in labels:
            m = re.search(r"(?:^|(?<=[\s(]))" + re.escape(label), cell)
            if not m:
                continue
            r = RESULT.search(cell, m.end())
            assert r, f"{label!r} is printed without its result in {cell!r}"
            out.append((x, r.group(1)))
            break
    return out


def _check_row(what: str, verdict: str, printed: list[tuple[scale.Combined, str]], cell: str) -> None:
    for x, said in printed:
        assert said == x.result, f"{what}: {x.comparison} at {x.config} printed {said!r}, its result is {x.result!r}"
    if verdict not in RULED:
        return
    results = [said for _, said in printed]
    assert results, f"{what} says {verdict!r} but prints no comparison that decides it: {cell!r}"
    ruled = vocabulary.word(engine.combine(results))
    assert ruled == verdict, f"{what} says {verdict!r}, its own comparisons {results} give {ruled!r}: {cell!r}"


def test_every_row_of_the_deciding_table_follows_from_its_own_comparisons(claims):
    md = abstract.deciding_markdown(PROCESSED)
    rows = _table(md, "| claim | piece | verdict |")
    checked = 0
    current = None
    for claim_cell, piece_cell, verdict_cell, detail in rows:
        m = re.match(r"\**([A-Z]+\d+[a-z]?)\b", claim_cell)
        assert m, claim_cell
        current = m.group(1)
        c = claims[current]
        verdict = _verdict(verdict_cell)
        piece = re.fullmatch(r"`([\w-]+)`", piece_cell)
        # a piece's row: that piece's comparisons; the claim's own row: any of its pieces'
        comps = [x for x in c.comparisons if piece is None or x.piece == piece.group(1)]
        printed = _printed(detail, comps, " at ")
        if verdict == vocabulary.NOT_TESTABLE:
            assert not printed, f"{current} in {piece_cell}: not testable beside deciding comparisons: {detail!r}"
            continue
        _check_row(f"{current} in {piece_cell}", verdict, printed, detail)
        checked += 1
    assert checked >= len([c for c in claims.values() if vocabulary.word(c.verdict) in RULED])


def test_a_claim_judged_in_several_pieces_has_its_own_row_naming_the_deciding_pieces(claims):
    """The claim's verdict stands apart from its pieces' rows and names the piece(s) whose
    comparisons decide it; each piece's row keeps its own verdict."""
    md = abstract.deciding_markdown(PROCESSED)
    rows = _table(md, "| claim | piece | verdict |")
    for cid, c in claims.items():
        pieces = list(dict.fromkeys(s.piece for s in c.sweeps))
        if len(pieces) < 2 or vocabulary.word(c.verdict) not in RULED:
            continue
        mine = [r for r in rows if re.match(rf"\**{re.escape(cid)}\b", r[0])]
        own = [r for r in mine if not re.fullmatch(r"`[\w-]+`", r[1])]
        assert len(own) == 1, f"{cid}: no row of its own among {mine}"
        assert _verdict(own[0][2]) == vocabulary.word(c.verdict), own[0]
        rule = {vocabulary.CONTRADICTED: scale.NO, vocabulary.INCONCLUSIVE: scale.UNCLEAR}
        want = rule.get(vocabulary.word(c.verdict))
        deciders = {x.piece for x in c.comparisons if want is None or x.result == want}
        assert "decided by" in own[0][3] and all(f"`{p}`" in own[0][3] for p in deciders), own[0]
        for p in pieces:
            (row,) = [r for r in mine if r[1] == f"`{p}`"]
            results = [x.result for x in c.comparisons if x.piece == p]
            if results:
                assert _verdict(row[2]) == vocabulary.word(engine.combine(results)), row


def test_every_row_of_the_summary_table_shows_a_ratio_that_gives_its_verdict(claims):
    md = paperscale.section({}, PROCESSED)
    rows = _table(md, "| claim | at the paper's scale |")
    assert len(rows) == len(claims)
    for cid, verdict_cell, _agreeing, ratio_cell, _quick in rows:
        c = claims[cid]
        verdict = _verdict(verdict_cell)
        assert verdict == vocabulary.word(c.verdict), (cid, verdict_cell)
        printed = _printed(ratio_cell, c.comparisons, ", ")
        if verdict in RULED and c.comparisons:
            assert len(printed) == 1, f"{cid}: the summary shows one deciding comparison, not {ratio_cell!r}"
            _check_row(f"{cid} (summary)", verdict, printed, ratio_cell)
            if verdict == vocabulary.SUPPORTED:  # the yes nearest its region's edge
                (x, _), finite = printed[0], [y for y in c.comparisons if y.ratio == y.ratio]
                if finite:
                    assert x.ratio == x.ratio and verdictrule.room(x) == min(verdictrule.room(y) for y in finite)


def test_an_unclear_ratio_inside_the_no_region_says_why_it_is_not_a_no():
    """C7a's 0.14 [0.0523, 0.375] lies in its no region (<= 0.8) yet is unclear: between 2
    sweeps its 'no' must hold at Holm's level, where the interval is wider. The row says so;
    an unclear one outside the no region says nothing more (the control)."""
    regions = (1.0, float("inf"), 0.8, float("inf"))  # higher: yes >= 1; no <= 0.8 (no_below, no_above)
    x = scale.Combined("p", "Erlang/Akka", "cores=1", ["a", "b"], [0.1, 0.2], 0.14, 0.0523, 0.375, scale.UNCLEAR,
                       regions, holm_level=0.9875)  # fmt: skip
    assert verdictrule.holm_note(x) == "in the no region at 90%, not at the 98.75% Holm's correction asks"
    assert verdictrule.holm_note(dataclasses.replace(x, hi=0.9)) == ""
    assert verdictrule.holm_note(dataclasses.replace(x, result=scale.NO)) == ""
