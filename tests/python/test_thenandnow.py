"""The abstract and the then-and-now tables against the committed data, recomputed here
independently of the code that builds them: ours from the pieces' per-run tables (runs.csv:
the selected ok runs), the paper's from data/reference/'s CSVs, the verdicts from the
pieces' claims.csv."""

from __future__ import annotations

import math
import re
from pathlib import Path

import pandas as pd
import pytest

from serverbench import protocol
from serverbench.analysis.reporting import abstract, paperscale, thenandnow, vocabulary
from serverbench.analysis.reporting.findings import sig

ROOT = Path(__file__).resolve().parents[2]
PROCESSED = ROOT / "data" / "processed"
REF = ROOT / "data" / "reference"
METRIC = {"pingping": "elapsed_s", "spawn": "all_ready_s", "throughput": "paper_msgs_per_min"}

pytestmark = pytest.mark.skipif(not paperscale.latest(PROCESSED), reason="no paper piece committed")


@pytest.fixture(scope="module")
def rows() -> pd.DataFrame:
    return thenandnow.rows(PROCESSED)


def _runs(sweep: str) -> pd.DataFrame:
    r = pd.read_csv(PROCESSED / sweep / "runs.csv", low_memory=False)
    return r[r["is_ok"].astype(bool) & r["selected"].astype(bool) & ~r["warmup"].astype(bool)]


def _config(row) -> dict:
    """The summary keys of a row, read back from its printed point."""
    n = [int(x.replace(",", "")) for x in re.findall(r"\d[\d,]*", row.point)]
    if row.figure == "Fig. 3":
        return {"table": "pingping", "message_bytes": n[0] * 1000, "repetitions": n[1]}
    if row.figure.startswith("Fig. 4"):
        return {"table": "spawn", "processes": n[0]}
    return {"table": "throughput", "cores": n[0], "pairs": n[1]}


def _paper(row, cfg) -> float:
    if cfg["table"] == "pingping":
        d = pd.read_csv(REF / "paper_fig3_pingping.csv")
        d = d[(d.message_bytes == cfg["message_bytes"]) & (d.repetitions == cfg["repetitions"])]
        col = "time_s"
    elif row.figure == "Fig. 4(b)":
        d = pd.read_csv(REF / "paper_fig4b_spawn.csv")
        d, col = d[d.processes == cfg["processes"]], "time_s"
    elif row.figure == "Fig. 4(a)":
        d = pd.read_csv(REF / "paper_fig4_spawn_summary.csv")
        d, col = d[(d.panel == "4a") & (d.processes == cfg["processes"])], "time_s"
    else:  # Fig. 5: the median of the sheet's three recorded runs
        d = pd.read_csv(REF / "paper_fig5_throughput.csv")
        d = d[(d.cores == cfg["cores"]) & (d.pairs == cfg["pairs"])]
        d = d[d.language == row.language]
        return float(d["messages_per_min"].median()) / 1e6 if len(d) else math.nan
    d = d[d.language == row.language]
    return float(d[col].iloc[0]) if len(d) else math.nan


def test_every_row_recomputed_from_runs_and_reference(rows):
    assert not rows.empty
    checked = 0
    for row in rows.itertuples():
        cfg = _config(row)
        table = cfg.pop("table")
        r = _runs(row.sweep)
        r = r[(r["table"] == table) & (r["language"] == row.language)]
        for k, v in cfg.items():
            r = r[r[k] == v]
        values = r[METRIC[table]].astype(float)
        scale = 1e6 if table == "throughput" else 1.0
        paper = _paper(row, dict(cfg, table=table))
        assert row.paper == pytest.approx(paper, rel=1e-9, nan_ok=True), row
        if values.empty:
            assert math.isnan(row.ours), row
            continue
        assert row.ours == pytest.approx(values.median() / scale, rel=1e-9), row
        # the interval's ends are order statistics of the same runs and bracket the median
        assert any(math.isclose(row.ours_lo * scale, v, rel_tol=1e-9) for v in values), row
        assert any(math.isclose(row.ours_hi * scale, v, rel_tol=1e-9) for v in values), row
        assert row.ours_lo <= row.ours <= row.ours_hi
        if paper > 0:
            assert row.ratio == pytest.approx(values.median() / scale / paper, rel=1e-9)
            assert row.ratio_lo == pytest.approx(row.ours_lo / paper, rel=1e-9)
        checked += 1
    assert checked >= 30


def test_headline_points_present(rows):
    fig5 = rows[rows.figure == "Fig. 5"]
    for pairs in thenandnow.FIG5_HEADLINE_PAIRS:
        assert fig5.point.str.endswith(f", {pairs} pair" + ("s" if pairs > 1 else "")).any()
    assert set(rows[rows.figure == "Fig. 3"].point.str.split(",").str[0]) == {"5 kB", "10 kB", "50 kB"}
    assert {"N = 10,000", "N = 100,000"} <= set(rows[rows.figure == "Fig. 4(b)"].point)


