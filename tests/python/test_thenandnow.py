"""The abstract and the then-and-now tables against the committed data, recomputed here
independently of the code that builds them: ours from the pieces' per-run tables (runs.csv:
the selected ok runs), the paper's from data/reference/'s CSVs, the verdicts from the
pieces' claims.csv."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pandas as pd
import pytest

from serverbench import protocol
from serverbench.analysis.claims import engine
from serverbench.analysis.reading.csvout import SIGNIFICANT_DIGITS
from serverbench.analysis.reporting import abstract, paperscale, thenandnow, vocabulary
from serverbench.analysis.reporting.cells import sig

ROOT = Path(__file__).resolve().parents[2]
PROCESSED = ROOT / "data" / "processed"
REF = ROOT / "data" / "reference"
METRIC = {"pingping": "elapsed_s", "spawn": "all_ready_s", "throughput": "paper_msgs_per_min"}

pytestmark = pytest.mark.skipif(not paperscale.latest(PROCESSED), reason="no paper piece committed")


@pytest.fixture(scope="module")
def rows() -> pd.DataFrame:
    return thenandnow.rows(PROCESSED)


WRITTEN = 10.0 ** (1 - SIGNIFICANT_DIGITS)  # the processed tables' precision (csvout)


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
        assert row.ours == pytest.approx(values.median() / scale, rel=WRITTEN), row
        # the interval's ends are order statistics of the same runs and bracket the median
        assert any(math.isclose(row.ours_lo * scale, v, rel_tol=WRITTEN) for v in values), row
        assert any(math.isclose(row.ours_hi * scale, v, rel_tol=WRITTEN) for v in values), row
        assert row.ours_lo <= row.ours <= row.ours_hi
        if paper > 0:
            assert row.ratio == pytest.approx(values.median() / scale / paper, rel=WRITTEN)
            assert row.ratio_lo == pytest.approx(row.ours_lo / paper, rel=WRITTEN)
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
    # each verdict's count: the claim's verdict from every sweep of its pieces, as the
    # paper-scale section gives it (a claim judged in two pieces counts once)
    at_scale = {c.id: vocabulary.word(c.verdict) for c in paperscale.at_scale(PROCESSED)}
    assert set(at_scale) == set(verdicts)
    for word_ in (vocabulary.SUPPORTED, vocabulary.CONTRADICTED, vocabulary.INCONCLUSIVE):
        n = sum(v == word_ for v in at_scale.values())
        if n:
            assert re.search(rf"\b{n} {word_}\b", text), (word_, n)
    untestable = [c for c, vs in verdicts.items() if all(v.startswith("not testable") for v in vs)]
    if untestable:
        assert f"{len(untestable)} not testable" in text
    # a claim code appears with its short name (engine.Claim.short), never its full text
    short = {c.id: c.short for c in engine.all_claims()}
    for code in set(re.findall(r"\b[CET]\d+[a-z]?\b", text)):
        assert f"{code} ({short[code]})" in text or (not short.get(code) and code in text), code
        assert protocol.claim(code)["sentence"] not in text
    # the largest change: the ratio ranges of Fig. 5 per language, recomputed from the rows above
    fig5 = rows[rows.figure == "Fig. 5"]
    for lang, label in (("scala_akka", "Scala/Akka"), ("erlang", "Erlang"), ("go", "Go")):
        r = fig5[fig5.language == lang]
        lo, hi = sig(r.ratio.min(), 2), sig(r.ratio.max(), 2)
        assert f"{label}'s" in text and (f"{lo}-{hi}" in text or lo == hi and lo in text), (label, lo, hi)
    numbers = {float(x.replace(",", "")) for x in re.findall(r"(?<![\w.*-])\d[\d,]*\.?\d*", text)}
    assert numbers, text


def _copy_pieces(dst_root: Path) -> None:
    """Each piece's newest processed sweep and the paper's own verdicts, copied under dst_root."""
    for folder in paperscale.latest(PROCESSED).values():
        dst = dst_root / folder.name
        dst.mkdir()
        for f in folder.iterdir():
            (dst / f.name).write_bytes(f.read_bytes())
    (dst_root / "paper-reference").mkdir()
    (dst_root / "paper-reference" / "claims.csv").write_bytes(
        (PROCESSED / "paper-reference" / "claims.csv").read_bytes()
    )


def test_abstract_says_the_gap_is_not_measured_without_an_attribution(tmp_path, monkeypatch):
    if abstract.gap_attribution(PROCESSED) is None:
        assert "not measured yet" in abstract.text(PROCESSED)
    # the attribution sentence is read here, not the word budget (the test below has that):
    # how long the other sentences are depends on the committed sweeps
    monkeypatch.setattr(abstract, "MAX_WORDS", 10_000)
    # with an attribution table the abstract reads it (a copy of the pieces plus a table)
    _copy_pieces(tmp_path)
    gap = tmp_path / "gap-throughput-2cores-20261128T000000Z"
    gap.mkdir()
    cell = {
        "benchmark": "throughput",
        "language": "scala_akka",
        "config": "cores=2, pairs=64",
        "point": "2 cores, 64 pairs",
        "n_rounds": 5,
    }
    pd.DataFrame(
        [
            {**cell, "factor": "program", "ratio": 2.5, "lo": 2.2, "hi": 2.8},
            {**cell, "factor": "release", "ratio": 1.5, "lo": 1.3, "hi": 1.6},
            {**cell, "factor": "quirk:send", "ratio": 1.2, "lo": 1.1, "hi": 1.3},
            {**cell, "language": "go", "factor": "program", "ratio": 7.0, "lo": 6.0, "hi": 8.0},
        ]
    ).to_csv(gap / "attribution.csv", index=False)
    text = abstract.text(tmp_path)
    assert "not measured yet" not in text
    assert "program 2.5x" in text and "release 1.5x" in text
    assert "Measured attribution at 2 cores, 64 pairs (" in text  # the part of the figure it covers
    assert "quirk:send" not in text  # a quirk alone is beside the product: the table has it
    assert "7x" not in text  # another language's row is not the largest change's
    pilot = tmp_path / "gap-pilot-20261129T000000Z"  # a pilot measures nothing: never read
    pilot.mkdir()
    pd.DataFrame([{**cell, "factor": "program", "ratio": 9.0, "lo": 8.0, "hi": 10.0}]).to_csv(
        pilot / "attribution.csv", index=False
    )
    assert abstract.text(tmp_path) == text


def test_the_attributions_scope_is_what_its_points_share():
    scope = abstract._scope
    one_core = pd.DataFrame({"point": ["1 core, 1 pair", "1 core, 4 pairs", "1 core, 64 pairs"]})
    assert scope(one_core) == " at 1 core, 1-64 pairs"
    sizes = pd.DataFrame({"point": ["5 kB, R = 1,000,000", "50 kB, R = 1,000,000"]})
    assert scope(sizes) == " at 5 and 50 kB, R = 1,000,000"  # a thousands comma does not cut a part
    both = pd.DataFrame(
        {"point": [f"{c}, {p}" for c in ("1 core", "2 cores") for p in ("1 pair", "4 pairs", "64 pairs")]}
    )
    assert scope(both) == " at 1 and 2 cores, 1-64 pairs"  # a varying part as its span
    mixed = pd.DataFrame({"point": ["5 kB, R = 1,000,000", "N = 3,000,000"]})
    assert scope(mixed) == " at 2 points"  # parts that do not line up
    unspannable = pd.DataFrame({"point": ["5 kB, R = 1,000", "5 kB, R = 1,000,000"]})
    assert scope(unspannable) == " at 2 points"  # a varying part that is not '<number> <unit>'
    assert scope(pd.DataFrame({"ratio": [1.0]})) == ""
    versions = pd.DataFrame({"point": ["1.2.3 x", "2 x"]})
    assert scope(versions) == " at 2 points"  # not a number: no float('1.2.3') raised
    assert scope(pd.DataFrame({"point": ["N = 10,000", "N = 2.5 M"]})) == " at 2 points"
    assert abstract._span(["1,000 pairs", "2.5 pairs"]) == "2.5 and 1,000 pairs"


def test_a_second_sweep_of_a_piece_shows_beside_the_newest_and_enters_the_verdicts(tmp_path):
    """Every sweep counts (protocol 2, section 5): with two sweeps of a piece the then-and-now
    table shows the newest with the older one's ours / paper beside it, the deciding ratios are
    combined between the two, and the abstract's counts are the combined verdicts."""
    _copy_pieces(tmp_path)
    pp = max(paperscale.all_sweeps(tmp_path)["pingping"])
    twin = tmp_path / "paper-pingping-29991231T000000Z"  # a later sweep, the same numbers
    twin.mkdir()
    for f in pp.iterdir():
        (twin / f.name).write_bytes(f.read_bytes())
    t = thenandnow.rows(tmp_path)
    fig3 = t[t.figure == "Fig. 3"]
    assert set(fig3.sweep) == {twin.name}
    for r in fig3.itertuples():  # the older sweep's ratio, as the table prints it
        assert r.other_ratios == (thenandnow.num(r.ratio) if r.ratio == r.ratio else "\u2014"), r
    assert set(t[t.figure != "Fig. 3"].other_ratios) == {""}
    md = thenandnow.markdown(t)
    assert "| older sweeps | decides |" in md and "older sweeps* column gives ours / paper" in md
    c = abstract.claims(tmp_path)
    c1 = c[(c.id == "C1") & (c.piece == "pingping")].iloc[0]
    # the twin is recorded after protocol 4's freeze: its pooled rule stands ("2 sweeps, pooled sd")
    assert "2 sweeps" in c1.ratios and twin.name in c1.sweep and pp.name in c1.sweep
    combined = {x.id: vocabulary.word(x.verdict) for x in paperscale.at_scale(tmp_path)}
    assert c1.verdict == combined["C1"]
    table = abstract.deciding_markdown(tmp_path)  # one row per claim and piece, however many sweeps
    assert table.count("| **C1** ") == 1 and "C1 (continued)" not in table


