"""The report's first screen ("findings first"): analysis/reporting/findings.py.

Unit tier: first_screen on a synthetic sweep, the number format, the notebook's headings
against findings.SECTIONS. check_rendered_report reads a rendered report as a reader sees it
(the HTML's visible text); the end-to-end re-render (test_python_only.py) calls it."""

from __future__ import annotations

import math
import re
from pathlib import Path
from urllib.parse import unquote

import nbformat
import numpy as np
import pandas as pd
import pytest

import synthetic_sweeps
from serverbench.analysis import claims
from serverbench.analysis.claims import results
from serverbench.analysis.reading import synthetic
from serverbench.analysis.reporting import cells, findings, layout

ROOT = Path(__file__).resolve().parents[2]
ABSTRACT_WORDS = 150
# A claim's line on the first screen, as Markdown or as a reader sees it (no asterisks):
# 'C1 <its sentence> — not testable (machine too small): ...'
CLAIM_LINE = re.compile(
    r"(?:^|\n)\*?\s*\**([CET]\d+[a-z]?)\**\s[^\n]*?\u2014\s+\**(supported|contradicted|inconclusive|"
    r"not testable \([^)]*\)|error)\**"
)
# A number with more than 4 decimals: digits, a point, 5 or more digits, standing alone
# (not inside a version such as 2.13.18 or a word); a timestamp's fraction of a second
# (18:39:45.819122Z) counts, as the report should cut it to the second.
LONG_DECIMALS = re.compile(r"(?<![\w.])\d+\.\d{5,}(?![\d.])")


def _times(ratio: float, rng, n: int = 8) -> list[float]:
    return list(ratio * np.exp(rng.normal(0, 0.02, n)))


def _verdicts_in(text: str) -> dict[str, str]:
    """{claim id: verdict} from the first screen's claim lines, a not-testable verdict as the
    claims table writes it (its reason dropped)."""
    out = {}
    for cid, verdict in CLAIM_LINE.findall(text):
        out[cid] = results.NOT_TESTABLE if verdict.startswith("not testable") else verdict
    return out


def _first_words(text: str, n: int) -> str:
    return " ".join(text.split()[:n])


def test_first_screen_names_every_claim_with_its_verdict_early(tmp_path):
    rng = np.random.default_rng(44)
    recs = synthetic_sweeps.pingping_runs(
        {"go": _times(0.5, rng), "erlang": _times(0.55, rng), "scala_akka": _times(1.0, rng)}
    )
    recs += synthetic_sweeps.spawn_runs(
        {
            (lang, n): _times(t * n / 1e5, rng)
            for n in (10_000, 100_000)
            for lang, t in (("erlang", 0.1), ("go", 0.1), ("scala_akka", 0.5))
        }
    )
    V = claims.check_all(synthetic.processed_from(recs, tmp_path))
    assert {v.verdict for v in V} >= {results.SUPPORTED, results.NOT_TESTABLE}  # 8 rounds decide
    rep = pd.DataFrame(
        {"id": [v.id for v in V], "replication (2 other quick sweeps)": "supported in 2 of 2 (2/2 AMD EPYC)"}
    )
    md = findings.first_screen(V, rep, {v.id: "supported" for v in V})
    assert _verdicts_in(md) == {v.id: v.verdict for v in V}
    # the first line counts the verdicts; a code never comes before its claim's words
    counts = md.splitlines()[0]
    assert f"**{len(V)} claims:**" in counts and not re.search(r"\b[CET]\d+[a-z]?\b", counts), counts
    lines = [ln for ln in md.splitlines() if ln.startswith("* **")]
    assert [re.match(r"\* \*\*(\w+)\*\*", ln).group(1) for ln in lines] == [v.id for v in V]  # the paper's order
    for v, ln in zip(V, lines):
        assert f"{cells.DASH} **{findings.verdict_label(v)}**" in ln
        assert str(v.claim).rstrip(".") in ln  # the claim's whole sentence beside its code
        assert "elsewhere: supported 2" in ln
        assert "nan" not in ln and not LONG_DECIMALS.search(ln)
    c1 = next(ln for v, ln in zip(V, lines) if v.id == "C1")
    assert "Go/Akka 0.5" in c1 and "Erlang/Akka 0.5" in c1, c1  # the deciding ratios, 2 significant digits
    why = next(ln for v, ln in zip(V, lines) if v.verdict == results.NOT_TESTABLE)
    assert len(why.split(cells.DASH)[1].split()) < 40  # says why in a few words


@pytest.mark.parametrize(
    "x",
    [1, 1.0, 32768.0, 3.5926, 0.0027, 0.000123, 18057.848, 0.958, 1.0008, 2 / 3, 1e-9, 123456.789, -0.1234567,
     np.float64(0.333333333), np.int64(7), float("nan"), None, pd.NA, pd.NaT, float("inf"), "0.25"],
)  # fmt: skip
def test_fmt_never_prints_nan_or_more_than_4_decimals(x):
    for f in (cells.fmt, cells.fmt_seconds):
        s = f(x)
        assert "nan" not in s.lower() and "None" not in s
        assert not re.search(r"\.\d{5,}", s), s


