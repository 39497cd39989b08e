"""What the reports say about their own method and subject.

Every protocol version, level, margin and round count the prose prints is read from the
protocol file (a copy with other numbers, pointed at by SERVERBENCH_PROTOCOL, changes the
glossary) or from the sweep's design, never typed; a sub-report shows its subject and lists
the claims its profile cannot decide once; the main report states the committed IM sweep's
verdicts with a link to its report, and its contents follow the abstract."""

from __future__ import annotations

import ast
import json
import re
from datetime import datetime, timedelta
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

import synthetic_sweeps
from serverbench import paths, protocol
from serverbench.analysis import claims
from serverbench.analysis.reading import registry, synthetic
from serverbench.analysis.reporting import findings, layout, opening, report, runtimes_report, sections
from test_generic_stages import docstring_ids

ROOT = Path(__file__).resolve().parents[2]
PKG = ROOT / "src" / "python" / "serverbench"


def _pingping(tmp_path, rounds: int = 8):
    rng = np.random.default_rng(7)
    times = {lang: list(r * np.exp(rng.normal(0, 0.02, rounds))) for lang, r in (("go", 0.5), ("erlang", 0.55))}
    times["scala_akka"] = list(np.exp(rng.normal(0, 0.02, rounds)))
    return synthetic.processed_from(synthetic_sweeps.pingping_runs(times, reps=100_000), tmp_path)


def _after(v: int) -> str:
    """A first-run time one minute after version v's freeze (so that v judges the sweep)."""
    with protocol.in_force(v):
        frozen = datetime.fromisoformat(protocol.load()["frozen_utc"].replace("Z", "+00:00"))
    return (frozen + timedelta(minutes=1)).strftime("%Y-%m-%dT%H:%M:%SZ")


# ------------------------------------------------------------------ numbers from the protocol


def test_the_glossary_and_method_follow_the_protocol_file(tmp_path, monkeypatch):
    spec = json.loads((paths.spec_dir() / protocol.FILE).read_text(encoding="utf-8"))
    spec["alpha"], spec["interval"]["level"], spec["margin"]["factor"] = 0.1, 0.8, 1.5
    copy = tmp_path / "protocol.json"
    copy.write_text(json.dumps(spec), encoding="utf-8")
    before = findings.glossary()
    assert "90% interval" in before and "m = 1.25 " in before  # today's file
    monkeypatch.setenv("SERVERBENCH_PROTOCOL", str(copy))  # protocol.ENV
    g = findings.glossary()
    assert g != before
    assert "its 80% interval lies inside the yes region" in g and "a 80% interval inside a region" in g
    assert "one-sided 10% test" in g and "alpha = 0.1" in g
    assert "m = 1.5 between the regions" in g and "67-150 % equivalence bounds" in g
    assert "halved (m = 1.2247)" in g and "doubled (m = 2.25)" in g
    assert "90%" not in g and "1.25" not in g
    from serverbench.analysis.reporting import method

    text = method.claims_checked()
    assert "with its 80% interval" in text and "m = 1.5:" in text and "90" not in text


def test_the_no_region_is_the_rule_of_the_version_that_judged_the_sweep():
    from serverbench.analysis.reporting import method

    for v in protocol.versions():
        g = findings.glossary(info={"first_started_utc": _after(v)})
        text = method.claims_checked(info={"first_started_utc": _after(v)})
        with protocol.in_force(v):
            ordinal = protocol.ordinal_no_region()
        line = next(ln for ln in g.splitlines() if ln.startswith("* **yes / no region**"))
        own = line.split(" Protocol ")[0]  # the newest version's rule may follow, named
        assert f"under protocol {v}, which judged this sweep" in own
        assert f"follows protocol {v} " in text
        assert ("it starts at 1" in own) == ordinal, (v, own)
        assert ("beyond every finite bound of the yes region" in own) == (not ordinal), (v, own)
        with protocol.in_force(protocol.newest()):
            newest_ordinal = protocol.ordinal_no_region()
        assert (f"Protocol {protocol.newest()} (the newest" in line) == (ordinal != newest_ordinal)