def test_an_abstract_over_its_word_budget_gives_up_details_before_the_attribution(tmp_path, monkeypatch):
    """Past MAX_WORDS the gap sweeps' ids go first (the table names them), then the claims'
    short names; only an abstract that still does not fit points to the table for the
    attribution. Each stays within its budget."""
    whole = abstract.text(PROCESSED)
    if "Measured attribution" not in whole:
        pytest.skip("no committed attribution: nothing to send to the table")
    monkeypatch.setattr(abstract, "MAX_WORDS", len(whole.split()) - 1)
    shorter = abstract.text(PROCESSED)
    assert "Measured attribution" in shorter and "gap-" not in shorter and "gap-" in whole
    assert len(shorter.split()) <= abstract.MAX_WORDS
    monkeypatch.setattr(abstract, "MAX_WORDS", 40)
    tight = abstract.text(PROCESSED)
    assert tight.endswith("The measured attribution of the gap is in the table below.")


def test_boots_of_one_machine_kind_reporting_memory_kib_apart_are_one_kind(tmp_path):
    """Two VM boots of one type reported memory 4 KiB apart: one kind, said once; two CPU models
    sold as "AMD EPYC" are two kinds; without boot ids nothing tells instances apart, so the
    abstract counts none (it said "3 instances" from fingerprints that hash a kernel build)."""
    folders = []
    for i, (mem, fp, model) in enumerate(
        [(25276510208, "a" * 16, 1), (25276510208, "b" * 16, 17), (25276514304, "c" * 16, 17)]
    ):
        f = tmp_path / f"s{i}"
        f.mkdir()
        machine = {"fingerprint": fp, "cpu_family": 25, "cpu_model_number": model}
        info = {
            "host": {"cpu_model": "AMD EPYC", "logical_cpus": 2, "memory_bytes": mem},
            "first_started_utc": f"2026-11-2{7 + i}T00:00:00Z",
            "manifest": {"machine": machine},
        }
        (f / "sweep.json").write_text(json.dumps(info), encoding="utf-8")
        folders.append(f)
    said = abstract._machine(folders)
    assert said.startswith("AMD EPYC 25/1 and AMD EPYC 25/17 machines, each with 2 CPUs, 24 GiB ("), said
    assert "instances" not in said and "boots" not in said and said.count("GiB") == 1
