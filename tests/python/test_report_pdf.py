"""The printed report (paper/report.pdf) is readable: the report notebook's own cells, up to
the claims table, run in this process on the golden sweep's processed tables, rendered by
the pipeline and printed by headless chromium; then the PDF's text layer is checked."""

import ast
import json
import re
import shutil
from pathlib import Path

import nbformat
import pytest

from serverbench.analysis.reporting import pipeline, render

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests" / "golden" / "expected"
CLAIMS_COLUMNS = ["id", "claim", "verdict", "regime", "why"]  # the numbers: the evidence table
OWN = "on its source's own data"

needs_chromium = pytest.mark.skipif(
    shutil.which("chromium") is None and shutil.which("chromium-browser") is None,
    reason="chromium not installed (scripts/setup.sh)",
)


def _outputs(value) -> dict:
    """The mime bundle a kernel would send for a displayed value (IPython's own formatter:
    Markdown, a Styler's HTML, an Image's PNG)."""
    from IPython.core.formatters import DisplayFormatter

    data, _ = DisplayFormatter().format(value)
    return data


def _run_cell(source: str, ns: dict) -> list:
    """Execute one code cell like a kernel: display() calls and the last expression's value
    become outputs."""
    shown = []
    ns["display"] = lambda *objs: shown.extend(objs)
    tree = ast.parse(source)
    last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
    exec(compile(tree, "<cell>", "exec"), ns)
    if last is not None:
        value = eval(compile(ast.Expression(last.value), "<cell>", "eval"), ns)
        if value is not None:
            shown.append(value)
    return [nbformat.v4.new_output("display_data", data=_outputs(v)) for v in shown]


def claims_report(tmp_path, monkeypatch, paper_verdicts) -> tuple[Path, "object"]:
    """report.ipynb's cells from the title to the claims table (the loading cell replaced by
    the golden sweep's processed tables), with their tags, executed -> an executed notebook."""
    import pandas as pd
    from IPython.display import Markdown

    from serverbench.analysis.claims import paperdata
    from serverbench.analysis.reading import process

    # the paper's own verdicts, computed afresh (once per session: conftest.py's paper_verdicts),
    # not paper_verdicts_cached: its cached copy would be written into data/
    monkeypatch.setattr(paperdata, "paper_verdicts_cached", paper_verdicts.copy)
    P = process.Processed(GOLDEN)
    ns = {"P": P, "sid": P.info["sweep_id"], "figdir": tmp_path / "figures"}
    ns.update(pd=pd, Markdown=Markdown)
    nb = nbformat.read(ROOT / "notebooks" / "report.ipynb", as_version=4)
    cells = []
    for cell in nb.cells:
        if cell.cell_type == "code":
            # the loading cell runs without its load: P, sid and figdir are set above
            keep = [ln for ln in cell.source.splitlines() if "notebook.load(" not in ln and "figures_dir(" not in ln]
            cell.outputs = _run_cell("\n".join(keep), ns)
        cells.append(cell)
        if "claims.claims_table(" in cell.source:
            break
    nb.cells = cells
    path = tmp_path / "report.ipynb"
    nbformat.write(nb, str(path))
    return path, ns["ct"]


def _text(page) -> str:
    return " ".join(page.extract_text().split())


@pytest.mark.e2e
@needs_chromium
def test_printed_report_shows_the_whole_claims_table(tmp_path, monkeypatch, paper_verdicts):
    from pypdf import PdfReader

    nb, ct = claims_report(tmp_path, monkeypatch, paper_verdicts)
    assert set(CLAIMS_COLUMNS) | {OWN} <= set(ct.columns)  # each a column of the table shown
    html = render.render_html(nb, tmp_path / "report.html")
    pages = PdfReader(render.print_pdf(html, tmp_path / "report.pdf")).pages
    texts = [_text(p) for p in pages]
    table = [t for t in texts if OWN in t]
    assert table, "the last column's header is not in the PDF: " + texts[-1][:300]
    first_table_page = texts.index(table[0])
    table_text = " ".join(texts[first_table_page:])
    for col in [*CLAIMS_COLUMNS, OWN]:
        assert re.search(rf"(?<!\w){re.escape(col)}(?!\w)", table_text), col
    # The last two columns are cut off first when the table is wider than the page: each
    # verdict word must occur in the table pages at least as often as in the verdict and
    # source-data columns together, and every row's regime must be there.
    # (a not-testable verdict by its word: its reason in brackets may wrap within the cell)
    word = lambda x: x.split(":")[0].split(" (")[0].replace(" on this machine", "")  # noqa: E731
    own_col = ct[OWN].fillna("").map(word)
    verdicts = ct["verdict"].map(word)
    for verdict in set(verdicts) | set(own_col) - {""}:
        n = int((verdicts == verdict).sum() + (own_col == verdict).sum())
        assert table_text.count(verdict) >= n, (verdict, table_text.count(verdict), n)
    squashed = table_text.replace(" ", "")
    for regime in ct["regime"].dropna():
        words = [w for w in str(regime).split() if len(w) > 3]
        assert all(w in squashed for w in words), regime
    # page 1: the title, the machine and the set-up tables, not a heading on a blank page
    assert len(texts[0]) > 1500, texts[0][:200]
    assert pages[0].mediabox.width < pages[0].mediabox.height  # portrait A4
    assert all(p.mediabox.width > p.mediabox.height for p in pages[first_table_page:])  # the table: landscape
    assert len(pages) <= 12, len(pages)


# ------------------------------------------------------------------ the pdf switch


