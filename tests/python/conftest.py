"""Shared fixtures: the unit tier's guard, the socket-benchmark tests' launcher and process
check (a module asks for it with pytest.mark.usefixtures("no_leftover_processes")).

The tiers (pyproject.toml's markers): a test with none of TIER_MARKERS is a unit test, run by
a plain `pytest`. The guard below fails such a test if it starts a native program, a
toolchain, a build script, chromium or a notebook kernel, so that the unit tier stays fast
and runs on a machine with nothing built; the test must then carry the marker it needs.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
from pathlib import Path

import pytest

from socket_helpers import check_nothing_left, make_launcher

ROOT = Path(__file__).resolve().parents[2]
TIER_MARKERS = ("native", "notebook", "e2e", "slow", "slurm")

# What a unit test may not start: the toolchains and runtimes, the scripts that build or
# sweep, a notebook kernel (papermill, nbconvert --execute), and any executable that
# spec/cli.json lists. Wrappers (bash -c, env, timeout, ...) are looked through.
_FORBIDDEN_PROGRAMS = {
    "java", "javac", "mvn", "erl", "escript", "rebar3", "go", "gofmt", "cargo", "rustc", "node",
    "gcc", "cc", "make", "chromium", "chromium-browser", "papermill", "jupyter", "jupyter-nbconvert",
    "sbatch", "srun", "slurmctld", "slurmd", "build.sh", "setup.sh",
}  # fmt: skip
_WRAPPERS = {"bash", "sh", "env", "timeout", "taskset", "nice", "setsid", "stdbuf", "prlimit", "exec"}
_FORBIDDEN_WORDS = {"ipykernel_launcher", "papermill", "nbconvert"}  # python -m ...
_NATIVE = tuple(
    lang["executable"] for lang in json.loads((ROOT / "spec" / "cli.json").read_text())["languages"].values()
)


def _forbidden(args) -> str | None:
    """The part of a command line that a unit test may not start, else None."""
    if isinstance(args, (str, bytes)):
        words = shlex.split(os.fsdecode(args))
    elif isinstance(args, os.PathLike):
        words = [os.fspath(args)]
    else:
        words = [os.fsdecode(a) if isinstance(a, (bytes, os.PathLike)) else str(a) for a in args]
    for w in words:
        if w in _FORBIDDEN_WORDS or any(w.endswith(exe) for exe in _NATIVE):
            return w
    i = 0
    while i < len(words):  # the program, after any wrappers and their options
        name = os.path.basename(words[i])
        if name in _FORBIDDEN_PROGRAMS:
            return words[i]
        if name not in _WRAPPERS:
            return None
        i += 1
        while i < len(words) and (words[i].startswith("-") or "=" in words[i] or words[i].isdigit()):
            if words[i] == "-c" and i + 1 < len(words):  # bash -c 'a script': any word counts
                script = shlex.split(words[i + 1].replace("&&", " ; ").replace(";", " ; "))
                return next((w for w in script if os.path.basename(w) in _FORBIDDEN_PROGRAMS), None) or _forbidden(
                    script
                )
            i += 1
    return None


@pytest.fixture(autouse=True)
def _unit_tier_guard(request, monkeypatch):
    """A test without a tier marker fails if it starts a native program or a kernel."""
    if any(request.node.get_closest_marker(m) for m in TIER_MARKERS):
        yield
        return
    real_init = subprocess.Popen.__init__

    def guarded_init(self, args, *a, **k):
        bad = _forbidden(args)
        if bad is not None:
            pytest.fail(
                f"a unit-tier test started {bad!r}: give it the marker it needs "
                f"({', '.join(TIER_MARKERS)}; tests/python/conftest.py)",
                pytrace=False,
            )
        real_init(self, args, *a, **k)

    monkeypatch.setattr(subprocess.Popen, "__init__", guarded_init)
    yield


@pytest.fixture
def launcher(tmp_path):
    """A Launcher for one socket run, its scratch files in tmp_path."""
    return make_launcher(tmp_path)


@pytest.fixture
def no_leftover_processes():
    """After the test: no child process of this test process is alive."""
    yield
    check_nothing_left()
