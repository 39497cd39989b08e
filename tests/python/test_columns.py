"""Every name in rawdata.columns.Col, and in each benchmark package's own Col beside it, is a
field of the raw or native record's JSON Schema, a column of a committed processed table or a field of a
committed sweep.json, spelt as its attribute: the namespaces cannot drift from the data they
name."""

from __future__ import annotations

import csv
import importlib
import json

import pytest

from serverbench import paths
from serverbench.rawdata.columns import Col

ROOT = paths.repo_root()


def _schema_fields(node, out: set[str]) -> set[str]:
    if isinstance(node, dict):
        for k, v in node.items():
            if k == "properties" and isinstance(v, dict):
                out.update(v)
            _schema_fields(v, out)
    elif isinstance(node, list):
        for v in node:
            _schema_fields(v, out)
    return out


def _keys(node, out: set[str]) -> set[str]:
    if isinstance(node, dict):
        out.update(node)
        node = list(node.values())
    for v in node if isinstance(node, list) else ():
        _keys(v, out)
    return out


def _processed_names() -> set[str]:
    """The columns of every committed processed table and the fields of every sweep.json."""
    out: set[str] = set()
    for p in (ROOT / "data" / "processed").rglob("*.csv"):
        with p.open(encoding="utf-8", newline="") as fh:
            out.update(next(csv.reader(fh), []))
    for p in (ROOT / "data" / "processed").glob("*/sweep.json"):
        _keys(json.loads(p.read_text(encoding="utf-8")), out)
    return out


def unknown_names(namespace: type) -> list[str]:
    """Attributes of `namespace` whose value is not their own name, or that name no raw field,
    no processed column and no sweep.json field."""
    known: set[str] = set()
    for schema in ("raw-record", "native-record"):  # the native one: each benchmark's params and metrics
        _schema_fields(json.loads((ROOT / "spec" / f"{schema}.schema.json").read_text()), known)
    known |= _processed_names()
    names = {k: v for k, v in vars(namespace).items() if not k.startswith("_")}
    return sorted(k for k, v in names.items() if v != k or v not in known)


BENCHMARK_COLUMNS = sorted(
    p.parent.name for p in (ROOT / "src" / "python" / "serverbench" / "benchmarks").glob("*/columns.py")
)


def test_every_name_is_a_raw_field_or_a_processed_column():
    assert len([k for k in vars(Col) if not k.startswith("_")]) > 100
    assert unknown_names(Col) == []


@pytest.mark.parametrize("bench", BENCHMARK_COLUMNS)
def test_a_benchmarks_own_names_are_fields_or_columns_too(bench):
    own = importlib.import_module(f"serverbench.benchmarks.{bench}.columns").Col
    assert issubclass(own, Col) and unknown_names(own) == []
    assert not set(vars(own)) & {k for k in vars(Col) if not k.startswith("_")}, "declared twice"


def test_a_misspelt_or_invented_name_is_caught():
    class Bad(Col):
        pass

    Bad.langauge = "langauge"  # type: ignore[attr-defined]
    Bad.renamed = "language"  # type: ignore[attr-defined]
    assert unknown_names(Bad) == ["langauge", "renamed"]
