"""Provenance a reader can check and cite: sha256 sums of the committed raw logs (checked by
`serverbench validate`), one version everywhere, sweeps into data/raw only from a clean tree."""

import io
import re
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest

from serverbench import __version__, cli
from serverbench.rawdata import checksums

ROOT = Path(__file__).resolve().parents[2]


def _validate(*args):
    out, err = io.StringIO(), io.StringIO()
    rc = cli.run(["validate", *map(str, args)], stdout=out, stderr=err)
    return rc, out.getvalue(), err.getvalue()


def _committed_sweeps() -> dict[str, set[str]]:
    files = subprocess.run(
        ["git", "-C", str(ROOT), "ls-files", "data/raw"], capture_output=True, text=True, check=True
    ).stdout.split()
    sweeps: dict[str, set[str]] = {}
    for f in files:
        parts = f.split("/")
        if len(parts) >= 4:
            sweeps.setdefault(parts[2], set()).add("/".join(parts[3:]))
    return sweeps


def test_every_committed_sweep_has_sums_of_exactly_its_committed_files():
    sweeps = _committed_sweeps()
    assert len(sweeps) >= 10
    for sid, files in sweeps.items():
        assert checksums.SUMS_NAME in files, f"data/raw/{sid} has no committed {checksums.SUMS_NAME}"
        listed = set(checksums.read_sums(ROOT / "data" / "raw" / sid / checksums.SUMS_NAME))
        assert listed == files - {checksums.SUMS_NAME}, sid


@pytest.mark.slow
def test_validate_passes_on_the_committed_data():
    rc, out, err = _validate(ROOT / "data" / "raw")
    assert rc == 0, err
    assert "sha256" not in err


@pytest.fixture
def sweep_copy(tmp_path):
    src = ROOT / "data" / "raw" / "stab-r1"
    dst = tmp_path / "stab-r1"
    shutil.copytree(src, dst)
    return dst


@pytest.mark.slow
def test_validate_detects_one_changed_byte_in_a_raw_log(sweep_copy):
    assert _validate(sweep_copy)[0] == 0
    runs = sweep_copy / "runs.jsonl"
    data = bytearray(runs.read_bytes())
    # a digit inside a measurement: the line stays a valid record, only the sums can tell
    i = data.index(b'"wall_s":') + len(b'"wall_s":')
    while not chr(data[i]).isdigit():
        i += 1
    data[i] = ord("7") if data[i] != ord("7") else ord("8")
    runs.write_bytes(bytes(data))
    rc, out, err = _validate(sweep_copy)
    assert rc == 1
    assert "0 bad" in out  # every line is still a valid record
    assert re.search(r"runs\.jsonl: sha256 differs from SHA256SUMS", err), err
    # a raw root above it reports the same
    assert _validate(sweep_copy.parent)[0] == 1


@pytest.mark.slow
def test_validate_names_missing_and_unlisted_files(sweep_copy):
    (sweep_copy / "sessions.jsonl").unlink()
    (sweep_copy / "notes.txt").write_text("added later\n")
    (sweep_copy / ".lock").write_text("")  # hidden files (the sweep's lock) are not covered
    rc, _, err = _validate(sweep_copy)
    assert rc == 1
    assert "sessions.jsonl: listed in SHA256SUMS but missing" in err
    assert "notes.txt: not listed in SHA256SUMS" in err
    assert ".lock" not in err


@pytest.mark.slow
def test_write_sums_then_validate(sweep_copy, tmp_path):
    (sweep_copy / checksums.SUMS_NAME).unlink()
    (sweep_copy / "runs.jsonl").write_bytes((sweep_copy / "runs.jsonl").read_bytes() + b"")
    out, err = io.StringIO(), io.StringIO()
    assert cli.run(["validate", "--write-sums", str(sweep_copy)], stdout=out, stderr=err) == 0
    sums = checksums.read_sums(sweep_copy / checksums.SUMS_NAME)
    assert set(sums) == {"manifest.json", "runs.jsonl", "sessions.jsonl"}
    assert (
        sums["runs.jsonl"]
        == subprocess.run(
            ["sha256sum", str(sweep_copy / "runs.jsonl")], capture_output=True, text=True, check=True
        ).stdout.split()[0]
    )
    assert _validate(sweep_copy)[0] == 0
    # not a sweep folder: exit 2, one line
    empty = tmp_path / "empty"
    empty.mkdir()
    rc = cli.run(["validate", "--write-sums", str(empty)], stdout=io.StringIO(), stderr=err)
    assert rc == 2 and "not a sweep folder" in err.getvalue()