def test_every_deciding_point_of_a_piece_is_a_row(rows):
    """Each throughput configuration in a piece's claims_evidence.csv has its row, naming the claim."""
    for piece, folder in paperscale.latest(PROCESSED).items():
        try:
            ev = pd.read_csv(folder / "claims_evidence.csv")
        except pd.errors.EmptyDataError:
            continue
        for r in ev[ev["config"].astype(str).str.contains("cores=") & ev["result"].isin(["yes", "no"])].itertuples():
            n = [int(x) for x in re.findall(r"\d+", r.config)]
            for pairs in n[1:]:
                point = f"{n[0]} core{'s' if n[0] > 1 else ''}, {pairs} pair{'s' if pairs > 1 else ''}"
                hit = rows[(rows.sweep == folder.name) & (rows.point == point)]
                assert hit["decides"].str.contains(r.claim).any(), (piece, r.claim, point)


def _pieces_verdicts() -> dict[str, set[str]]:
    """{claim: its verdicts over the pieces that run its benchmark}, from claims.csv."""
    out: dict[str, set[str]] = {}
    v = paperscale.verdicts(PROCESSED)
    v = v[v.verdict != paperscale.NOT_RUN]
    for r in v.itertuples():
        out.setdefault(r.id, set()).add(r.verdict)
    return out


def test_abstract_numbers_against_committed_data(rows):
    text = abstract.text(PROCESSED)
    assert len(text.split()) <= abstract.MAX_WORDS
    verdicts = _pieces_verdicts()
    assert f"Of the {len(verdicts)} claims judged there" in text
    # each verdict's count, as the pieces' claims.csv give them (a claim judged in two pieces
    # counts once, under the verdict of the pieces that could test it)
    for word_ in (vocabulary.SUPPORTED, vocabulary.CONTRADICTED, vocabulary.INCONCLUSIVE):
        tested = [{vocabulary.word(v) for v in vs} - {vocabulary.NOT_TESTABLE} for vs in verdicts.values()]
        n = sum(t == {word_} for t in tested)
        if n:
            assert re.search(rf"\b{n} {word_}\b", text), (word_, n)
    untestable = [c for c, vs in verdicts.items() if all(v.startswith("not testable") for v in vs)]
    if untestable:
        assert f"{len(untestable)} not testable" in text
    # a claim code appears with its full text
    for code in set(re.findall(r"\b[CET]\d+[a-z]?\b", text)):
        assert f"{code} \u201c{protocol.claim(code)['sentence']}\u201d" in text
    # the largest change: the ratio ranges of Fig. 5 per language, recomputed from the rows above
    fig5 = rows[rows.figure == "Fig. 5"]
    for lang, label in (("scala_akka", "Scala/Akka"), ("erlang", "Erlang"), ("go", "Go")):
        r = fig5[fig5.language == lang]
        lo, hi = sig(r.ratio.min(), 2), sig(r.ratio.max(), 2)
        assert f"{label}'s" in text and (f"{lo}-{hi}" in text or lo == hi and lo in text), (label, lo, hi)
    numbers = {float(x.replace(",", "")) for x in re.findall(r"(?<![\w.*-])\d[\d,]*\.?\d*", text)}
    assert numbers, text


def test_abstract_says_the_gap_is_not_measured_without_an_attribution(tmp_path):
    if abstract.gap_attribution(PROCESSED) is None:
        assert "not measured yet" in abstract.text(PROCESSED)
    # with an attribution table the abstract reads it (a copy of the pieces plus a table)
    for folder in paperscale.latest(PROCESSED).values():
        dst = tmp_path / folder.name
        dst.mkdir()
        for f in folder.iterdir():
            (dst / f.name).write_bytes(f.read_bytes())
    (tmp_path / "paper-reference").mkdir()
    (tmp_path / "paper-reference" / "claims.csv").write_bytes(
        (PROCESSED / "paper-reference" / "claims.csv").read_bytes()
    )
    gap = tmp_path / "akka-gap-20261128T000000Z"
    gap.mkdir()
    pd.DataFrame(
        [
            {"factor": "program", "cores": 1, "pairs": 64, "ratio": 2.5, "lo": 2.2, "hi": 2.8, "n_rounds": 8},
            {"factor": "Akka release", "cores": 1, "pairs": 64, "ratio": 1.5, "lo": 1.3, "hi": 1.6, "n_rounds": 8},
        ]
    ).to_csv(gap / "attribution.csv", index=False)
    text = abstract.text(tmp_path)
    assert "not measured yet" not in text
    assert "program 2.5x" in text and "Akka release 1.5x" in text