def test_fmt_rules():
    fmt = cells.fmt
    assert fmt(7) == "7" and fmt(7.0) == "7" and fmt(32768.0) == "32,768" and fmt(np.int64(5000)) == "5000"
    assert fmt(2644.0) == "2,644" == fmt(2644.2) and fmt(2644) == "2644"  # a whole float prints as its column does
    assert fmt(0.958123) == "0.958" and fmt(1.50) == "1.50" and fmt(3.5926) == "3.59" and fmt(117.62) == "118"
    assert fmt(float("nan")) == fmt(None) == cells.DASH
    assert fmt("2026-11-26T18:39:45.819122Z - x") == "2026-11-26T18:39:45Z - x"
    assert fmt(pd.Timestamp("2026-11-26 18:39:45.8191")) == "2026-11-26 18:39:45"
    assert cells.fmt_seconds(0.000123) == "123 µs" and cells.fmt_seconds(0.0123) == "12.3 ms"
    assert cells.fmt_seconds(3.59) == "3.59 s" and cells.fmt_seconds(900) == "15.0 min"
    html = cells.style(pd.DataFrame({"wall (s)": [0.5, math.nan], "ratio": [1 / 3, 2.0]})).to_html()
    assert "500 ms" in html and "0.333" in html and cells.DASH in html and "nan" not in html
    # a rate or a count per second is not a duration (the IM report once showed 2,000/s as "33.3 min")
    html = cells.style(pd.DataFrame({"rate_per_s": [2000], "lost_at_10_per_s": [990], "p99_s": [0.005]})).to_html()
    assert "2000" in html and "990" in html and "min" not in html and "5.00 ms" in html
    assert "rate_per_s" in html and "lost_at_10_per_s" in html and ">p99<" in html
    # a table's integers are grouped alike once one reaches 10,000 (IM5's losses: "9445" once
    # stood beside "11,824", "1384" beside "14,831"); a table without one keeps "2026" (the control)
    html = cells.style(pd.DataFrame({"lost": [9445, 11824, 830], "at_1": [1384, 2, 3]})).to_html()
    assert "9,445" in html and "11,824" in html and ">830<" in html and "1,384" in html
    html = cells.style(pd.DataFrame({"lost": [9445, 830], "year": [2026, 2018]})).to_html()
    assert "9445" in html and "2026" in html and "9,445" not in html and "2,026" not in html


def test_glossary_defines_each_term_once():
    g = findings.glossary()
    terms = re.findall(r"^\* \*\*(.+?)\*\*", g, flags=re.M)
    assert len(terms) == len(set(terms))
    for t in ("supported", "contradicted", "inconclusive", "not testable", "deciding comparison", "round",
              "yes / no region", "margin", "Holm", "TOST", "Hodges-Lehmann", "regime / reduced", "sensitivity",
              "replication", "figure-only"):  # fmt: skip
        assert any(x.startswith(t) for x in terms), t


def test_the_notebook_has_the_sections_the_contents_lists():
    nb = nbformat.read(str(ROOT / "notebooks" / "report.ipynb"), as_version=4)
    heads = [
        (len(m.group(1)), m.group(2).strip())
        for c in nb.cells
        if c.cell_type == "markdown"
        for m in re.finditer(r"^(##+) (.+)$", c.source, flags=re.M)
    ]
    assert heads == [
        s for s in findings.SECTIONS if s[1] not in layout.CODE_HEADINGS
    ]  # those by code: shown when filled
    assert "sections.show_figures(" in "".join(c.source for c in nb.cells if c.cell_type == "code")
    assert nb.metadata.get("title") == findings.TITLE
    assert "parameters" in nb.cells[0].metadata.get("tags", [])
    assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code")  # committed without outputs
    toc = findings.toc(["Extra section"])
    assert toc.index(layout.PAPER_SCALE) < toc.index(findings.FINDINGS)  # the main report opens at paper scale
    assert toc.index("Extra section") < toc.index(findings.EVIDENCE) < toc.index(findings.APPENDIX)
    sub = findings.toc(["The conclusions on 2026 runtimes"], profile="runtimes")  # a sub-report: its subject first
    assert sub.index("2026 runtimes") < sub.index(findings.FINDINGS) and layout.PAPER_SCALE not in sub
    assert f"[{layout.FIGURES}]" in sub and f"[{layout.FIGURES}]" not in findings.toc(profile="im", figures=False)


def test_a_sub_report_has_its_own_title_and_opening():
    main = layout.report_title("quick", ["Socket benchmarks: echo flood"])
    assert main == findings.TITLE
    sub = layout.report_title("runtimes", ["The conclusions on 2026 runtimes", "Language or original code?"])
    assert sub.startswith("The conclusions on 2026 runtimes \u2014") and "original code" not in sub
    opening = layout.opening("runtimes", {"sweep_id": "runtimes-x"}, ["The conclusions on 2026 runtimes"])
    assert opening.startswith("# The conclusions on 2026 runtimes") and "runtimes-x" in opening
    assert "paper/report.html" in opening


