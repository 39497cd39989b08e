"""The notebooks: static checks (parameters cell, no outputs) and, marked e2e, the smoke
profile end to end through papermill with the real binaries."""

import json
import os
import time
from pathlib import Path

import nbformat
import pandas as pd
import pytest

from serverbench.analysis import pipeline

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = [*pipeline.FIGURE_NOTEBOOKS, pipeline.REPORT_NOTEBOOK]
BINARIES = [ROOT / "src/go/bin/serverbench", ROOT / "src/erlang/_build/default/bin/serverbench",
            ROOT / "src/scala/target/serverbench.jar"]


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_notebook_is_thin_parameterised_and_clean(name):
    nb = nbformat.read(ROOT / "notebooks" / f"{name}.ipynb", as_version=4)
    nbformat.validate(nb)
    tagged = [c for c in nb.cells if "parameters" in c.metadata.get("tags", [])]
    assert len(tagged) == 1
    params = tagged[0].source
    for key in ("profile", "sweep_id", "raw_folder", "run_sweep", "languages", "show_reference", "paper_dir"):
        assert f"{key} = " in params
    # plain literals only: the cell runs on its own
    ns: dict = {}
    exec(params, ns)  # noqa: S102
    assert ns["run_sweep"] is False and ns["show_reference"] is True
    for c in nb.cells:
        if c.cell_type == "code":
            assert c.outputs == [] and c.execution_count is None, "commit notebooks without outputs"
    code = sum(len(c.source.splitlines()) for c in nb.cells if c.cell_type == "code")
    assert code < 80  # the logic lives in serverbench.analysis


def test_run_notebooks_without_a_sweep_names_the_problem(tmp_path, monkeypatch):
    monkeypatch.setenv("SERVERBENCH_DATA", str(tmp_path / "data"))
    with pytest.raises(FileNotFoundError, match="no sweep of profile 'smoke'"):
        pipeline.run_notebooks(profile="smoke", run=False, out_paper=tmp_path / "paper")
    with pytest.raises(FileNotFoundError, match="no sweep 'nope'"):
        pipeline.run_notebooks(profile="smoke", sweep_id="nope", run=False, out_paper=tmp_path / "paper")


def test_default_kernel():
    assert pipeline.default_kernel() in ("serverbench", "python3")


@pytest.mark.e2e
@pytest.mark.native
def test_smoke_profile_end_to_end(tmp_path, monkeypatch):
    missing = [str(b) for b in BINARIES if not b.exists()]
    if missing:
        pytest.skip(f"native programs not built: {missing} (scripts/build.sh)")
    monkeypatch.setenv("SERVERBENCH_DATA", str(tmp_path / "data"))
    monkeypatch.setenv("SERVERBENCH_PAPER", str(tmp_path / "paper"))
    out = pipeline.run_notebooks(profile="smoke", run=True)
    sid = out["sweep_id"]
    assert sid.startswith("smoke-")
    raw = tmp_path / "data" / "raw" / sid
    assert (raw / "runs.jsonl").exists() and (raw / "manifest.json").exists()
    lines = [json.loads(x) for x in (raw / "runs.jsonl").read_text().splitlines()]
    assert {r["benchmark"] for r in lines} == {"pingping", "spawn", "throughput"}
    assert any(r.get("search") for r in lines)

    proc = tmp_path / "data" / "processed" / sid
    assert out["processed"] == proc
    for t in ("runs", "summary", "ratios", "spawn_max", "spawn_max_limits", "failures", "cpu_time", "claims",
              "claims_evidence"):
        assert (proc / f"{t}.csv").exists(), t
    summary = pd.read_csv(proc / "summary.csv")
    assert set(summary["table"]) >= {"pingping", "spawn", "spawn_max", "throughput"}
    assert set(summary["language"]) == {"erlang", "go", "scala_akka"}
    # every median in the summary is the median of the ok values in runs.csv
    runs = pd.read_csv(proc / "runs.csv")
    pp = runs[(runs["table"] == "pingping") & (runs["status"] == "ok")]
    s = summary[(summary["table"] == "pingping") & (summary["metric"] == "elapsed_s")]
    for lang, g in pp.groupby("language"):
        assert s[s["language"] == lang]["median"].iloc[0] == pytest.approx(g["elapsed_s"].median())
    claims = pd.read_csv(proc / "claims.csv")
    assert len(claims) == 10
    assert set(claims["verdict"]) <= {"supported", "contradicted", "inconclusive", "not testable here"}
    assert (claims.set_index("id").loc[["C7b", "C9"], "verdict"] == "not testable here").all() or \
        os.cpu_count() > 8

    figs = tmp_path / "paper" / "figures"
    for name in ("fig3_pingping", "fig4_spawn", "fig5_throughput"):
        for ext in ("png", "pdf"):
            assert (figs / f"{name}.{ext}").stat().st_size > 5000
    for name in NOTEBOOKS:
        ex = nbformat.read(tmp_path / "paper" / "executed" / f"{name}.ipynb", as_version=4)
        assert any("injected-parameters" in c.metadata.get("tags", []) for c in ex.cells)
        assert not any(o.get("output_type") == "error" for c in ex.cells for o in c.get("outputs", []))
    html = (tmp_path / "paper" / "report.html").read_text()
    assert "The paper&#x27;s conclusions, checked" in html or "The paper's conclusions, checked" in html
    for text in ("Machine and runtimes", "What differs from the paper", "Where the time went", sid,
                 "not testable here", "data:image/png;base64"):
        assert text in html, text
    assert "from serverbench" not in html  # code hidden
    assert html.count("data:image/png;base64") >= 3

    # analysis only (no sweep): the same sweep again, reusing the processed tables
    t0 = time.perf_counter()
    again = pipeline.run_notebooks(profile="smoke", run=False, out_paper=tmp_path / "paper2")
    elapsed = time.perf_counter() - t0
    assert again["sweep_id"] == sid
    assert (tmp_path / "paper2" / "report.html").exists()
    assert elapsed < 240, f"analysis of the smoke sweep took {elapsed:.0f} s"
