"""The generic stages name no benchmark and list no languages: what a benchmark is lives
in its package (serverbench/benchmarks/<id>/, docs/extending.md), what a language is in its
spec/cli.json entry, both read through serverbench.catalog. This test greps the harness, the
processing, the statistics, the claims engine, the report and the explorer for benchmark
ids as string literals, and every module outside benchmarks/ and teaching/ for a tuple,
list, set or dict of two or more language ids.

What is left is listed below with its count and why: a ratchet. A count may only go down
(and the list with it); a new file or a higher count fails.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from serverbench import contract

PKG = Path(__file__).resolve().parents[2] / "src" / "python" / "serverbench"
GENERIC = ("harness/**/*.py", "analysis/**/*.py", "*.py")
STILL_NAMING = {
    # Processed.spawn_max: the search's side table, read by the audit's view of a sweep
    "analysis/auditing/audit.py": 1,
    # the sources' own published numbers turned into records, each under its benchmark
    "analysis/claims/paperdata.py": 5,
    "analysis/claims/sourcedata.py": 1,
    # spawn_max.csv / spawn_max_limits.csv, written and read back beside the registered tables
    "analysis/reading/process.py": 2,
    "analysis/reading/side_tables.py": 2,
    # the tests' synthetic records of the paper's three benchmarks
    "analysis/reading/synthetic.py": 7,
    # the dimensioning experiment: its questions are the paper's three benchmarks' by design
    "analysis/reporting/dimension.py": 9,
    # the then-and-now tables: the paper's Figs. 3-5 beside ours, so their benchmarks by design
    "analysis/reporting/thenandnow.py": 12,
    # the abstract's word for Fig. 5's quantity ("throughput"), not a look-up of the benchmark
    "analysis/reporting/abstract.py": 1,
    # README's quick-vs-paper-scale disagreement: the unit a PingPing or spawn ratio is per
    "analysis/reporting/readme.py": 1,
    # the second implementation of the protocol, written from its text alone: it names each
    # claim's benchmark as the text does and must not read the package's plug-ins
    "analysis/auditing/crosscheck.py": 10,
}
LANGUAGE_LISTS = {
    # the 2026 runtimes report's questions: which runtime stands in for which paper language
    "analysis/reporting/runtimes_report.py": 6,
}


def ids() -> list[str]:
    return [*contract.benchmarks(), "spawn_max"]


def mentions(text: str) -> int:
    alternatives = "|".join(map(re.escape, ids()))
    pattern = re.compile(r"""["'](""" + alternatives + r""")["']""")
    return sum(1 for line in text.splitlines() if pattern.search(line))


def counts() -> dict[str, int]:
    out = {}
    for glob in GENERIC:
        for p in sorted(PKG.glob(glob)):
            n = mentions(p.read_text(encoding="utf-8"))
            if n:
                out[p.relative_to(PKG).as_posix()] = n
    return out


def check_ratchet(found: dict[str, int], listed: dict[str, int], name: str, grew_why: str) -> None:
    """No file above its listed count (a new file is listed at 0); none below it either, so
    that the list shrinks with the code."""
    grew = {f: n for f, n in found.items() if n > listed.get(f, 0)}
    assert not grew, f"{grew_why} ({grew})"
    shrank = {f: (listed[f], found.get(f, 0)) for f in listed if found.get(f, 0) < listed[f]}
    assert not shrank, f"fewer than listed: lower {name} (listed, found) {shrank}"


def test_the_generic_stages_name_no_new_benchmark():
    why = "generic code names a benchmark id: move it into serverbench/benchmarks/<id>/"
    check_ratchet(counts(), STILL_NAMING, "STILL_NAMING", why)


def test_the_check_finds_a_mention():
    assert mentions('x = "pingping"\ny = 1') == 1 and mentions("pingping_figures = 2") == 0


@pytest.mark.parametrize("bench", contract.benchmarks())
def test_every_benchmark_has_its_package(bench):
    from serverbench import plugins

    assert bench in plugins.ids(), f"serverbench/benchmarks/{bench}/ is missing (docs/extending.md)"


def language_lists(text: str) -> int:
    """Tuple, list, set or dict literals holding two or more language ids (spec/cli.json) as
    string constants (elements, or dict keys)."""
    langs = set(contract.languages())
    n = 0
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            items = node.elts
        elif isinstance(node, ast.Dict):
            items = [k for k in node.keys if k is not None]
        else:
            continue
        n += sum(isinstance(e, ast.Constant) and e.value in langs for e in items) >= 2
    return n


