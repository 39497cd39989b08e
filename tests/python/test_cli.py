"""The package's command line and the shell entry points: exit codes and messages."""

import io
import json
import os
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


@pytest.mark.native  # starts the build script (on a toy tree with stand-in toolchains)
def test_build_builds_every_folder_of_the_plan_even_when_a_builder_reads_stdin(tmp_path):
    """Every folder of the plan is built, in order, whatever a build tool does with stdin
    (rebar3, an Erlang shell, read the plan's remaining lines, so nothing after it was
    built). A toy repository: the real build.sh, a spec naming three languages in three
    folders, and stand-ins for rebar3, go and mvn on PATH that log their call and read stdin."""
    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts" / "build.sh").write_text((ROOT / "scripts" / "build.sh").read_text(encoding="utf-8"))
    languages = {
        "a_erl": {"executable": "src/a_erl/_build/default/bin/serverbench", "command": ["{exe}"]},
        "b_go": {"executable": "src/b_go/bin/serverbench", "command": ["{exe}"]},
        "c_jvm": {"executable": "src/c_jvm/target/x.jar", "command": ["java", "-jar", "{exe}"]},
    }
    (tmp_path / "spec").mkdir()
    (tmp_path / "spec" / "cli.json").write_text(json.dumps({"languages": languages}), encoding="utf-8")
    for folder, marker in (("a_erl", "rebar.config"), ("b_go", "go.mod"), ("c_jvm", "pom.xml")):
        (tmp_path / "src" / folder).mkdir(parents=True)
        (tmp_path / "src" / folder / marker).write_text("", encoding="utf-8")
    (tmp_path / "src" / "b_go" / "internal" / "cli").mkdir(parents=True)
    bin_dir, log = tmp_path / "bin", tmp_path / "calls.log"
    bin_dir.mkdir()
    for tool in ("rebar3", "go", "mvn"):
        stand_in = bin_dir / tool
        body = 'if [ "$1" = env ]; then echo go1.26.0; exit 0; fi\n' if tool == "go" else ""
        stand_in.write_text(f'#!/bin/sh\n{body}cat >/dev/null\necho "{tool} $*" >> "{log}"\n', encoding="utf-8")
        stand_in.chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"}
    proc = subprocess.run(
        ["bash", str(tmp_path / "scripts" / "build.sh")], capture_output=True, text=True, env=env, input="x\ny\n"
    )
    assert proc.returncode == 0, proc.stderr
    calls = [line.split()[0] for line in log.read_text(encoding="utf-8").splitlines()]
    assert calls == ["rebar3", "go", "go", "mvn"]  # go builds twice: with and without the Green Tea GC


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
    # KIND, then NEEDS: a compiled folder's tool, an interpreted one's languages (all asked here)
    assert plan["scala"][:2] == ["maven", "mvn"] and plan["go"] == ["go", "go"]
    assert plan["nodejs"] == ["interpreted", "nodejs"] and plan["ircd"] == ["interpreted", "ngircd,inspircd"]
    assert "src/scala/src/main" in plan["scala_pekko"] and "src/scala/src/main" in plan["scala_akka24"]
    assert "src/java/src/main" in plan["java_vthreads"]
    assert "src/pom.xml" in plan["java"]  # the parent POM: a change to it rebuilds every jar
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
