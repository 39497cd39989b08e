"""Set-up installs what the build checks, for every profile, and the build checks only the
languages asked (the quick profile runs ngircd, so set-up installed ngircd alone,
and the build, asked for ngircd, checked every language of its folder src/ircd/: InspIRCd
too, and stopped a fresh machine's ./run_all.sh).

No bare machine is needed: scripts/setup.sh --plan prints what set-up would install on a
machine with nothing installed ("KIND NAME FOR" lines), and scripts/build.sh --dry-run
names what each folder's build needs ("FOLDER KIND NEEDS SOURCES...")."""

import io
import json
import os
import subprocess
from functools import cache
from pathlib import Path

import pytest

from serverbench import cli
from serverbench.harness.planning.pieces import pieces
from serverbench.harness.planning.profiles import available_profiles

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = ROOT / "scripts"
OWN_NEEDS = {"python", "pdf", "java25"}  # set-up's own (the environment, report.pdf, a JDK 25), not the build's
KINDS = {"apt", "rustup", "pyenv", "jdk25"}

# each starts a build script (a dry run, but the unit tier starts none: conftest.py); they
# measure nothing, so they run beside other tests
pytestmark = [pytest.mark.native, pytest.mark.shares_cpu]


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SERVERBENCH_")}
    return {**env, **extra}


@cache
def profile_languages(profile: str, piece: str | None = None) -> str:
    """`python -m serverbench profiles --needs PROFILE [--piece PIECE]` (in process: the same
    command run_all.sh runs)."""
    out, err = io.StringIO(), io.StringIO()
    # a piece for a bigger machine (im's large) is planned as if it fit: its languages are the same
    args = ["profiles", "--needs", profile] + (["--piece", piece, "--oversubscribe"] if piece else [])
    assert cli.run(args, out, err) == 0, err.getvalue()
    return out.getvalue().strip()


def every_piece() -> list[tuple[str, str]]:
    return [(profile, name) for profile in available_profiles() for name in pieces(profile)]


@cache
def build_needs(languages: str) -> dict[str, tuple[str, list[str]]]:
    """scripts/build.sh --dry-run LANGUAGES (every folder when none): folder -> (kind, needs)."""
    args = languages.split(",") if languages else ["all"]
    proc = subprocess.run(
        ["bash", str(SCRIPTS / "build.sh"), "--dry-run", *args], capture_output=True, text=True, env=_env()
    )
    assert proc.returncode == 0, proc.stderr
    plan = {}
    for line in proc.stdout.splitlines():
        folder, kind, needs, *_sources = line.split()
        plan[folder] = (kind, needs.split(","))
    return plan


@cache
def setup_plan(languages: str, **env: str) -> dict[tuple[str, str], set[str]]:
    """scripts/setup.sh --plan for LANGUAGES (set-up's default when none): (kind, name) -> needs."""
    extra = {"SERVERBENCH_LANGUAGES": languages, **env} if languages else env
    proc = subprocess.run(
        ["bash", str(SCRIPTS / "setup.sh"), "--plan"], capture_output=True, text=True, env=_env(**extra), timeout=60
    )
    assert proc.returncode == 0, f"setup.sh --plan failed (exit {proc.returncode}):\n{proc.stderr[-2000:]}"
    plan = {}
    for line in proc.stdout.splitlines():
        kind, name, needs = line.split()
        assert kind in KINDS and (kind, name) not in plan, line
        plan[kind, name] = set(needs.split(","))
    return plan


@pytest.mark.parametrize("profile", [*available_profiles(), None], ids=lambda p: p or "default")
def test_set_up_on_a_bare_machine_provides_exactly_what_the_build_checks(profile):
    """Every need of the build's dry run for the profile's languages (None: set-up's default,
    every folder) is provided by some item of set-up's bare-machine plan, and set-up plans
    nothing for a need the build does not have: an interpreted folder's languages are only
    those asked."""
    check_set_up_provides_what_the_build_checks(profile_languages(profile) if profile else "")


@pytest.mark.parametrize("profile, piece", every_piece(), ids=lambda x: x)
def test_set_up_of_a_piece_on_a_bare_machine_provides_exactly_what_the_build_checks(profile, piece):
    """The same for `./run_all.sh --piece`, which asks set-up for the piece's languages only."""
    check_set_up_provides_what_the_build_checks(profile_languages(profile, piece))


def check_set_up_provides_what_the_build_checks(languages: str) -> None:
    asked = set(languages.split(",")) if languages else None
    build = build_needs(languages)
    checked = {need for _, needs in build.values() for need in needs}
    for folder, (kind, needs) in build.items():
        assert needs and all(needs), (folder, kind)
        if kind == "interpreted" and asked is not None:
            assert set(needs) <= asked, f"{folder}: the build checks {needs}, asked for {sorted(asked)}"
    plan = setup_plan(languages)
    provided = set().union(*plan.values())
    assert checked <= provided, f"the build checks {sorted(checked - provided)}, which set-up does not install"
    assert provided - OWN_NEEDS == checked, f"set-up installs for {sorted(provided - OWN_NEEDS - checked)}"
    # as if nothing were installed: every need of the build has a step, installed here or not
    assert {"python", "pdf"} <= provided and ("apt", "python3") in plan


def test_the_quick_profile_installs_ngircd_and_no_inspircd():
    """The issue's case: quick runs the im benchmark against ngircd only."""
    languages = profile_languages("quick")
    assert "ngircd" in languages.split(",") and "inspircd" not in languages.split(",")
    assert build_needs(languages)["ircd"] == ("interpreted", ["ngircd"])
    plan = setup_plan(languages)
    assert plan["apt", "ngircd"] == {"ngircd"} and ("apt", "inspircd") not in plan
    # what run_all.sh's first set-up call asks: the Python environment alone
    python_only = setup_plan("", SERVERBENCH_PYTHON_ONLY="1")
    assert python_only and all(needs == {"python"} for needs in python_only.values())


def test_a_folder_asked_by_name_checks_all_its_languages():
    plan = build_needs("ircd")
    assert plan == {"ircd": ("interpreted", ["ngircd", "inspircd"])}
    assert build_needs("ngircd,inspircd") == plan


def test_build_checks_only_the_runtime_of_the_language_asked(tmp_path):
    """The real build, not its dry run: on a toy tree whose interpreted folder holds two
    languages, one whose runtime answers --version and one whose runtime is missing, asking
    for the first builds; asking for the second, or the folder, stops naming the second."""
    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts" / "build.sh").write_text((SCRIPTS / "build.sh").read_text(encoding="utf-8"))
    exe = tmp_path / "src" / "duo" / "run-duo"
    exe.parent.mkdir(parents=True)
    exe.write_text('#!/bin/sh\n[ "$1" = here ] && [ "$2" = --version ]\n', encoding="utf-8")
    exe.chmod(0o755)
    languages = {name: {"executable": "src/duo/run-duo", "command": ["{exe}", name]} for name in ("here", "gone")}
    (tmp_path / "spec").mkdir()
    (tmp_path / "spec" / "cli.json").write_text(json.dumps({"languages": languages}), encoding="utf-8")

    def build(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            ["bash", str(tmp_path / "scripts" / "build.sh"), *args], capture_output=True, text=True, env=_env()
        )

    assert build("here").returncode == 0, build("here").stderr
    for args in (("gone",), ("duo",), ("here", "gone")):
        proc = build(*args)
        assert proc.returncode == 1 and "gone needs" in proc.stderr, (args, proc.stderr)
