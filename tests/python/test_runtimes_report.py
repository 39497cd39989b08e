"""The paper's claims with each 2026 runtime in its counterpart's place (runtimes_report)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

import synthetic_sweeps
from serverbench.analysis.reading import synthetic as S
from serverbench.analysis.reporting import runtimes_report


def _times(mean, n=5):
    return list(mean * (1 + 0.01 * np.linspace(-1, 1, n)))


def test_a_runtime_in_its_counterparts_place_can_move_a_verdict(tmp_path):
    # Akka 5x slower than Go and Erlang; Pekko as fast as Go: C1 holds with the paper's
    # runtimes and not with Pekko in Akka's place
    recs = synthetic_sweeps.pingping_runs(
        {"go": _times(1.0), "erlang": _times(1.1), "scala_akka": _times(5.0), "scala_pekko": _times(1.0)},
        reps=100000,
    )
    P = S.processed_from(recs, tmp_path)
    t = runtimes_report.table(P).set_index("claim")
    assert t.loc["C1", "the paper's runtimes (this sweep)"] == "supported"
    assert t.loc["C1", "Pekko, JDK 17"] != "supported"
    assert "Pekko, JDK 17: supported ->" in t.loc["C1", "moved by"]
    assert "Rust/tokio for Go" not in t.columns  # not in this sweep
    view = runtimes_report.Substituted(P, "scala_akka", "scala_pekko")
    v = view.values("pingping", "elapsed_s")
    assert set(v["language"]) == {"go", "erlang", "scala_akka"} and v.loc[v.language == "scala_akka", "value"].max() < 2


def test_without_2026_runtimes_the_section_says_how_to_run_them(tmp_path):
    P = S.processed_from(synthetic_sweeps.pingping_runs({"go": _times(1.0), "erlang": _times(1.1)}), tmp_path)
    (text,) = runtimes_report.runtimes_section(P)
    assert "./run_all.sh --profile runtimes" in text


def test_the_report_notebooks_imports_register_every_section():
    # in a fresh interpreter, as papermill runs notebooks/report.ipynb: no other test's import helps
    import json
    import subprocess
    import sys

    nb = json.loads((Path(__file__).resolve().parents[2] / "notebooks" / "report.ipynb").read_text(encoding="utf-8"))
    imports = [
        line
        for cell in nb["cells"]
        if cell["cell_type"] == "code"
        for line in "".join(cell["source"]).splitlines()
        if line.startswith("from serverbench.analysis")
    ]
    assert imports
    code = "\n".join(imports) + "\nprint([s.title for s in sections.registered()])"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "The conclusions on 2026 runtimes" in out and "Language or original code?" in out
