"""Every native executable against spec/cli.json and spec/native-record.schema.json,
as a process: what only a real process can show.

The cases are generated from the spec (cases.py, process_cases): one valid tiny run per
(language, benchmark, variant), each record validated with jsonschema, --version and
--help, and a fixed sample of bad command lines per program (exit 2, one error line,
nothing on stdout). The full set of
bad command lines runs in process in each language's own test suite, from
tests/conformance/parser-cases.json. Each case is one process run as the harness runs
it (the language's cli.json command and environment, at 1 core). A language whose
executable is not built is skipped with the build command to run.
"""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import subprocess
import tempfile
from concurrent.futures import Future, ThreadPoolExecutor

import jsonschema
import pytest

from serverbench import jdks

from .cases import ROOT, Case, load_cli, load_schema, process_cases

pytestmark = pytest.mark.native

CLI = load_cli()
SCHEMA = load_schema()
CASES = process_cases(CLI)
TIMEOUT_S = 60
# What the cli.json command templates are filled with: small, within a 1 GiB budget.
PLACEHOLDERS = {"cores": "1", "heap_mb": "256", "process_limit": "262144"}


def _fill(template: str, exe: str) -> str:
    values = {**PLACEHOLDERS, "exe": exe}

    def sub(m: re.Match) -> str:
        if m.group(1) not in values:
            pytest.fail(f"cli.json placeholder {{{m.group(1)}}} unknown to the conformance suite")
        return values[m.group(1)]

    return re.sub(r"\{(\w+)\}", sub, template)


def command(lang: str) -> tuple[list[str], dict[str, str]]:
    """The language's command and environment, or a skip saying how to build it."""
    spec = CLI["languages"][lang]
    exe = ROOT / spec["executable"]
    if not exe.exists():
        pytest.skip(f"{lang}: {spec['executable']} is not built (run {spec.get('build', 'scripts/build.sh ' + lang)})")
    try:  # {java25}: that JDK's java (serverbench.jdks); the JVM language is skipped without it
        argv = jdks.fill(spec["command"])
    except jdks.JdkError as e:
        pytest.skip(f"{lang}: {e}")
    cmd = [_fill(part, str(exe)) for part in argv]
    if shutil.which(cmd[0]) is None and not os.path.exists(cmd[0]):
        pytest.skip(f"{lang}: {cmd[0]} is not on PATH")
    env = {**os.environ, **{k: _fill(v, str(exe)) for k, v in spec.get("env", {}).items()}}
    return cmd, env


# Cases are independent processes; a language's cases are started together on a few
# worker threads when its first case runs (each test then waits for its own result). Under
# pytest-xdist the workers share the cases out instead: each runs its own, one at a time.
JOBS = int(os.environ.get("SERVERBENCH_CONFORMANCE_JOBS", min(2, os.cpu_count() or 1)))
UNDER_XDIST = bool(os.environ.get("PYTEST_XDIST_WORKER"))
_pool = ThreadPoolExecutor(max_workers=JOBS)
_results: dict[str, Future] = {}


def _run(case: Case, cmd: list[str], env: dict[str, str]) -> subprocess.CompletedProcess:
    with tempfile.TemporaryDirectory(prefix="sb-conformance-") as cwd:  # e.g. a crash dump lands here
        return subprocess.run(
            [*cmd, *case.args],
            input="",
            capture_output=True,
            text=True,
            env=env,
            cwd=cwd,
            timeout=TIMEOUT_S,
            check=False,
        )


def execute(case: Case) -> subprocess.CompletedProcess:
    cmd, env = command(case.language)
    if UNDER_XDIST:
        return _run(case, cmd, env)
    if case.id not in _results:
        for c in CASES:
            if c.language == case.language and c.id not in _results:
                _results[c.id] = _pool.submit(_run, c, cmd, env)
    return _results[case.id].result()


def validator(definition: str | None = None) -> jsonschema.Draft202012Validator:
    schema = SCHEMA if definition is None else {"$ref": f"#/$defs/{definition}", "$defs": SCHEMA["$defs"]}
    return jsonschema.Draft202012Validator(schema)


RECORD = validator()
VERSION = validator("version_info")


def one_json_line(p: subprocess.CompletedProcess) -> dict:
    lines = p.stdout.splitlines()
    assert len(lines) == 1 and p.stdout.endswith("\n"), f"stdout is not one line: {p.stdout!r}"
    return json.loads(lines[0])


def same(expected, got) -> bool:
    if isinstance(expected, float) or isinstance(got, float):
        return isinstance(got, (int, float)) and not isinstance(got, bool) and math.isclose(expected, got, rel_tol=1e-9)
    return expected == got


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_native_conformance(case: Case) -> None:
    p = execute(case)
    ctx = f"{case.id}\nexit {p.returncode}\nstdout {p.stdout[:2000]!r}\nstderr {p.stderr[-2000:]!r}"
    if case.kind == "usage":
        assert p.returncode == CLI["exit_codes"]["usage"], ctx
        assert p.stdout == "", ctx
        lines = [line for line in p.stderr.splitlines() if line.strip()]
        assert len(lines) == 1 and lines[0].startswith("error: "), ctx
        for m in case.mentions:
            assert m in lines[0], f"the error line should name {m!r}\n{ctx}"
    elif case.kind == "run":
        assert p.returncode == CLI["exit_codes"]["ok"], ctx
        rec = one_json_line(p)
        errors = sorted(RECORD.iter_errors(rec), key=lambda e: list(e.path))
        assert not errors, "record does not validate:\n" + "\n".join(e.message for e in errors[:5]) + f"\n{ctx}"
        assert rec["benchmark"] == case.benchmark and rec["language"] == case.language, ctx
        if case.variant is not None:
            assert rec["variant"] == case.variant, ctx
        # Under fair the record's params are the command line's (defaults filled in);
        # paper and mixed may report what their knobs changed (e.g. payload).
        if case.variant in (None, "fair"):
            for param, value in case.params.items():
                assert same(value, rec["params"].get(param)), f"params.{param}: want {value!r}\n{ctx}"
        assert rec["validation"]["ok"] is True, ctx
    elif case.kind == "version":
        assert p.returncode == 0, ctx
        rec = one_json_line(p)
        errors = list(VERSION.iter_errors(rec))
        assert not errors, "--version does not validate: " + "; ".join(e.message for e in errors[:5]) + f"\n{ctx}"
        assert rec["language"] == case.language, ctx
    elif case.kind == "help":
        assert p.returncode == 0, ctx
        for bench in CLI["languages"][case.language]["benchmarks"]:
            assert bench in p.stdout, f"--help does not mention {bench}\n{ctx}"
    else:
        pytest.fail(f"unknown case kind {case.kind}")
