"""The notebooks: static checks (parameters cell, no outputs) and, marked e2e, the smoke
profile end to end through papermill with the real binaries."""

import io
import json
import os
import re
import sys
from pathlib import Path

import nbformat
import pandas as pd
import pytest

from serverbench import cli
from serverbench.analysis.reporting import pipeline

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = [*pipeline.FIGURE_NOTEBOOKS, pipeline.REPORT_NOTEBOOK]
BINARIES = [
    ROOT / "src/go/bin/serverbench",
    ROOT / "src/erlang/_build/default/bin/serverbench",
    ROOT / "src/scala/target/serverbench.jar",
]


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_notebook_is_thin_parameterised_and_clean(name):
    nb = nbformat.read(ROOT / "notebooks" / f"{name}.ipynb", as_version=4)
    nbformat.validate(nb)
    tagged = [c for c in nb.cells if "parameters" in c.metadata.get("tags", [])]
    assert len(tagged) == 1
    params = tagged[0].source
    for key in ("profile", "sweep_id", "raw_folder", "languages", "show_reference", "paper_dir", "spawn_metric"):
        assert f"{key} = " in params
    # plain literals only: the cell runs on its own
    ns: dict = {}
    exec(params, ns)  # noqa: S102
    assert ns["show_reference"] is True
    # analysis only: sweeps are run by `python -m serverbench run`, never from a notebook
    source = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
    assert "run_sweep" not in source and "harness" not in source
    for c in nb.cells:
        if c.cell_type == "code":
            assert c.outputs == [] and c.execution_count is None, "commit notebooks without outputs"
    code = sum(len(c.source.splitlines()) for c in nb.cells if c.cell_type == "code")
    assert code < 80  # the logic lives in serverbench.analysis


def test_run_notebooks_without_a_sweep_names_the_problem(tmp_path, monkeypatch):
    monkeypatch.setenv("SERVERBENCH_DATA", str(tmp_path / "data"))
    with pytest.raises(FileNotFoundError, match="no sweep of profile 'smoke'"):
        pipeline.run_notebooks(profile="smoke", out_paper=tmp_path / "paper")
    with pytest.raises(FileNotFoundError, match="no sweep 'nope'"):
        pipeline.run_notebooks(profile="smoke", sweep_id="nope", out_paper=tmp_path / "paper")


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_notebook_kernelspec_is_the_registered_one(name):
    """Each notebook names the kernel scripts/setup.sh registers, with the same display name."""
    from jupyter_client.kernelspec import KernelSpecManager, NoSuchKernel

    ks = nbformat.read(ROOT / "notebooks" / f"{name}.ipynb", as_version=4).metadata["kernelspec"]
    assert ks["name"] == pipeline.KERNEL_NAME
    try:
        spec = KernelSpecManager().get_kernel_spec(pipeline.KERNEL_NAME)
    except NoSuchKernel:
        raise AssertionError(f"no Jupyter kernel {pipeline.KERNEL_NAME!r}: run scripts/setup.sh") from None
    assert ks["display_name"] == spec.display_name