def test_the_rounds_are_the_sweeps_own(tmp_path):
    V = claims.check_all(_pingping(tmp_path, rounds=6))
    rounds = next(ln for ln in findings.glossary(V).splitlines() if ln.startswith("* **round**"))
    assert "6 rounds" in rounds and "8" not in rounds, rounds
    V8 = claims.check_all(_pingping(tmp_path / "8", rounds=8))
    assert "get 8 rounds" in findings.glossary(V8)


def _prose(tree) -> list[ast.Constant]:
    """The string constants of a module that a report may print: not its docstrings."""
    docs = docstring_ids(tree)
    return [n for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docs]


TYPED = re.compile(
    r"\bfollows protocol \d|\bprotocol \d+\b|\b\d+ ?% (?:interval|test)|\b90 ?%|\b\d+ rounds\b|\bm = \d|\b1\.25\b"
)
# What is still typed, per file: a ratchet (a count may only go down, and the list with it).
STILL_TYPED: dict[str, int] = {}


def test_no_protocol_number_is_typed_in_report_prose():
    found: dict[str, list[str]] = {}
    files = sorted([*PKG.glob("analysis/reporting/*.py"), *PKG.glob("benchmarks/*/report.py")])
    for f in files:
        for n in _prose(ast.parse(f.read_text(encoding="utf-8"))):
            for m in TYPED.finditer(n.value):
                found.setdefault(f.relative_to(PKG).as_posix(), []).append(n.value[max(0, m.start() - 30) : m.end()])
    nb = json.loads((ROOT / "notebooks" / "report.ipynb").read_text(encoding="utf-8"))
    for c in nb["cells"]:
        if c["cell_type"] == "markdown":
            found.setdefault("notebooks/report.ipynb", []).extend(TYPED.findall("".join(c["source"])))
    counts = {f: len(v) for f, v in found.items() if v}
    assert {f: n for f, n in counts.items() if n > STILL_TYPED.get(f, 0)} == {}, found
    assert {f: n for f, n in STILL_TYPED.items() if counts.get(f, 0) < n} == {}, (
        f"fewer now: lower STILL_TYPED {counts}"
    )


# ------------------------------------------------------------------ reports about their subject


def test_the_claims_a_profile_cannot_decide_are_listed_once(tmp_path):
    P = _pingping(tmp_path)
    V = claims.check_all(P)
    shown, line = findings.split_undecided(V, report.tables_run(P))
    assert [v.id for v in shown] == ["C1", "C2", "C10"]  # the claims on PingPing, each with its line
    assert line == ("**Not decided by this profile** (it ran none of their benchmarks): C3-C9, C11, C12, E1-E4, T1-T3.")
    md = findings.first_screen(shown, not_decided=line)
    lines = [ln for ln in md.splitlines() if ln.startswith("* **")]
    assert [re.match(r"\* \*\*(\w+)\*\*", ln).group(1) for ln in lines] == ["C1", "C2", "C10"]
    assert md.count("Not decided by this profile") == 1  # C10 keeps its line: PingPing ran, not Scala actors'
    assert "not testable (the profile did not run it)" in next(ln for ln in lines if "**C10**" in ln)
    assert md.splitlines()[0].startswith("**3 claims:**") and md.rstrip().endswith(line)
    assert findings.split_undecided(V, {"pingping", "spawn", "spawn_max", "throughput"})[1].endswith("E1-E4, T1-T3.")
    assert findings.id_ranges(["IM1", "IM2", "IM3", "T3"], ["T3", "IM1", "IM2", "IM3"]) == "T3, IM1-IM3"


