"""data/reference: the copied tables, their provenance, and the loaders' caveats."""

import hashlib

import pandas as pd
import pytest

from serverbench.analysis.reading import reference


def test_files_and_provenance():
    d = reference.reference_dir()
    for name in reference.FILES.values():
        assert (d / name).exists(), name
    readme = (d / "README.md").read_text()
    assert "MIT License" in readme and "Copyright (c) 2017 Ivan Valkov" in readme
    prov = (d / "PROVENANCE.md").read_text()
    # the provenance names the upstream repository and commit, and no machine path
    assert "bbstk/server-languages-benchmarks" in prov and "5fcfefc236314bfcf671b0230c1b51b6271f6a64" in prov
    assert "/work/" not in prov and "../shared" not in prov
    # the original spreadsheets are the ones the README names
    for line in readme.splitlines():
        if line.startswith("| `") and ".xlsx` |" in line:
            fname = line.split("`")[1]
            sha = line.split("`")[-2]
            assert hashlib.sha256((d / "original" / fname).read_bytes()).hexdigest() == sha


def test_fig3():
    f = reference.fig3()
    assert len(f) == 45
    assert set(f["message_bytes"]) == {5000, 10000, 50000}
    assert (
        f[(f.language == "go") & (f.message_bytes == 50000) & (f.repetitions == 1_000_000)]["time_s"].item() == 10.888
    )


def test_fig4a_means_and_failures():
    pts, fails = reference.fig4a()
    assert pts[(pts.language == "erlang") & (pts.processes == 3_000_000)]["time_s"].item() == pytest.approx(
        11.934, rel=1e-12
    )
    assert pts.groupby("language")["processes"].max().to_dict() == {
        "erlang": 9_000_000,
        "go": 3_000_000,
        "scala_akka": 11_000_000,
    }
    f = fails.set_index("language")["processes"].to_dict()
    assert f == {"erlang": 10_000_000, "go": 3_500_000}


def test_fig5_median_recomputed_fixes_the_broken_cell():
    fixed = reference.fig5_median()
    sheet = reference.fig5_median(as_plotted=True)
    key = (fixed.language == "erlang") & (fixed.cores == 1) & (fixed.pairs == 4)
    assert fixed[key]["msgs_per_min"].item() == 39_200_000
    skey = (sheet.language == "erlang") & (sheet.cores == 1) & (sheet.pairs == 4)
    assert sheet[skey]["msgs_per_min"].item() == 44_100_000
    m = fixed.merge(sheet, on=["language", "cores", "pairs"], suffixes=("", "_sheet"))
    assert len(m) == 162 and (m["msgs_per_min"] != m["msgs_per_min_sheet"]).sum() == 1


def test_reference_dir_falls_back_to_repository(tmp_path, monkeypatch):
    monkeypatch.setenv("SERVERBENCH_DATA", str(tmp_path))
    assert (reference.reference_dir() / "paper_fig3_pingping.csv").exists()
    assert isinstance(reference.fig4b(), pd.DataFrame)