def test_each_sub_report_subject_is_a_registered_section():
    from serverbench.analysis.reporting import sections

    titles = [s.title for s in sections.registered()]
    for profile, subjects in layout.subjects().items():
        for subject in subjects:
            assert any(t.startswith(subject) for t in titles), (profile, subject)
    # the audit report opens with the audit, not with the runtimes section that every sweep renders
    rendered = ["The conclusions on 2026 runtimes", "Language or original code?"]
    assert layout.lead_sections("audit", rendered) == ["Language or original code?"]
    assert layout.lead_sections("quick", rendered) == []
    toc = findings.toc(rendered, profile="audit")
    assert toc.index("Language or original code?") < toc.index(findings.FINDINGS) < toc.index("2026 runtimes")
    # the IM report opens with the case study, not with the warm-up of the committed paper pieces
    im = ["Warm-up and steady state of the throughput runs", "Does the paper's advice hold for a whole server?"]
    assert layout.lead_sections("im", im) == [im[1]]
    assert layout.report_title("im", [im[1]]).startswith("Does the paper's advice")


def _visible_text(html: str) -> tuple[str, str]:
    """(the body's visible text, the same without <code>/<pre>): scripts, styles and the
    headings' pilcrow links dropped."""
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(html, "html.parser")
    body = soup.body
    for t in body(["script", "style"]):
        t.decompose()
    for a in body.select("a.anchor-link"):
        a.decompose()
    full = body.get_text(" ")
    for t in body(["code", "pre"]):  # paths, hashes (sha256), commands: not numbers to read
        t.decompose()
    return full, body.get_text(" ")


def check_rendered_report(html: str, claims_csv: Path) -> None:
    """The rendered report read as a reader sees it (the HTML's visible text): every claim's
    verdict in the first 400 words, a contents list whose links all land, no long decimals, no
    nan, the findings before the evidence and the appendix. Called by the test that renders
    the report (test_python_only.py: run_all.sh --no-run with Python alone), so that the
    report is rendered once per test run."""
    title = re.search(r"<title>(.*?)</title>", html, flags=re.S).group(1).strip()
    assert title != "Notebook" and "Valkov" in title
    text, numbers = _visible_text(html)
    # the abstract within the first 150 words (after the title), at most 150 words itself
    head = _first_words(text, ABSTRACT_WORDS + len(title.split()) + 1)
    assert "Abstract." in head, head[:300]
    from serverbench.analysis.reporting import abstract

    words = abstract.text().split()  # the committed data's abstract, shown whole right after "Abstract."
    assert len(words) <= ABSTRACT_WORDS, len(words)
    assert " ".join(text.split()).split("Abstract. ", 1)[1].startswith(" ".join(words))
    # every claim's verdict on this sweep in the Findings section, each with its sentence, but
    # those the profile ran none of the benchmarks of: named once, in one line
    table = pd.read_csv(claims_csv)
    expected = dict(table[["id", "verdict"]].values)
    # the Findings section: from its heading to the Glossary's (the contents list names both first)
    at = html.index(f'id="{findings.anchor(findings.FINDINGS)}"')
    section = _visible_text("<body>" + html[at : html.index(f'id="{findings.anchor(findings.GLOSSARY)}"', at)])[0]
    undecided = re.search(r"Not decided by this \w+ \(it ran none of their benchmarks\): ([^.]+)\.", section)
    if undecided:
        ids = list(table["id"])
        for part in undecided.group(1).split(", "):
            first, _, last = part.partition("-")
            for cid in ids[ids.index(first) : ids.index(last or first) + 1]:
                assert expected.pop(cid).startswith("not testable"), cid
    assert _verdicts_in(section) == expected
    assert "Contents" in text and 'href="#Glossary"' in html and 'href="#Appendix:' in html
    # the contents list follows the abstract: on the first screen, not after the findings
    after = " ".join(text.split()).split("Abstract. ", 1)[1]
    assert after.index("Contents") < len(" ".join(words)) + 40
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(html, "html.parser")
    ids = {t["id"] for t in soup.select("[id]")}
    for a in soup.select('a[href^="#"]'):  # every link has its heading, as a browser finds it:
        href = a["href"][1:]  # the fragment as it is, else percent-decoded (%27 for ')
        assert href in ids or unquote(href) in ids, href
    assert not LONG_DECIMALS.findall(numbers), LONG_DECIMALS.findall(numbers)[:10]
    assert not re.search(r"\bnan\b", numbers, flags=re.I)
    assert text.index("Findings") < text.index("The claims, checked") < text.index("Machine and runtimes")
    assert "No description has been provided for this image" not in html  # alt text from each caption
