"""The write-ups' own numbers through their claims' checks (analysis/claims/sourcedata.py)."""

from __future__ import annotations

import shutil

import pandas as pd
import pytest

from serverbench.analysis.claims import NOT_TESTABLE, sourcedata
from serverbench.analysis.reading import cache, reference


@pytest.mark.slow
def test_the_write_ups_numbers_are_judged_as_points_and_recover_their_findings(tmp_path, monkeypatch):
    computed = sourcedata.source_verdicts(tmp_path / "work")  # a workdir: computed, never cached
    # without one, the table is kept in the cache under its inputs' digest: the same table
    # computed (a miss), then read back (a hit), and a changed reference table misses
    monkeypatch.setenv("SERVERBENCH_CACHE", str(tmp_path / "cache"))
    pd.testing.assert_frame_equal(sourcedata.source_verdicts(), computed)
    kept = cache.path_of(sourcedata.CACHE_KIND, sourcedata.inputs())
    assert kept.parent == tmp_path / "cache" / sourcedata.CACHE_KIND
    assert [p.name for p in kept.parent.iterdir()] == [kept.name]
    kept_at = kept.stat().st_mtime_ns
    pd.testing.assert_frame_equal(sourcedata.source_verdicts(), computed)
    assert kept.stat().st_mtime_ns == kept_at and [p.name for p in kept.parent.iterdir()] == [kept.name]
    ref = tmp_path / "reference"
    shutil.copytree(reference.reference_dir(), ref)
    with (ref / "servers_tcp_bytes_read.csv").open("a") as f:
        f.write("\n")
    monkeypatch.setattr(reference, "reference_dir", lambda: ref)
    assert cache.path_of(sourcedata.CACHE_KIND, sourcedata.inputs()) != kept

    t = computed.set_index("id")
    written_up = ["E1", "E2", "E3", "E4", "T1", "T1b", "T2", "T3"]
    predictions = ["IM1", "IM2", "IM3", "IM4", "IM5"]  # no source numbers to recover
    assert list(t.index) == written_up + predictions
    assert (t.loc[predictions, "verdict"] == NOT_TESTABLE).all()
    # the source's point estimates reach the checks (E4: go_v2 / c at 32,768 x 512 KiB)
    assert "go / c at N=32,768, D=512 KiB: 1.19" in t.loc["E4", "numbers"]
    assert "placement=shared" in t.loc["T1", "numbers"]
    # the article's 6x, and the write-up's fix
    assert "5.68" in t.loc["T1", "numbers"] and "1.03" in t.loc["T1b", "numbers"]
    own = sourcedata.own_data_column(pd.DataFrame(columns=["id", "verdict", "numbers", "why"]), t.reset_index())
    text = dict(zip(own["id"], own[sourcedata.OWN]))
    assert all(text[cid] == "supported" for cid in written_up), text


def test_a_claim_the_sources_numbers_cannot_judge_says_why_not_the_machine():
    own = sourcedata.own_data_column(
        pd.DataFrame(
            {"id": ["IM4"], "verdict": ["not testable on this machine"], "numbers": [""], "why": ["no steps"]}
        ),
        pd.DataFrame(columns=["id", "verdict", "numbers", "why"]),
    )
    assert own[sourcedata.OWN].tolist() == ["not testable on this machine: no steps"]  # the claims table's word
    from serverbench.analysis.reporting import vocabulary  # the report's words: never the machine here

    words = own[sourcedata.OWN].map(vocabulary.source_data_text).tolist()
    assert words == ["not testable (the source's data lack it): no steps"]
    assert vocabulary.source_data_text("supported") == "supported"


def test_a_supported_verdict_needs_no_reason():
    own = sourcedata.own_data_column(
        pd.DataFrame({"id": ["C3"], "verdict": ["supported"], "numbers": [""], "why": [""]}),
        pd.DataFrame(columns=["id", "verdict", "numbers", "why"]),
    )
    assert own[sourcedata.OWN].tolist() == ["supported"]