@pytest.mark.slow
def test_a_malformed_sums_file_is_named(sweep_copy):
    (sweep_copy / checksums.SUMS_NAME).write_text("not a sum\n")
    rc, _, err = _validate(sweep_copy)
    assert rc == 1 and "SHA256SUMS:1: not a sha256sum line" in err


# --- one version -------------------------------------------------------------------------
@pytest.mark.slow
def test_version_is_the_same_everywhere():
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "version" in pyproject["project"]["dynamic"]
    assert pyproject["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "serverbench.__version__"}
    assert re.fullmatch(r"\d+\.\d+\.\d+", __version__)
    out = subprocess.run(
        [__import__("sys").executable, "-m", "serverbench", "--version"], capture_output=True, text=True, cwd=ROOT
    )
    assert out.returncode == 0 and out.stdout.strip() == f"serverbench {__version__}"
    cff = (ROOT / "CITATION.cff").read_text()
    assert re.search(rf"^version: \"?{re.escape(__version__)}\"?$", cff, re.M), "CITATION.cff version"
    changelog = (ROOT / "CHANGELOG.md").read_text()
    assert f"## [{__version__}]" in changelog


# --- clean tree (fake_run_sweep: tests/python/conftest.py) ---------------------------------
def _dirty(monkeypatch, dirty):
    from serverbench.harness.running import environment

    monkeypatch.setattr(environment, "git_info", lambda: {"commit": "0" * 40, "dirty": dirty})


def test_a_sweep_into_data_raw_is_refused_from_a_dirty_tree(monkeypatch, fake_run_sweep):
    _dirty(monkeypatch, True)
    err = io.StringIO()
    rc = cli.run(["run", "--profile", "smoke", "--no-progress"], stdout=io.StringIO(), stderr=err)
    assert rc == 2 and not fake_run_sweep
    assert err.getvalue().count("\n") == 1 and "--allow-dirty" in err.getvalue()


def test_allow_dirty_a_clean_tree_or_another_folder_records(monkeypatch, fake_run_sweep, tmp_path):
    _dirty(monkeypatch, True)
    args = ["run", "--profile", "smoke", "--no-progress"]
    assert cli.run([*args, "--allow-dirty"], stdout=io.StringIO(), stderr=io.StringIO()) == 0
    assert cli.run([*args, "--raw-dir", str(tmp_path / "scratch")], stdout=io.StringIO(), stderr=io.StringIO()) == 0
    _dirty(monkeypatch, False)
    assert cli.run(args, stdout=io.StringIO(), stderr=io.StringIO()) == 0
    _dirty(monkeypatch, None)  # not a git checkout (an unpacked archive): nothing to compare with
    assert cli.run(args, stdout=io.StringIO(), stderr=io.StringIO()) == 0
    assert len(fake_run_sweep) == 4


# --- CITATION.cff ---------------------------------------------------------------------------
def _cff_errors(cff: dict) -> list[str]:
    """Errors against the Citation File Format 1.2.0 schema (the copy cffconvert 2.0.0 ships,
    tests/python/cff_schema_1_2_0.json; `cffconvert --validate` checks the same)."""
    import json

    import jsonschema

    schema = json.loads((Path(__file__).parent / "cff_schema_1_2_0.json").read_text())
    validator = jsonschema.Draft7Validator(schema, format_checker=jsonschema.FormatChecker())
    return [e.message for e in validator.iter_errors(cff)]


def test_citation_cff_is_valid_and_cites_the_paper():
    import yaml

    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text())
    assert _cff_errors(cff) == []
    assert cff["cff-version"] == "1.2.0" and cff["type"] == "software" and cff["license"] == "MIT"
    paper = [r for r in cff["references"] if r.get("doi") == "10.1145/3167132.3167144"]
    assert paper and [a["family-names"] for a in paper[0]["authors"]] == ["Valkov", "Chechina", "Trinder"]
    # the check can fail: a file without authors or with a malformed DOI is refused
    assert _cff_errors({k: v for k, v in cff.items() if k != "authors"})
    bad = dict(cff, references=[dict(paper[0], doi="not a doi")])
    assert _cff_errors(bad)