def test_a_report_explains_reduced_for_the_benchmarks_it_shows(tmp_path):
    P = _pingping(tmp_path)
    shown, _ = findings.split_undecided(claims.check_all(P), report.tables_run(P))
    text = report.regime_summary(P, shown)
    assert "**pingping** (C1, C2, C10)" in text and "not run in this sweep" not in text
    assert "none is *reduced*" in report.regime_summary(P, [])
    # the regime table: a row per claim whose source measured at a scale, none for a claim
    # without one (the IM claims' rows were blank)
    assert list(report.regime_rows(shown)["id"]) == ["C1", "C2", "C10"]
    assert report.regime_rows([SimpleNamespace(id="IM1"), SimpleNamespace(id="IM4")]).empty


def test_the_elsewhere_groups_say_what_they_are(tmp_path):
    V = claims.check_all(_pingping(tmp_path))
    text = (
        "confirmation, protocol 1: inconclusive in 4 of 5 (4/5 AMD EPYC); supported in 1 of 5 (1/5 AMD EPYC) | "
        "exploratory, protocol 1: inconclusive in 21 of 38 (6/18 AMD EPYC, 15/20 Intel Xeon); supported in 16 of "
        "38 (11/18 AMD EPYC, 5/20 Intel Xeon); not testable on this machine in 1 of 38 (1/18 AMD EPYC)"
    )
    line = findings.claim_line(V[0], text)
    assert (
        "elsewhere: in 5 confirmation sweeps of protocol 1, inconclusive 4, supported 1; in 38 exploratory sweeps "
        "of protocol 1, inconclusive 21, supported 16, not testable 1." in line
    ), line
    assert "elsewhere: supported 2." in findings.claim_line(V[0], "supported in 2 of 2 (2/2 AMD EPYC)")
    none = pd.DataFrame({"id": [v.id for v in V], "replication (0 other im sweeps)": ""})
    assert "no *elsewhere*: no other im sweep is committed" in findings.first_screen(V, none)


def test_a_sub_report_shows_only_its_subject(tmp_path):
    P = _pingping(tmp_path)
    for profile, subject in layout.subjects().items():
        assert all(t.startswith(subject) for t, _ in sections.render(P, profile)), profile
    # its Figures section: the figures of the tables it ran, not one its own section showed
    # nor one drawn from another sweep's committed data (the audit figure has no tables)
    names = [s.name for s in sections.figures_shown(P, "im", [])]
    assert names and all(set(registry.load().figures[n].tables) & {"pingping"} for n in names)
    assert "audit" not in names and "audit" in [s.name for s in sections.figures_shown(P, "quick", [])]
    assert sections.figures_shown(P, "im", [("x", [registry.FigureRef(n) for n in names])]) == []
    toc = layout.toc(["Does the paper's advice hold for a whole server?"], profile="im", figures=False)
    assert f"[{layout.FIGURES}]" not in toc and f"[{layout.FIGURES}]" in layout.toc(profile="im")


def _committed_im(tmp_path, monkeypatch, report_json: bool = True) -> str:
    data, paper = tmp_path / "data", tmp_path / "paper"
    monkeypatch.setenv("SERVERBENCH_DATA", str(data))
    monkeypatch.setenv("SERVERBENCH_PAPER", str(paper))
    from serverbench.benchmarks.im import report as im_report

    ids = [a.case for a in im_report.ADVICE]
    for name in ("im-20260101T000000Z", "im-20260102T000000Z"):
        f = data / "processed" / name
        f.mkdir(parents=True)
        (f / "sweep.json").write_text(json.dumps({"profile": "im"}), encoding="utf-8")
        verdicts = ["supported"] * len(ids) if name.endswith("01T000000Z") else ["inconclusive", *["contradicted"] * 4]
        pd.DataFrame(
            {"id": ["C1", *ids], "claim": ["c1", *[f"{c} words." for c in ids]], "verdict": ["x", *verdicts]}
        ).assign(protocol=3).to_csv(f / "claims.csv", index=False)
    if report_json:
        (paper / "im").mkdir(parents=True)
        info = {"sweep_id": "im-20260102T000000Z", "profile": "im", "verdicts": {}, "command": "x"}
        (paper / "im" / "report.json").write_text(json.dumps(info), encoding="utf-8")
    return "im-20260102T000000Z"


