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


@pytest.mark.native  # a dry run, but the unit tier starts no build script (conftest.py)
def test_build_plans_each_languages_folder_from_the_spec_and_the_tree():
    """scripts/build.sh has no list of languages: each resolves to its executable's folder
    (languages sharing a program build it once), built by what the folder holds; a jar
    compiled from another folder's sources (the one Scala tree, src/java's shared code) is
    rebuilt when those change."""
    from serverbench import contract

    langs = contract.languages()
    build = ["bash", str(ROOT / "scripts" / "build.sh"), "--dry-run"]
    proc = subprocess.run([*build, *langs], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    plan = {line.split()[0]: line.split()[1:] for line in proc.stdout.splitlines()}
    assert len(plan) == len(proc.stdout.splitlines())  # each folder once
    assert set(plan) == {contract.language(lang)["executable"].split("/")[1] for lang in langs}
    assert plan["scala"][0] == "maven" and plan["go"] == ["go"] and plan["nodejs"] == ["interpreted"]
    assert "src/scala/src/main" in plan["scala_pekko"] and "src/scala/src/main" in plan["scala_akka24"]
    assert "src/java/src/main" in plan["java_vthreads"]
    default = subprocess.run(build, capture_output=True, text=True)  # every folder with something to compile
    assert default.returncode == 0 and {line.split()[1] for line in default.stdout.splitlines()} <= {
        "maven",
        "go",
        "rebar3",
        "cargo",
        "gcc",
    }
    assert {line.split()[0] for line in default.stdout.splitlines()} == {
        f for f, (kind, *_) in plan.items() if kind != "interpreted"
    }
