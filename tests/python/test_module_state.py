"""No module-level mutable registry and no constant computed at import from the spec or the
plug-ins: what a benchmark or a language is comes from a call, so a plug-in or a spec
entry added after import (a test's toy, a notebook's fork) is seen without resetting
anything.

The scan is of the syntax: a module-level name bound to a container (a literal, a
comprehension, dict(), list(), set(), defaultdict(), a dataclass instance) that some code
in the same module mutates (item assignment, .append/.update/..., `global`), and a
module-level name bound to a call into the catalog, the contract or the plug-ins. The
registries that remain are listed below; the list may only shrink."""

from __future__ import annotations

import ast

from serverbench import paths

PACKAGE = paths.repo_root() / "src" / "python" / "serverbench"
MUTATORS = {"append", "extend", "insert", "update", "setdefault", "add", "pop", "popitem", "clear", "remove", "discard"}
CONTAINER_CALLS = {"dict", "list", "set", "defaultdict", "OrderedDict", "Counter", "deque"}
SPEC_READERS = {"catalog", "contract", "plugins", "search", "profiles"}
# registries left (module, name): none (the catalog's objects are memoised per parsed spec)
STILL_REGISTRIES: set[tuple[str, str]] = set()


def _root(node: ast.AST) -> str | None:
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _is_container(value: ast.AST) -> bool:
    if isinstance(value, (ast.Dict, ast.List, ast.Set, ast.DictComp, ast.ListComp, ast.SetComp)):
        return True
    if isinstance(value, ast.Call):
        f = value.func
        name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
        return name in CONTAINER_CALLS or (name[:1] == "_" and name[1:2].isupper())  # _Registry()
    return False


def _module_names(tree: ast.Module):
    for node in tree.body:
        targets = (
            node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        )
        for t in targets:
            if isinstance(t, ast.Name) and getattr(node, "value", None) is not None:
                yield t.id, node.value


def _mutated(tree: ast.Module) -> set[str]:
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Global):
            out.update(node.names)
        elif isinstance(node, (ast.Assign, ast.AugAssign, ast.Delete)):
            for t in node.targets if isinstance(node, (ast.Assign, ast.Delete)) else [node.target]:
                if isinstance(t, (ast.Subscript, ast.Attribute)):
                    out.add(_root(t))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in MUTATORS:
            out.add(_root(node.func.value))
    out.discard(None)
    return out


def _scan():
    registries, computed = set(), set()
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        tree = ast.parse(path.read_text(encoding="utf-8"))
        mutated = _mutated(tree)
        for name, value in _module_names(tree):
            if _is_container(value) and name in mutated:
                registries.add((rel, name))
            calls = [n for n in ast.walk(value) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)]
            # a function of theirs (a class, such as plugins.Declared or catalog.StyleMap's
            # lazy view, builds a value and reads nothing)
            if any(_root(c.func) in SPEC_READERS and c.func.attr[:1].islower() for c in calls):
                computed.add((rel, name))
    return registries, computed


def test_no_new_module_level_registry():
    registries, _ = _scan()
    assert registries <= STILL_REGISTRIES, sorted(registries - STILL_REGISTRIES)


def test_the_list_of_remaining_registries_is_not_stale():
    registries, _ = _scan()
    assert STILL_REGISTRIES <= registries, f"gone, take them off the list: {sorted(STILL_REGISTRIES - registries)}"


def test_nothing_is_computed_at_import_from_the_spec_or_the_plug_ins():
    _, computed = _scan()
    assert not computed, sorted(computed)


def test_the_scan_finds_a_registry_and_an_import_time_constant():
    """The positive control: a module with both is caught."""
    tree = ast.parse("_THINGS = {}\nKNOWN = catalog.languages()\ndef register(x):\n    _THINGS[x.name] = x\n")
    assert "_THINGS" in _mutated(tree) and _is_container(dict(_module_names(tree))["_THINGS"])
    value = dict(_module_names(tree))["KNOWN"]
    assert _root(value.func) == "catalog"
