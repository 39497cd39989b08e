"""The in-process half of the conformance suite, in the unit tier: the case file that the
language suites read is current, and the Python echo servers' parser meets every usage
case of its languages (the native languages run theirs in their own test suites)."""

from __future__ import annotations

import contextlib
import importlib
import io
import json
import sys

import pytest

from .cases import PARSER_CASES, ROOT, load_cli, parser_cases_text

CLI = load_cli()
PY_SERVERS = [lang for lang, spec in CLI["languages"].items() if spec["executable"].startswith("src/python_servers/")]


def test_the_case_file_is_generated_from_the_current_cli_json():
    assert PARSER_CASES.read_text() == parser_cases_text(), (
        f"{PARSER_CASES.relative_to(ROOT)} is stale: run python3 tests/python/conformance/cases.py"
    )


def test_every_language_has_cases_of_each_kind_it_can_have():
    doc = json.loads(PARSER_CASES.read_text())
    assert set(doc["languages"]) == set(CLI["languages"])
    for lang, kinds in doc["languages"].items():
        assert kinds["usage"], lang
        has_plain = any("roles" not in CLI["benchmarks"][b] for b in CLI["languages"][lang]["benchmarks"])
        assert bool(kinds["valid"]) == has_plain, lang


@pytest.fixture(scope="module")
def py_main():
    sys.path.insert(0, str(ROOT / "src" / "python_servers"))
    try:
        yield importlib.import_module("main")
    finally:
        sys.path.remove(str(ROOT / "src" / "python_servers"))
        sys.modules.pop("main", None)


@pytest.mark.parametrize("lang", PY_SERVERS)
def test_python_servers_refuse_every_usage_case_in_process(py_main, lang):
    cases = json.loads(PARSER_CASES.read_text())["languages"][lang]["usage"]
    usage = CLI["exit_codes"]["usage"]
    wrong = []
    for case in cases:
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = py_main.main([lang, *case["args"]])
        lines = [line for line in err.getvalue().splitlines() if line.strip()]
        if code != usage or out.getvalue() or len(lines) != 1 or not lines[0].startswith("error: "):
            wrong.append(f"{case['args']}: exit {code}, stdout {out.getvalue()!r}, stderr {err.getvalue()!r}")
        elif missing := [m for m in case["mentions"] if m not in lines[0]]:
            wrong.append(f"{case['args']}: {lines[0]!r} does not name {missing}")
    assert not wrong, f"{len(wrong)} of {len(cases)} usage cases of {lang} fail:\n" + "\n".join(wrong)
