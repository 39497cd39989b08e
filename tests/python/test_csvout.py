"""Derived tables at a stated precision (analysis/reading/csvout.py): another CPU's last bits
never reach a committed file; integral values and raw-record columns keep every digit."""

from __future__ import annotations

import filecmp
import math

import pandas as pd
import pytest

from serverbench import paths
from serverbench.analysis.reading import csvout, process


def test_last_bits_do_not_reach_the_file(tmp_path):
    x = math.exp(math.log(0.5692557620909727))  # a ratio through exp/log
    wobble = x * (1 + 4e-16)
    assert wobble != x
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    csvout.write(pd.DataFrame({"ratio": [x]}), a)
    csvout.write(pd.DataFrame({"ratio": [wobble]}), b)
    assert a.read_bytes() == b.read_bytes()  # the property: a CPU's last bits never reach the file
    header, value = a.read_text().split()
    assert header == "ratio" and float(value) == pytest.approx(0.569256, rel=1e-12)
    assert len(value.replace("0.", "", 1)) == csvout.SIGNIFICANT_DIGITS


def test_integral_floats_and_text_are_kept_whole():
    df = csvout.at_precision(pd.DataFrame({"n": [3_000_000.0, 25_276_510_208.0], "s": ["a 0.123456789", None]}))
    assert df["n"].tolist() == [3_000_000.0, 25_276_510_208.0]
    assert df["s"].iloc[0] == "a 0.123456789" and pd.isna(df["s"].iloc[1])
    assert csvout.fixed(float("nan")) != csvout.fixed(float("nan"))  # nan stays nan
    assert csvout.fixed(1.23456789e-7) == pytest.approx(1.23457e-7, rel=1e-12)


def test_only_the_named_columns_are_rounded():
    df = csvout.at_precision(pd.DataFrame({"elapsed_s": [0.003754406123], "steady": [1.23456789]}), ["steady"])
    # kept whole vs rounded differ at the 7th digit: a tolerance far below that tells them apart
    assert df["elapsed_s"].iloc[0] == pytest.approx(0.003754406123, rel=1e-12)
    assert df["steady"].iloc[0] == pytest.approx(1.23457, rel=1e-12)


def test_reprocessing_a_committed_sweep_writes_the_committed_bytes(tmp_path):
    """The committed tables were written at the stated precision, so processing the raw log
    again, on whatever CPU runs this test, gives them byte for byte."""
    sweep = "paper-pingping-20261129T065200Z"
    written = process.process_sweep(paths.raw_dir() / sweep, tmp_path)
    committed = paths.processed_dir() / sweep
    names = [p.name for p in written.values()]
    _, mismatch, errors = filecmp.cmpfiles(tmp_path, committed, names, shallow=False)
    assert not mismatch and not errors, f"differ from the committed tables: {mismatch + errors}"