@pytest.fixture
def analysed_sweep(tmp_path, monkeypatch):
    """A sweep folder to analyse and papermill replaced by a one-cell report: what the
    pipeline does after the notebooks is under test, not the notebooks."""
    import papermill

    monkeypatch.setenv("SERVERBENCH_DATA", str(tmp_path / "data"))
    (tmp_path / "data" / "raw" / "quick-x").mkdir(parents=True)

    def execute(src, out, **kw):
        nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# Report")]), out)

    monkeypatch.setattr(papermill, "execute_notebook", execute)
    real_which = shutil.which
    hidden = lambda name, *a, **k: None if "chromium" in name else real_which(name, *a, **k)
    monkeypatch.setattr(shutil, "which", hidden)  # as on a machine without chromium
    paper = tmp_path / "paper"
    paper.mkdir()
    (paper / "report.pdf").write_bytes(b"%PDF- printed from an earlier render")
    return paper


def _notebooks(paper, *flags):
    import io

    from serverbench import cli

    out, err = io.StringIO(), io.StringIO()
    argv = ["notebooks", "--no-run", "--sweep-id", "quick-x", "--paper-dir", str(paper), *flags]
    return cli.run(argv, out, err), out.getvalue(), err.getvalue()


def test_no_pdf_writes_the_html_without_chromium(analysed_sweep):
    code, out, err = _notebooks(analysed_sweep, "--no-pdf")
    assert code == 0, err
    assert "Report" in (analysed_sweep / "report.html").read_text()
    assert not (analysed_sweep / "report.pdf").exists()  # the earlier one would pass for this sweep's


def test_a_render_says_which_sweep_it_came_from_and_the_index_lists_it(analysed_sweep, tmp_path):
    processed = tmp_path / "data" / "processed" / "quick-x"
    processed.mkdir(parents=True)
    (processed / "sweep.json").write_text(json.dumps({"host": {"cpu_model": "AMD EPYC", "logical_cpus": 2}}))
    (processed / "claims.csv").write_text(
        "id,verdict\nC1,supported\nC2,contradicted\nC3,supported\nC4,not testable on this machine\n"
    )
    code, out, err = _notebooks(analysed_sweep, "--no-pdf")
    assert code == 0, err
    info = json.loads((analysed_sweep / "report.json").read_text())
    assert info["sweep_id"] == "quick-x" and info["profile"] == "quick" and info["cpu_model"] == "AMD EPYC"
    assert info["verdicts"] == {"contradicted": 1, "supported": 2}  # what a sweep cannot test is not counted
    assert info["command"].endswith(f"--sweep-id quick-x --paper-dir {analysed_sweep} --no-pdf")
    md = pipeline.reports_markdown(analysed_sweep)
    row = md.splitlines()[2]
    assert "[report.html](report.html)" in row and "PDF" not in row
    assert "`quick-x`" in row and "2 supported, 1 contradicted" in row


def test_missing_chromium_fails_after_writing_the_html(analysed_sweep):
    code, out, err = _notebooks(analysed_sweep)
    assert code == 1
    assert "chromium not found" in err and "'chromium'" in err and "--no-pdf" in err, err
    assert (analysed_sweep / "report.html").exists()
    assert not (analysed_sweep / "report.pdf").exists()


def test_evidence_groups_keep_every_row_and_drop_only_empty_columns():
    import pandas as pd

    from serverbench.analysis import claims
    from serverbench.analysis.reading import process
    from serverbench.analysis.reporting import report

    V = claims.check_all(process.Processed(GOLDEN))
    whole = claims.evidence_table(V)
    groups = report.evidence_groups(V)
    joined = pd.concat(groups, ignore_index=True)
    assert len(joined) == len(whole) and list(joined["claim"]) == list(whole["claim"])
    for g in groups:
        assert len(g.columns) < len(whole.columns)
        assert all(g[c].map(lambda x: not (pd.isna(x) or x == "")).any() for c in g.columns)
    # a dropped column was empty in every row of its group
    for g in groups:
        rows = whole[whole["claim"].isin(g["claim"])]
        dropped = [c for c in whole.columns if c not in g.columns]
        assert rows[dropped].map(lambda x: pd.isna(x) or x == "").all().all()


@pytest.mark.parametrize(
    ("text", "said"),
    [('{"sweep_id": "quick-x",', "not valid JSON"), ('{"sweep_id": "quick-x", "profile": "quick"}', "lacks verdicts")],
)
def test_a_broken_report_json_names_the_file_in_one_line(tmp_path, text, said):
    from serverbench import cli

    paper = tmp_path / "paper"
    (paper / "servers").mkdir(parents=True)
    broken = paper / "servers" / pipeline.REPORT_INFO
    broken.write_text(text)
    with pytest.raises(cli.UsageError, match=said) as e:
        pipeline.reports_markdown(paper)
    assert str(broken) in str(e.value) and "\n" not in str(e.value)
    assert broken.read_text() == text  # nothing recorded is touched


def test_the_index_names_a_cpu_without_its_trademark_signs(tmp_path):
    """paper/README's machine column as the reports print a CPU: "Intel(R) Xeon(R) Processor"
    (what an Intel VM's kernel reports) as "Intel Xeon Processor"."""
    paper = tmp_path / "paper"
    (paper / "im-chaos").mkdir(parents=True)
    info = {
        "sweep_id": "im-chaos-x",
        "profile": "im",
        "verdicts": {"supported": 1},
        "pdf": False,
        "command": "python -m serverbench notebooks --no-run --profile im --sweep-id im-chaos-x",
        "cpu_model": "Intel(R) Xeon(R) Processor",
        "logical_cpus": 2,
    }
    (paper / "im-chaos" / pipeline.REPORT_INFO).write_text(json.dumps(info))
    row = pipeline.reports_markdown(paper).splitlines()[2]
    assert "| Intel Xeon Processor, 2 CPUs |" in row, row
