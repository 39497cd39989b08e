"""The quick first pass of serverbench.rawdata.records (fastjsonschema, compiled as draft-07, before
jsonschema): it may only accept what jsonschema accepts; what it rejects goes to jsonschema.

Compared with jsonschema on every keyword the two schemas use (small schemas), on a sample
of the committed raw lines (one per benchmark, language and status) and on ~800 mutations
of them: a value of another type, a key removed or added, a number nudged, a string changed."""

from __future__ import annotations

import functools
import json
import random
import subprocess
from pathlib import Path

import jsonschema
import pytest

from serverbench.rawdata import quick as records_quick
from serverbench.rawdata import records, sweepfiles

ROOT = Path(__file__).resolve().parents[2]
DRAFT = "https://json-schema.org/draft/2020-12/schema"


def _quick(schema, instance) -> bool:
    """The quick first pass records use, compiled from `schema` as records compiles its own."""
    return records_quick.compile_check(schema)(instance)


def _slow(schema: dict, instance) -> bool:
    return jsonschema.Draft202012Validator(schema).is_valid(instance)


KEYWORD_CASES = [
    ({"type": "integer"}, [1, 1.0, 1.5, True, "1", None, -3]),
    ({"type": "number"}, [1, 1.5, True, "1", None]),
    ({"type": ["string", "null"]}, ["a", None, 0, False]),
    ({"type": "object"}, [{}, [], "x"]),
    ({"type": "array"}, [[], {}, "x"]),
    ({"type": "boolean"}, [True, False, 0, 1]),
    ({"const": 1}, [1, 1.0, True, "1", 2]),
    ({"const": False}, [False, 0, 0.0, None]),
    ({"const": [1, {"a": True}]}, [[1, {"a": True}], [1.0, {"a": True}], [1, {"a": 1}], [True, {"a": True}], [1]]),
    ({"enum": ["a", 2, None]}, ["a", 2, 2.0, None, "b", False]),
    ({"minimum": 0, "exclusiveMinimum": -1, "maximum": 5}, [0, 5, 5.0, -0.5, 6, "x", True, None]),
    ({"exclusiveMinimum": 0}, [0, 0.0, 1e-9, -1]),
    ({"minLength": 2}, ["ab", "abc", "a", "é" * 2, 5]),
    ({"pattern": "^[a-z]+-\\d{8}T"}, ["ab-20260101T", "x ab-20260101T", "AB-20260101T", 7]),
    ({"items": {"type": "integer"}, "minItems": 1, "maxItems": 2}, [[1], [1, 2], [], [1, 2, 3], [1, "a"], "x"]),
    ({"items": False}, [[], [1]]),
    ({"required": ["a", "b"]}, [{"a": 1, "b": 2}, {"a": 1}, [], "ab"]),
    (
        {"properties": {"a": {"type": "integer"}}, "additionalProperties": False},
        [{"a": 1}, {}, {"a": "x"}, {"b": 1}, {"a": 1, "b": 2}],
    ),
    ({"properties": {"a": True}, "additionalProperties": {"type": "string"}}, [{"a": 1, "b": "x"}, {"b": 2}]),
    (
        {"oneOf": [{"type": "integer"}, {"type": "number", "minimum": 2}]},
        [1, 2, 2.5, 3, "x", 0.5],
    ),
    ({"allOf": [{"minimum": 1}, {"maximum": 3}]}, [2, 0, 4]),
    (
        {"if": {"properties": {"k": {"const": "a"}}}, "then": {"required": ["x"]}},
        [{"k": "a", "x": 1}, {"k": "a", "y": 1}, {"k": "b", "y": 1}, {"k": "b", "x": 1}, {}],
    ),
    ({"then": {"required": ["x"]}}, [{}]),  # then without if: nothing
    ({"type": "string", "description": "a note", "title": "t"}, ["a", 1]),
    (
        {"$defs": {"pos": {"type": "integer", "minimum": 1}}, "properties": {"n": {"$ref": "#/$defs/pos"}}},
        [{"n": 1}, {"n": 0}, {"n": "1"}, {}],
    ),
    ({"$defs": {"t": {"items": {"$ref": "#/$defs/t"}}}, "$ref": "#/$defs/t"}, [[], [[[]]], [1], [[1]]]),
]


@pytest.mark.parametrize(("schema", "instances"), KEYWORD_CASES)
def test_each_keyword_gives_jsonschemas_verdict(schema, instances):
    schema = {"$schema": DRAFT, **schema}
    for x in instances:
        quick, slow = _quick(schema, x), _slow(schema, x)
        if quick != slow and (schema.get("const"), x) in CONSERVATIVE:
            assert slow and not quick  # rejected by the quick pass: jsonschema decides
        else:
            assert quick == slow, (schema, x)


# Where fastjsonschema is stricter than jsonschema (safe: its "invalid" goes to jsonschema):
# a compound const compared by Python equality of the whole value, types included.
CONSERVATIVE = [([1, {"a": True}], [1, {"a": True}]), ([1, {"a": True}], [1.0, {"a": True}])]


