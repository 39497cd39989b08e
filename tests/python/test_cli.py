"""The package's command line and the shell entry points: exit codes and messages."""

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from serverbench import cli
from test_records import SPEC_EXAMPLE, raw_line

ROOT = Path(__file__).resolve().parents[2]


def run(argv):
    out, err = io.StringIO(), io.StringIO()
    code = cli.run(argv, out, err)
    return code, out.getvalue(), err.getvalue()


@pytest.mark.slow
def test_help_lists_the_subcommands():
    proc = subprocess.run([sys.executable, "-m", "serverbench", "--help"], capture_output=True, text=True)
    assert proc.returncode == 0
    for name in ("validate", "run", "notebooks"):
        assert name in proc.stdout


def test_unknown_subcommand_is_a_usage_error():
    code, _, err = run(["frobnicate"])
    assert code == 2


def test_validate_good_and_bad_logs(tmp_path):
    good = tmp_path / "good.jsonl"
    good.write_text(json.dumps(raw_line()) + "\n")
    assert run(["validate", str(good)])[0] == 0
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps(raw_line()) + "\n{oops\n")
    code, out, err = run(["validate", str(bad)])
    assert code == 1
    assert f"{bad}:2:" in err and "1 valid line(s), 1 bad" in out
    assert bad.read_text().count("\n") == 2  # validation never rewrites a raw log


def test_validate_names_a_missing_path(tmp_path):
    code, _, err = run(["validate", str(tmp_path / "missing")])
    assert code == 2 and "missing" in err


def test_validate_native_from_a_file(tmp_path):
    f = tmp_path / "n.jsonl"
    broken = dict(SPEC_EXAMPLE, language="rust")
    f.write_text(json.dumps(SPEC_EXAMPLE) + "\n" + json.dumps(broken) + "\n")
    code, _, err = run(["validate-native", str(f)])
    assert code == 1 and ":2: language" in err


def test_run_all_help_needs_nothing_installed():
    proc = subprocess.run(
        ["bash", str(ROOT / "run_all.sh"), "--help"], capture_output=True, text=True, env={"PATH": "/usr/bin:/bin"}
    )
    assert proc.returncode == 0 and "--profile" in proc.stdout and "--no-run" in proc.stdout


def test_run_all_rejects_unknown_arguments_before_doing_anything():
    proc = subprocess.run(["bash", str(ROOT / "run_all.sh"), "--profiel", "quick"], capture_output=True, text=True)
    assert proc.returncode == 2 and "--profiel" in proc.stderr and proc.stdout == ""


@pytest.mark.native
def test_build_rejects_an_unknown_language():
    proc = subprocess.run(["bash", str(ROOT / "scripts" / "build.sh"), "cobol"], capture_output=True, text=True)
    assert proc.returncode == 2 and "cobol" in proc.stderr