def test_the_main_report_states_the_committed_im_verdicts_and_links_its_report(tmp_path, monkeypatch):
    from serverbench.benchmarks.im import report as im_report

    P = _pingping(tmp_path / "sweep")  # a sweep without IM runs, as the main report's
    newest = _committed_im(tmp_path, monkeypatch)
    text, table = im_report.section(P)
    assert newest in text and "ran no" not in text and list(table["protocol"]) == [3] * len(table)
    assert "[im/report.html](im/report.html)" in text  # relative to paper/, where the main report is
    assert list(table["claim"]) == [a.case for a in im_report.ADVICE] and "C1" not in set(table["claim"])
    assert list(table["verdict"]) == ["inconclusive", *["contradicted"] * 4]  # the newest sweep's
    assert set(table["sweep"]) == {newest}
    assert table["prediction"].iloc[0] == protocol.claim("IM1")["sentence"].rstrip(".")  # the protocol's words


def test_the_main_report_takes_each_prediction_from_the_newest_sweep_that_judged_it(tmp_path, monkeypatch):
    """A piece judges only its own predictions: a newer piece that could judge IM1 alone
    leaves IM2-IM5 with the older sweep's verdicts, not 'not testable' (as the README says)."""
    from serverbench.benchmarks.im import report as im_report

    older = _committed_im(tmp_path, monkeypatch)
    piece = tmp_path / "data" / "processed" / "im-storm-20260103T000000Z"
    piece.mkdir()
    (piece / "sweep.json").write_text(json.dumps({"profile": "im"}), encoding="utf-8")
    ids = [a.case for a in im_report.ADVICE]
    verdicts = ["supported", *["not testable on this machine"] * (len(ids) - 1)]
    pd.DataFrame({"id": ids, "claim": ids, "verdict": verdicts, "protocol": 3}).to_csv(
        piece / "claims.csv", index=False
    )
    text, table = im_report.committed_section()
    assert list(table["verdict"]) == ["supported", *["contradicted"] * 4]
    assert list(table["sweep"]) == [piece.name, *[older] * 4] and list(table["protocol"]) == [3] * 5
    assert piece.name in text and older in text
    # the same piece under a newer protocol: the older version's verdicts no longer stand in
    pd.DataFrame({"id": ids, "claim": ids, "verdict": verdicts, "protocol": 6}).to_csv(
        piece / "claims.csv", index=False
    )
    _, table = im_report.committed_section()
    assert list(table["verdict"]) == ["supported", *["not testable"] * 4] and set(table["sweep"]) == {piece.name}
    assert im_report.picked() == {
        c: (n, v, p) for c, v, n, p in zip(table["claim"], table["verdict"], table["sweep"], table["protocol"])
    }


def test_without_a_rendered_im_report_the_section_says_how_to_render_it(tmp_path, monkeypatch):
    from serverbench.benchmarks.im import report as im_report

    newest = _committed_im(tmp_path, monkeypatch, report_json=False)
    text = im_report.committed_section()[0]
    assert f"--sweep-id {newest}" in text and "](" not in text
    monkeypatch.setenv("SERVERBENCH_DATA", str(tmp_path / "empty"))
    assert im_report.committed_section() == [im_report.NO_SWEEP]  # truthful: no IM sweep is committed


