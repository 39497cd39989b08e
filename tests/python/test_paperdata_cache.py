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