def language_list_counts() -> dict[str, int]:
    out = {}
    for p in sorted(PKG.rglob("*.py")):
        rel = p.relative_to(PKG).as_posix()
        if rel.startswith(("benchmarks/", "teaching/")):
            continue
        n = language_lists(p.read_text(encoding="utf-8"))
        if n:
            out[rel] = n
    return out


def test_no_generic_module_lists_languages():
    why = "a generic module lists languages: ask serverbench.catalog (paper_languages, ordered)"
    check_ratchet(language_list_counts(), LANGUAGE_LISTS, "LANGUAGE_LISTS", why)


def test_the_ratchet_fails_both_ways():
    with pytest.raises(AssertionError, match="names"):
        check_ratchet({"a.py": 2}, {"a.py": 1}, "L", "names")
    with pytest.raises(AssertionError, match="lower L"):
        check_ratchet({}, {"a.py": 1}, "L", "names")


def test_the_check_finds_a_language_list():
    assert language_lists('LANGS = ("go", "erlang")') == 1
    assert language_lists('X = {"erlang": 1, "go": 2}') == 1
    assert language_lists('one = ["go"]\nlabel = ("go", "Go")') == 0


# ---- string-keyed look-ups: typed values between stages instead ----------------------------
# The package's x["key"] subscripts and .get("key") calls with a literal key. A ratchet on the
# total: it may only go down (lower it when it does); the goal is below 1,000, with frozen
# typed values (catalog.Benchmark, plugins.Declared, Task) passed between the stages.
STRING_KEYS = 824


def string_keys(root: Path) -> int:
    n = 0
    for f in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(f.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
                n += isinstance(node.slice.value, str)
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get":
                n += bool(node.args) and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)
    return n


def test_string_keyed_lookups_only_go_down():
    found = string_keys(PKG)
    assert found <= STRING_KEYS, f"{found} string-keyed look-ups, more than {STRING_KEYS}: pass a typed value instead"
    assert found == STRING_KEYS, f"{found} string-keyed look-ups: lower STRING_KEYS to {found}"


def test_the_string_key_count_sees_both_forms(tmp_path):
    (tmp_path / "m.py").write_text('a = d["k"]\nb = d.get("k", 1)\nc = d[0]\ne = o.get(k)\n', encoding="utf-8")
    assert string_keys(tmp_path) == 2


def docstring_ids(tree: ast.AST) -> set[int]:
    """id() of every docstring constant in the tree (module, class and function docstrings)."""
    return {
        id(n.body[0].value)
        for n in ast.walk(tree)
        if isinstance(n, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
        and n.body
        and isinstance(n.body[0], ast.Expr)
        and isinstance(n.body[0].value, ast.Constant)
    }


def option_names_in_code(root: Path, names: set[str]) -> list[str]:
    """module:line of every parameter, keyword, variable or string constant outside a
    docstring that spells one of `names` in the modules under `root` but outside benchmarks/."""
    hits = []
    for f in sorted(root.rglob("*.py")):
        if "benchmarks" in f.relative_to(root).parts:
            continue
        tree = ast.parse(f.read_text(encoding="utf-8"))
        docs = docstring_ids(tree)
        for n in ast.walk(tree):
            spelt = (
                n.arg
                if isinstance(n, (ast.arg, ast.keyword))
                else n.id
                if isinstance(n, ast.Name)
                else n.value
                if isinstance(n, ast.Constant) and id(n) not in docs
                else None
            )
            if spelt in names:
                hits.append(f"{f.relative_to(root)}:{n.lineno}")
    return hits


def test_no_generic_module_names_a_benchmarks_option():
    """A benchmark's options (spawn's spawn_metric) reach the generic stages as one typed
    value (claims.Options), never a parameter of their own: only the benchmark's package
    and the notebooks' papermill parameters spell them."""
    from serverbench import catalog

    names = {o.name for o in catalog.options()}
    assert names, "no benchmark declares an option: the check would see nothing"
    assert option_names_in_code(PKG, names) == []


def test_the_option_check_sees_a_parameter_a_keyword_and_a_key(tmp_path):
    (tmp_path / "m.py").write_text(
        '"""spawn_metric in a docstring is prose."""\n'
        'def f(spawn_metric="x"):\n    return g(spawn_metric=1), {"spawn_metric": 2}\n',
        encoding="utf-8",
    )
    assert option_names_in_code(tmp_path, {"spawn_metric"}) == ["m.py:2", "m.py:3", "m.py:3"]
