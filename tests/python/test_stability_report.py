"""The report's stability section: repeats found by name, verdicts recomputed per repeat."""

import shutil
from pathlib import Path

import pytest

from serverbench.analysis import stability_report
from serverbench.analysis.registry import REG, load

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "raw" / "golden-smoke"


class _P:
    def __init__(self, sweep_dir):
        self.info = {"sweep_dir": str(sweep_dir)}


def test_repeats_are_found_by_name_and_need_a_sibling(tmp_path):
    for name in ("s-r1", "s-r2", "s-r10", "other-r3", "s-rx"):
        shutil.copytree(GOLDEN, tmp_path / name)
    (tmp_path / "s-r4").mkdir()  # no raw log: not a repeat
    assert [d.name for d in stability_report.repeats_of(tmp_path / "s-r2")] == ["s-r1", "s-r2", "s-r10"]
    assert stability_report.repeats_of(tmp_path / "other-r3") == []  # alone
    assert stability_report.repeats_of(tmp_path / "s-rx") == []


@pytest.mark.slow
def test_section_shows_every_repeat_and_agreement(tmp_path):
    for name in ("g-r1", "g-r2"):
        shutil.copytree(GOLDEN, tmp_path / name)
    load()
    section = REG.sections["Stability of the verdicts"]
    blocks = section.render(_P(tmp_path / "g-r1"))
    table = blocks[1]
    assert list(table.columns) == ["claim", "g-r1", "g-r2", "agree"]
    assert (table["g-r1"] == table["g-r2"]).all() and (table["agree"] == "yes").all()
    assert f"**{len(table)} of {len(table)} claims" in blocks[0]
    assert len(section.render(_P(tmp_path / "nothing-here"))) == 1  # not a repeat: one sentence


@pytest.mark.slow
def test_a_repeat_that_differs_shows_no(tmp_path):
    for name in ("h-r1", "h-r2"):
        shutil.copytree(GOLDEN, tmp_path / name)
    log = tmp_path / "h-r2" / "runs.jsonl"
    log.write_text("".join(line for line in log.read_text().splitlines(True) if '"language":"scala_akka"' not in line))
    table = stability_report.agreement_table(stability_report.repeats_of(tmp_path / "h-r1"))
    assert (table["agree"] == "NO").any()  # recomputed from each raw log, not copied
    assert (table.loc[table["agree"] == "NO", "h-r1"] != table.loc[table["agree"] == "NO", "h-r2"]).all()


@pytest.mark.slow
def test_a_sweep_outside_a_stability_run_is_set_beside_the_newest_one(tmp_path):
    import json

    for name, created in (
        ("old-r1", "2026-01-01T00:00:00Z"),
        ("old-r2", None),
        ("new-r1", "2026-06-01T00:00:00Z"),
        ("new-r2", None),
        ("single", None),
    ):
        shutil.copytree(GOLDEN, tmp_path / name)
        if created:
            man = tmp_path / name / "manifest.json"
            man.write_text(json.dumps({**json.loads(man.read_text()), "created_utc": created}))
    log = tmp_path / "single" / "runs.jsonl"
    log.write_text("".join(line for line in log.read_text().splitlines(True) if '"language":"scala_akka"' not in line))
    load()
    section = REG.sections["Stability of the verdicts"]
    P = _P(tmp_path / "single")
    P.info["profile"] = "smoke"
    text, table = section.render(P)
    assert list(table.columns) == ["claim", "new-r1", "new-r2", "this sweep (single)", "agree", "this sweep agrees"]
    assert "new-r1, new-r2" in text and "old-r1" not in text
    differs = table["this sweep agrees"] == "NO"
    assert differs.any() and (table.loc[differs, "this sweep (single)"] != table.loc[differs, "new-r1"]).all()
    assert (table.loc[~differs, "this sweep (single)"] == table.loc[~differs, "new-r1"]).all()
    P.info["profile"] = "quick"  # no stability run of this profile here: one sentence
    assert len(section.render(P)) == 1


def test_sweep_dir_is_found_under_the_raw_folder_in_use(tmp_path, monkeypatch):
    monkeypatch.setenv("SERVERBENCH_DATA", str(tmp_path / "elsewhere"))
    P = _P("data/raw/s-r1")  # as sweep.json writes it
    assert stability_report._sweep_dir(P) == (tmp_path / "elsewhere" / "raw" / "s-r1").resolve()