# sweeps committed before the clean-tree rule (RULE_SINCE_UTC) keep their recorded state: six say
# dirty: true (CHANGELOG.md, 0.1.0); every later one must come from a clean tree
RULE_SINCE_UTC = "2026-11-24T21:00:00Z"
DIRTY_BEFORE_THE_RULE = {
    "audit-20261123T083449Z",
    "quick-20261121T134551Z",
    "quick-harness-20261123T082539Z",
    "servers-echo-16k-20261123",
    "servers-echo-sat-20261123",
    "stab-r3",
}


def test_committed_sweeps_since_the_rule_come_from_a_clean_tree():
    import json

    dirty = set()
    for sid in _committed_sweeps():
        man = json.loads((ROOT / "data" / "raw" / sid / "manifest.json").read_text())
        if (man.get("git") or {}).get("dirty") is not False:
            assert man["created_utc"] < RULE_SINCE_UTC, (
                f"{sid}: recorded from a dirty tree after the clean-tree rule; "
                "re-record it from a clean tree (docs/release.md)"
            )
            dirty.add(sid)
    assert dirty == DIRTY_BEFORE_THE_RULE


# --- the paper's numbers ----------------------------------------------------------------------
@pytest.mark.slow
def test_the_reference_csvs_rebuild_byte_for_byte_from_the_authors_spreadsheets(tmp_path):
    # data/reference/extract_reference.py needs openpyxl (the [reference] extra, in the lock)
    pytest.importorskip("openpyxl", reason="the [reference] extra is not installed")
    ref = ROOT / "data" / "reference"
    files = subprocess.run(
        ["git", "-C", str(ROOT), "ls-files", "data/reference"], capture_output=True, text=True, check=True
    ).stdout.split()
    for f in files:
        dst = tmp_path / f
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / f, dst)
    copy = tmp_path / "data" / "reference"
    for csv in copy.glob("paper_*.csv"):
        csv.unlink()
    proc = subprocess.run(
        [__import__("sys").executable, "extract_reference.py"], cwd=copy, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    committed = sorted(p.name for p in ref.glob("paper_*.csv"))
    assert len(committed) >= 6
    for name in committed:
        assert (copy / name).read_bytes() == (ref / name).read_bytes(), name


def _git(cwd, *args):
    subprocess.run(["git", "-C", str(cwd), *args], check=True, capture_output=True)


def test_only_what_decides_a_run_makes_the_tree_dirty(tmp_path):
    """What the pipeline writes (paper/, data/processed/, data/raw/) is not a change to the
    code that ran: a second ./run_all.sh in one clone must not be refused."""
    from serverbench.harness.running.environment import git_info

    _git(tmp_path, "init", "-q")
    for rel in ("paper/report.html", "data/processed/t.csv", "data/raw/s/runs.jsonl", "src/a.py", "run_all.sh"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("1\n")
    _git(tmp_path, "add", ".")
    _git(tmp_path, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "x")
    assert git_info(tmp_path)["dirty"] is False
    for rel in ("paper/report.html", "data/processed/t.csv", "data/raw/s/runs.jsonl"):
        (tmp_path / rel).write_text("2\n")
    assert git_info(tmp_path)["dirty"] is False
    (tmp_path / "run_all.sh").write_text("2\n")
    assert git_info(tmp_path)["dirty"] is True
    assert git_info(tmp_path / "nowhere")["dirty"] is None
