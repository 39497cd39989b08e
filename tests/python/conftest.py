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
import shutil
import subprocess
import tempfile
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


# Native tests that measure nothing: what a program prints or answers (the process-level
# conformance runs, the IM transcript, the IM servers' behaviour under chaos, bursts and
# dropped connections, whose every wait is a generous guard; not the setup under chaos, whose
# test needs a kill to land while clients register, which a busy CPU made chance: 0 of 6 runs
# on Erlang in one CI), what a notebook shows after real runs (the labs, the
# smoke profile end to end), which JDK the harness accepts. They get the marker shares_cpu,
# and scripts/test.sh runs them with the tests that start no native program, on every CPU.
# Every other native test asserts times or CPU shares (socket and echo servers, serve, the
# probes, crash and restart times) and runs alone, one at a time: a native test is one of
# those unless its file is listed here or it is marked shares_cpu itself (a bad command
# line's exit 2 and its one error line).
SHARES_CPU = (
    "tests/python/conformance/test_native_conformance.py",
    "tests/python/test_teaching_notebooks.py",
    "tests/python/test_notebooks_e2e.py",
    "tests/python/test_jdks.py",
    "tests/python/test_im_transcript.py",
    "tests/python/test_im_behaviour.py",
    "tests/python/test_im_servers.py",
)


def pytest_configure(config):
    # One cache of computed values (serverbench/analysis/reading/cache.py) per session, shared
    # by the xdist workers, the notebooks' kernels and run_all.sh, which inherit it: the
    # report renders of a session compute what every render needs once, and each session
    # computes it afresh (a test never reads what an earlier session or the user kept).
    if not hasattr(config, "workerinput") and not os.environ.get("SERVERBENCH_CACHE"):
        config._serverbench_cache = tempfile.mkdtemp(prefix="serverbench-cache-")
        os.environ["SERVERBENCH_CACHE"] = config._serverbench_cache
    config.addinivalue_line(
        "markers",
        "shares_cpu: a native test that measures nothing, run beside other tests (tests/python/conftest.py)",
    )
    config.addinivalue_line(
        "markers",
        "alone: a native test of a SHARES_CPU file that needs a race to happen (a kill finding a "
        "queue): run one at a time, as busy CPUs made it chance",
    )
    # xdist's load scheduling first gives each worker a quarter of its share as one block of
    # consecutive tests, which with the longest first (below) would put them all on one
    # worker: hand tests out one at a time instead (unless --maxschedchunk was given)
    if getattr(config.option, "numprocesses", None) and getattr(config.option, "maxschedchunk", 0) is None:
        config.option.maxschedchunk = 1


def pytest_unconfigure(config):
    kept = getattr(config, "_serverbench_cache", None)
    if kept:
        os.environ.pop("SERVERBENCH_CACHE", None)
        shutil.rmtree(kept, ignore_errors=True)


def pytest_itemcollected(item):
    listed = item.nodeid.split("::")[0].endswith(SHARES_CPU)
    if item.get_closest_marker("native") and listed and not item.get_closest_marker("alone"):
        item.add_marker(pytest.mark.shares_cpu)


# With pytest-xdist (-n): the tests that take minutes first, then those that take seconds,
# then the unit tests. xdist hands its first tests out in turn to each worker and the rest as
# workers free up, so the long ones start at once on different workers and the run ends with
# short tests on both, instead of one worker finishing a long test handed out last while the
# other waits. (The order within each group is the collection order.)
_LONG_FIRST = ("slurm", "e2e", "notebook", "native", "slow")


def pytest_collection_modifyitems(config, items):
    if not (getattr(config.option, "numprocesses", None) or hasattr(config, "workerinput")):
        return  # not under xdist: the collection order

    def rank(item) -> int:
        return next((i for i, m in enumerate(_LONG_FIRST) if item.get_closest_marker(m)), len(_LONG_FIRST))

    items.sort(key=rank)


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


@pytest.fixture
def fake_run_sweep(monkeypatch, tmp_path):
    """run_sweep replaced by a stub that records its call (no runs are made)."""
    from serverbench.harness.recording import sweep

    calls = []

    def stub(profile, **kw):
        calls.append(kw)
        d = tmp_path / "raw" / "x"
        d.mkdir(parents=True, exist_ok=True)
        return d

    monkeypatch.setattr(sweep, "run_sweep", stub)
    monkeypatch.delenv("SERVERBENCH_DATA", raising=False)
    monkeypatch.delenv("SERVERBENCH_ROOT", raising=False)
    return calls


@pytest.fixture(scope="session")
def _paper_verdicts_once():
    from serverbench.analysis.claims import paperdata

    return paperdata.paper_verdicts()


@pytest.fixture
def paper_verdicts(_paper_verdicts_once):
    """The claims judged on the paper's own data (paperdata.paper_verdicts(), computed afresh,
    not the copy kept in data/processed), once per session: several tests read it, and it
    processes a whole sweep. Each test gets its own copy."""
    return _paper_verdicts_once.copy()


@pytest.fixture
def declare(monkeypatch):
    """declare(*values): for one test, registry.load() is the real benchmarks' registry and
    these values (tables, figures, sections, claims), as if a plug-in's module declared them."""
    import types

    from serverbench.analysis.reading import registry

    base = registry.load()
    module = types.ModuleType("declared_in_a_test")

    def add(*values):
        vars(module)[f"declared_{len(vars(module))}"] = tuple(values)
        extended = base.with_modules(module)
        monkeypatch.setattr(registry, "load", lambda: extended)
        return extended

    return add