@pytest.mark.e2e
@pytest.mark.native
def test_smoke_profile_end_to_end(tmp_path, monkeypatch):
    missing = [str(b) for b in BINARIES if not b.exists()]
    if missing:
        pytest.skip(f"native programs not built: {missing} (scripts/build.sh)")
    monkeypatch.setenv("SERVERBENCH_DATA", str(tmp_path / "data"))
    monkeypatch.setenv("SERVERBENCH_PAPER", str(tmp_path / "paper"))
    # as a user would: the sweep by `run`, then the analysis (the notebooks command does both)
    stdout = io.StringIO()
    assert cli.run(["notebooks", "--profile", "smoke"], stdout=stdout, stderr=sys.stderr) == 0
    sid = re.search(r"^sweep_id: (\S+)$", stdout.getvalue(), flags=re.M).group(1)
    out = {"sweep_id": sid, "processed": tmp_path / "data" / "processed" / sid}
    assert sid.startswith("smoke-")
    raw = tmp_path / "data" / "raw" / sid
    assert (raw / "runs.jsonl").exists() and (raw / "manifest.json").exists()
    lines = [json.loads(x) for x in (raw / "runs.jsonl").read_text().splitlines()]
    assert {r["benchmark"] for r in lines} >= {"pingping", "spawn", "throughput"}
    assert any(r.get("search") for r in lines)

    proc = tmp_path / "data" / "processed" / sid
    assert out["processed"] == proc
    for t in (
        "runs",
        "summary",
        "ratios",
        "spawn_max",
        "spawn_max_limits",
        "failures",
        "cpu_time",
        "claims",
        "claims_evidence",
    ):
        assert (proc / f"{t}.csv").exists(), t
    summary = pd.read_csv(proc / "summary.csv")
    assert set(summary["table"]) >= {"pingping", "spawn", "spawn_max", "throughput"}
    assert set(summary["language"]) >= {"erlang", "go", "scala_akka"}
    # every median in the summary is the median of the ok values in runs.csv
    runs = pd.read_csv(proc / "runs.csv")
    pp = runs[(runs["table"] == "pingping") & (runs["status"] == "ok")]
    s = summary[(summary["table"] == "pingping") & (summary["metric"] == "elapsed_s")]
    for lang, g in pp.groupby("language"):
        assert s[s["language"] == lang]["median"].iloc[0] == pytest.approx(
            g["elapsed_s"].median(), rel=1e-5
        )  # summary.csv: 6 significant digits (csvout)
    claims = pd.read_csv(proc / "claims.csv")
    assert len(claims) >= 13 and {"C10", "C11", "C12"} <= set(claims["id"])
    assert set(claims["verdict"]) <= {"supported", "contradicted", "inconclusive", "not testable on this machine"}
    assert (
        claims.set_index("id").loc[["C7b", "C9"], "verdict"] == "not testable on this machine"
    ).all() or os.cpu_count() > 8

    figs = tmp_path / "paper" / "figures"
    for name in ("fig3_pingping", "fig4_spawn", "fig5_throughput"):
        for ext in ("png", "pdf"):
            assert (figs / f"{name}.{ext}").stat().st_size > 5000
    for name in NOTEBOOKS:
        ex = nbformat.read(tmp_path / "paper" / "executed" / f"{name}.ipynb", as_version=4)
        assert any("injected-parameters" in c.metadata.get("tags", []) for c in ex.cells)
        assert not any(o.get("output_type") == "error" for c in ex.cells for o in c.get("outputs", []))
        executed_text = (tmp_path / "paper" / "executed" / f"{name}.ipynb").read_text()
        assert str(ROOT) + "/" not in executed_text and f'"{ROOT}"' not in executed_text, name
        assert ex.metadata.papermill.input_path == f"notebooks/{name}.ipynb"
    html = (tmp_path / "paper" / "report.html").read_text()
    assert "The claims, checked" in html and "Findings" in html
    for text in (
        "Machine and runtimes",
        "What differs from the paper",
        "Where the time went",
        sid,
        "not testable on this machine",
        "data:image/png;base64",
        "Contention on the shared machine",
    ):
        assert text in html, text
    assert "from serverbench" not in html  # code hidden
    assert html.count("data:image/png;base64") >= 3
    assert str(tmp_path) not in html and str(ROOT) not in html  # no machine paths in the report
    from pypdf import PdfReader

    assert len(PdfReader(tmp_path / "paper" / "report.pdf").pages) >= 3

    # Rendering again without running (run=False), which takes the newest sweep of the profile
    # (harness.latest_sweep), is shown by test_python_only.py (./run_all.sh --no-run on the
    # committed data) and test_slurm_cluster.py (its render job); here only: this sweep is
    # the newest one of its profile, the one such a render picks.
    from serverbench import harness

    assert harness.latest_sweep("smoke").name == sid


def test_render_removes_figures_left_by_an_earlier_sweep(tmp_path):
    """The report draws a registered figure only when its file is missing: stale files must go first."""
    from serverbench.analysis.plotting import figures
    from serverbench.analysis.reporting import pipeline, sections

    names = [s.name for s in figures.ordered(sections.analysis())]
    assert {"fig3_pingping", "fig_echo_flood", "fig_tcp_pingpong", "audit"} <= set(names)
    for n in names:
        (tmp_path / f"{n}.png").write_bytes(b"old")
    (tmp_path / "notes.txt").write_text("kept")
    gone = pipeline.remove_figures(tmp_path)
    assert sorted(p.name for p in gone) == sorted(f"{n}.png" for n in names)
    assert [p.name for p in tmp_path.iterdir()] == ["notes.txt"]


def test_render_removes_the_audit_figure_in_a_fresh_process(tmp_path):
    """The audit figure is registered by analysis.auditing, which no benchmark package
    imports: in a fresh process (as run_all.sh renders) its file must go too, or the report's
    Figures section shows one drawn by an earlier sweep and older code."""
    import subprocess

    (tmp_path / "audit.png").write_bytes(b"old")
    code = "import sys; from serverbench.analysis.reporting import pipeline; pipeline.remove_figures(sys.argv[1])"
    subprocess.run([sys.executable, "-c", code, str(tmp_path)], check=True)
    assert not (tmp_path / "audit.png").exists()
