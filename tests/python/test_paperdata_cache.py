"""The paper-reference tables (data/processed/paper-reference/) are written at the stated
precision (analysis/reading/csvout.py), so that re-running the checks on another CPU, whose
last floating-point bits differ, writes the same bytes and leaves the git tree clean (a
dirty tree makes the harness refuse to record a sweep)."""

from __future__ import annotations

import os
import re

import pandas as pd

from serverbench.analysis.claims import paperdata
from serverbench.analysis.reading import csvout


def test_the_paper_reference_tables_are_written_at_the_stated_precision(tmp_path, monkeypatch):
    from serverbench import paths

    monkeypatch.setattr(paths, "processed_dir", lambda: tmp_path)
    paperdata.paper_verdicts_cached()
    text = (tmp_path / paperdata.SWEEP_ID / "claims_evidence.csv").read_text(encoding="utf-8")
    floats = re.findall(r"(?<![\w.])-?\d+\.\d+(?:e-?\d+)?(?![\w.])", text)
    assert floats, "the evidence has ratios"
    digits = [len(f.split("e")[0].lstrip("-").replace(".", "").strip("0")) for f in floats]
    assert max(digits) <= csvout.SIGNIFICANT_DIGITS, [f for f, d in zip(floats, digits) if d > 6][:5]


def test_last_bits_do_not_change_the_bytes_and_a_real_change_does(tmp_path):
    committed = pd.DataFrame({"id": ["C5", "C6"], "ratio": [1.7574999999999998, 2.579933333052067], "n": [1, 54]})
    here = committed.assign(ratio=[1.7574999999999996, 2.579933333052065])  # another CPU's last bits
    a, b = csvout.write(committed, tmp_path / "a.csv"), csvout.write(here, tmp_path / "b.csv")
    assert a.read_bytes() == b.read_bytes()
    changed = csvout.write(committed.assign(ratio=[1.76, 2.58]), tmp_path / "c.csv")  # a real change
    assert changed.read_bytes() != a.read_bytes() and pd.read_csv(changed)["ratio"].tolist() == [1.76, 2.58]


def test_a_stale_committed_table_is_not_served_however_new_its_file(tmp_path, monkeypatch):
    """A fresh clone gives every file the checkout's time: a committed claims.csv written
    by older code, with a newer time than the code, was served as it was (file times
    decided). The table is now the code's own, and the stale file is written again."""
    from serverbench import paths

    monkeypatch.setattr(paths, "processed_dir", lambda: tmp_path)
    out = tmp_path / paperdata.SWEEP_ID
    out.mkdir()
    stale = pd.DataFrame({"id": ["C1"], "verdict": ["a verdict no code gives"], "numbers": [""], "why": [""]})
    stale.to_csv(out / "claims.csv", index=False)
    os.utime(out / "claims.csv", (4e9, 4e9))  # newer than any source
    got = paperdata.paper_verdicts_cached()
    assert "a verdict no code gives" not in set(got["verdict"])
    assert {"C1", "C6", "C7a"} <= set(got["id"])
    on_disk = pd.read_csv(out / "claims.csv")
    assert list(on_disk["verdict"]) == list(got["verdict"]) and (out / "claims_evidence.csv").exists()