@pytest.mark.parametrize(
    "schema",
    [
        {"format": "date-time"},
        {"patternProperties": {"^a": {}}, "additionalProperties": False},
        {"prefixItems": [{}], "items": False},
        {"uniqueItems": True},
        {"not": {"type": "string"}},
        {"anyOf": [{"type": "string"}, {"minimum": 3}]},
        {"dependentRequired": {"a": ["b"]}},
        {"properties": {"a": {"unevaluatedProperties": False}}},
    ],
)
def test_a_keyword_outside_the_shared_set_leaves_the_verdict_to_jsonschema(schema):
    schema = {"$schema": DRAFT, **schema}
    for x in ({"a": "x"}, {"a": 1, "b": 2}, ["x", "x"], "2026-01-01T00:00:00Z", 1):
        assert _quick(schema, x) is False  # not accepted: jsonschema decides


def test_python_values_that_json_loads_never_returns_go_to_jsonschema():
    from decimal import Decimal

    rec = {"benchmark": "spawn", "params": (1, 2)}  # a tuple: not what json.loads returns
    assert not records._plain_finite(rec) and not records._plain_finite({"x": Decimal(1)})
    assert not records._plain_finite({1: "key not a string"}) and not records._plain_finite([float("nan")])


@functools.cache
def _committed_sample() -> list[dict]:
    """One committed raw line per (benchmark, language, status): every native branch and
    the raw schema's conditional parts, at a few hundred lines instead of ~30,000."""
    files = subprocess.run(
        ["git", "-C", str(ROOT), "ls-files", "data/raw/*/runs*.jsonl*"], capture_output=True, text=True, check=True
    ).stdout.split()
    seen: dict[tuple, dict] = {}
    for f in (f for f in files if sweepfiles.is_raw_log_name(Path(f).name)):  # sealed (.gz) or not
        with sweepfiles.open_raw(ROOT / f) as raw:
            text = raw.read().decode("utf-8")
        for line in text.splitlines():
            if not line.strip():
                continue
            rec = json.loads(line)
            key = (rec.get("benchmark"), rec.get("language"), rec.get("status"), rec.get("search") is not None)
            seen.setdefault(key, rec)
    assert len(seen) > 30, sorted(seen)
    return list(seen.values())


def _both(rec) -> tuple[bool, bool]:
    """(the quick verdict, jsonschema's) on a whole raw line, native part included."""
    raw = records.load_schema(records.RAW_SCHEMA)
    native = records.load_schema(records.NATIVE_SCHEMA)
    slow = records._validator(records.RAW_SCHEMA).is_valid(rec)
    quick = records._quick_check(records.RAW_SCHEMA)(rec)
    if isinstance(rec, dict) and rec.get("metrics") is not None and all(k in rec for k in records.NATIVE_KEYS):
        part = {k: rec[k] for k in records.NATIVE_KEYS}
        slow = slow and records._validator(records.NATIVE_SCHEMA).is_valid(part)
        quick = quick and records._quick_check(records.NATIVE_SCHEMA)(part)
    assert raw["$schema"] == native["$schema"] == DRAFT
    return quick, slow


def test_the_committed_lines_are_accepted_by_the_quick_check_alone():
    sample = _committed_sample()
    for rec in sample:
        assert _both(rec) == (True, True), (rec["config_id"], rec["status"])
        assert records.raw_errors(rec) is None


def _leaves(obj, path=()):
    if isinstance(obj, dict):
        yield path, obj
        for k, v in obj.items():
            yield from _leaves(v, (*path, k))
    elif isinstance(obj, list):
        yield path, obj
        for i, v in enumerate(obj):
            yield from _leaves(v, (*path, i))
    else:
        yield path, obj


def _mutations(rec: dict, rng: random.Random, n: int):
    nodes = list(_leaves(rec))
    for _ in range(n):
        path, value = rng.choice(nodes)
        new = json.loads(json.dumps(rec))
        parent = new
        for p in path[:-1]:
            parent = parent[p]
        what = rng.randrange(6)
        if not path:
            new["unexpected_key"] = 1
        elif what == 0 and isinstance(parent, dict):
            del parent[path[-1]]
        elif what == 1 and isinstance(value, dict):
            value = dict(value, unexpected_key=rng.choice([None, 0, "x"]))
            parent[path[-1]] = value
        elif what == 2 and isinstance(value, (int, float)) and not isinstance(value, bool):
            parent[path[-1]] = rng.choice([-value - 1, 0, float(value), value + 0.5, -1e-9, 2**63])
        elif what == 3 and isinstance(value, str):
            parent[path[-1]] = rng.choice(["", value + "x", value.upper(), "fair", "erlang", "ok", "timeout"])
        else:
            parent[path[-1]] = rng.choice([None, True, False, 0, 1, 1.0, 2.5, "", "x", [], {}, [1], {"a": 1}])
        yield new


@pytest.mark.slow  # ~30 s (8 mutations of each of ~50 lines, both validators): not in the unit tier
def test_mutated_lines_get_jsonschemas_verdict():
    rng = random.Random(41)
    sample = _committed_sample()
    outcomes = {(True, True): 0, (False, False): 0, (False, True): 0}
    for rec in sample:
        for m in _mutations(rec, rng, 8):
            quick, slow = _both(m)
            assert slow or not quick, json.dumps(m)[:3000]  # never accepts what jsonschema rejects
            outcomes[(quick, slow)] += 1
            if quick:
                assert records.raw_errors(m) is None
            else:
                assert (records.raw_errors(m) is None) == slow
    # the quick pass agrees almost always (else the speed-up is gone), on both verdicts
    assert outcomes[(False, True)] < 0.05 * sum(outcomes.values()), outcomes
    assert outcomes[(True, True)] > 50 and outcomes[(False, False)] > 200, outcomes