def test_the_runtimes_section_links_the_committed_runtimes_report(tmp_path):
    paper = tmp_path / "paper"
    assert "no sweep of it is committed yet" in runtimes_report.committed_text(paper)
    for sweep in ("runtimes-20260101T000000Z", "runtimes-20260102T000000Z"):
        (paper / sweep).mkdir(parents=True)
        info = {"sweep_id": sweep, "profile": "runtimes", "verdicts": {}, "command": "x"}
        (paper / sweep / "report.json").write_text(json.dumps(info), encoding="utf-8")
    text = runtimes_report.committed_text(paper)
    assert "`runtimes-20260102T000000Z`" in text and "ran none" not in text
    assert "[runtimes-20260102T000000Z/report.html](runtimes-20260102T000000Z/report.html)" in text


def test_the_main_reports_contents_follow_its_abstract(tmp_path, monkeypatch):
    from serverbench.analysis.reporting import abstract, paperscale, thenandnow

    shown: list[str] = []
    monkeypatch.setattr("IPython.display.display", lambda *objs: shown.extend(str(getattr(o, "data", o)) for o in objs))
    monkeypatch.setattr(abstract, "text", lambda: "ABSTRACT")
    monkeypatch.setattr(abstract, "deciding_markdown", lambda: "DECIDING")
    monkeypatch.setattr(abstract, "gap_attribution", lambda: None)
    monkeypatch.setattr(paperscale, "section", lambda verdicts: "PAPER SCALE")
    monkeypatch.setattr(paperscale, "draw_figures", lambda figdir, show_reference: [])
    monkeypatch.setattr(thenandnow, "markdown", lambda: "THEN AND NOW")
    monkeypatch.setattr(report, "pieces_machine_table", lambda: pd.DataFrame({"item": ["x"], "value": ["y"]}))
    P = _pingping(tmp_path)
    extra = [("Socket benchmarks: echo flood", ["x"])]
    opening.show_opening("quick", P, [], extra, [], tmp_path, True)
    texts = [s for s in shown if isinstance(s, str)]
    at = next(i for i, t in enumerate(texts) if t.startswith("**Abstract.**"))
    assert texts[at + 1].startswith("**Contents**")  # the first screen finds every section
    contents = texts[at + 1]
    assert contents.index(layout.PAPER_SCALE) < contents.index(findings.FINDINGS) < contents.index("echo flood")


@pytest.mark.parametrize("profile", ["im", "audit"])
def test_a_sub_reports_contents_list_only_what_it_shows(tmp_path, monkeypatch, profile):
    shown: list[str] = []
    monkeypatch.setattr("IPython.display.display", lambda *objs: shown.extend(str(getattr(o, "data", o)) for o in objs))
    P = _pingping(tmp_path)
    extra = sections.render(P, profile)  # what the report notebook renders for a sub-report
    lead = layout.lead_sections(profile, [t for t, _ in extra])
    opening.show_opening(profile, P, [], extra, lead, tmp_path, True)
    contents = next(t for t in shown if t.startswith("**Contents**"))
    others = [s.title for s in sections.registered() if not s.title.startswith(layout.subjects()[profile])]
    assert others and not [t for t in others if f"[{t}]" in contents], contents


def test_a_prediction_no_sweep_could_judge_cites_the_piece_that_ran_its_part(tmp_path, monkeypatch):
    """Not testable everywhere: the README and the main report cite the newest sweep that ran
    the prediction's part (its runs), not a newer piece that never ran it."""
    from serverbench.benchmarks.im import report as im_report

    _committed_im(tmp_path, monkeypatch)
    ids = [a.case for a in im_report.ADVICE]
    for name, searches in (("im-rate-20260103T000000Z", ["im_rate", "im_chaos_loss"]),
                           ("im-fanout-20260104T000000Z", ["im_fanout"])):  # fmt: skip
        piece = tmp_path / "data" / "processed" / name
        piece.mkdir()
        (piece / "sweep.json").write_text(json.dumps({"profile": "im"}), encoding="utf-8")
        verdicts = ["not testable on this machine"] * len(ids)
        pd.DataFrame({"id": ids, "claim": ids, "verdict": verdicts, "protocol": 6}).to_csv(
            piece / "claims.csv", index=False
        )
        pd.DataFrame({"table": "im_rate", "search_name": searches}).to_csv(piece / "runs.csv", index=False)
    chosen = im_report.picked()
    assert chosen["IM5"] == ("im-rate-20260103T000000Z", "not testable", 6)  # it ran the loss runs
    assert chosen["IM4"][0] == "im-rate-20260103T000000Z"
    assert chosen["IM1"][0] == "im-fanout-20260104T000000Z"  # none ran it: the newest, as before


