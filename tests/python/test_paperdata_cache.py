"""The paper-reference cache (data/processed/paper-reference/) is not rewritten when a
recomputation differs only in floating-point last bits: on another CPU, re-running the
checks must leave the committed files, and so the git tree, unchanged (a dirty tree makes
the harness refuse to record a sweep)."""

from __future__ import annotations

import os

import pandas as pd

from serverbench.analysis.claims import paperdata


def test_last_bits_do_not_rewrite_the_cache(tmp_path):
    path = tmp_path / "claims_evidence.csv"
    committed = pd.DataFrame({"id": ["C5", "C6"], "ratio": [1.7574999999999998, 2.579933333052067], "n": [1, 54]})
    committed.to_csv(path, index=False)
    before = path.read_bytes()
    os.utime(path, (1, 1))
    here = committed.assign(ratio=[1.7574999999999996, 2.579933333052065])  # another CPU's last bits
    assert paperdata.write_unless_same(here, path) is False
    assert path.read_bytes() == before and path.stat().st_mtime > 1  # touched, not rewritten
    changed = committed.assign(ratio=[1.76, 2.58])  # a real change is written
    assert paperdata.write_unless_same(changed, path) is True
    assert pd.read_csv(path)["ratio"].tolist() == [1.76, 2.58]
    more = pd.concat([changed, changed.head(1)])  # another shape too
    assert paperdata.write_unless_same(more, path) is True and len(pd.read_csv(path)) == 3


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