def test_a_sweep_run_as_a_piece_names_the_piece_as_the_reason(tmp_path):
    """An `im` piece (a session started with --piece) and every `paper` sweep are pieces: a
    claim they could not judge is "not testable (the piece did not run it)"; a whole `im`
    sweep's is "the profile did not run it" (the control)."""
    from serverbench.analysis.reporting import notebook, vocabulary

    def sweep(name: str, argv: list[str]) -> Path:
        (tmp_path / name).mkdir()
        line = {"event": "start", "session": 1, "argv": ["serverbench", "run", "--profile", "im", *argv]}
        (tmp_path / name / "sessions.jsonl").write_text(json.dumps(line) + "\n", encoding="utf-8")
        return tmp_path / name

    assert notebook.ran_a_piece("im", sweep("im-storm-x", ["--piece", "storm"]))
    assert notebook.ran_a_piece("im", sweep("im-rate-x", ["--piece=rate"]))
    assert not notebook.ran_a_piece("im", sweep("im-x", []))
    assert notebook.ran_a_piece("paper", sweep("paper-x", []))
    assert vocabulary.labelled("not testable on this machine", "no rate search", piece=True).endswith(
        f"({vocabulary.PIECE})"
    )


def test_a_sweep_that_judges_no_claim_says_so(tmp_path):
    """A figure-only sweep (the im fan-out piece) once opened with "0 claims: ."."""
    text = findings.first_screen([], not_decided="**Not decided by this piece** (it ran none of their benchmarks): C1.")
    assert text.startswith("**No claim is judged by this sweep.**") and "0 claims" not in text
    assert text.endswith("C1.") and "Each line below" not in text
    V = claims.check_all(_pingping(tmp_path))
    assert findings.first_screen(V).startswith(f"**{len(V)} claims:**")  # the control: a sweep with claims
    assert findings.verdict_index(V[:1]).startswith("**1 claim:**")  # not "1 claims"


def test_a_piece_that_ran_a_claims_benchmark_in_another_table_keeps_its_line():
    """The IM chaos piece runs only searches (table im_rate); IM4 reads the im table, of the
    same benchmark: its not-testable line is shown with its reason, not lumped among the
    claims of benchmarks the sweep never ran (C1, the control)."""
    from types import SimpleNamespace

    V = [SimpleNamespace(id=c, verdict="not testable on this machine") for c in ("C1", "IM4")]
    shown, line = findings.split_undecided(V, {"im_rate"})
    assert [v.id for v in shown] == ["IM4"] and line.endswith("(it ran none of their benchmarks): C1.")


def test_claims_decided_by_searches_are_named_as_having_no_interval():
    """The method paragraph says every comparison has an interval paired by round; IM4's
    and IM5's comparisons (searches) have none, and the paragraph says so of them only."""
    from types import SimpleNamespace

    from serverbench.analysis.reporting import method

    def verdict(cid, ci):
        return SimpleNamespace(id=cid, comparisons=[SimpleNamespace(ci=ci)], evidence=None, protocol=5)

    V = [verdict("IM1", object()), verdict("IM4", None), verdict("IM5", None)]
    text = method.claims_checked(V)
    assert "IM4, IM5 are decided by searches" in text and "IM1" not in text
    assert "decided by searches" not in method.claims_checked([verdict("IM1", object())])  # the control
