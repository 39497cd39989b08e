"""The quick first pass of record validation: fastjsonschema, compiled as draft-07, for
records of plain JSON types. Only its "valid" is taken: records.py sends every record it
rejects to jsonschema, the authority, which also gives the message."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import fastjsonschema


def plain_finite(obj) -> bool:
    """Whether obj holds only what json.loads returns (dicts with string keys, lists, ...)
    and no NaN or Infinity: one quick walk, for the records _finite would find nothing in."""
    t = type(obj)
    if t is dict:
        return all(type(k) is str and plain_finite(v) for k, v in obj.items())
    if t is list:
        return all(plain_finite(v) for v in obj)
    if t is float:
        return math.isfinite(obj)
    return t in _PLAIN


# A quick first pass: fastjsonschema compiles each schema into Python code (~0.2 ms a raw
# line, where jsonschema walks a record through ~10 ms of Python; `validate data/raw` over
# the committed sweeps: seconds instead of minutes). Compiled as draft-07: the two schemas
# use only keywords whose meaning draft-07 and 2020-12 share ($defs is a plain container
# reached by JSON pointer; fastjsonschema reads no 2020-12). Only its "valid" is taken as
# the verdict: a record it rejects goes to jsonschema, the authority, which also gives the
# message, so no record is accepted unless jsonschema accepts it too
# (tests/python/test_validate_fast.py compares the two on the committed data and on
# mutated records). Records of plain JSON types only (what json.loads returns).
_DRAFT_07 = "http://json-schema.org/draft-07/schema#"
_PLAIN = frozenset({dict, list, str, int, float, bool, type(None)})
_DRAFT_07_SHARED = frozenset(
    {"$defs", "$id", "$ref", "$schema", "additionalProperties", "allOf", "const", "description", "enum",
     "exclusiveMinimum", "if", "items", "maxItems", "maximum", "minItems", "minLength", "minimum", "oneOf",
     "pattern", "properties", "required", "then", "title", "type"}
)  # fmt: skip


def _keywords(schema, out: set) -> set:
    """Every keyword a schema uses (the names under properties and $defs are not keywords)."""
    if isinstance(schema, dict):
        for k, v in schema.items():
            out.add(k)
            for sub in v.values() if k in ("properties", "$defs") and isinstance(v, dict) else [v]:
                _keywords(sub, out)
    elif isinstance(schema, list):
        for sub in schema:
            _keywords(sub, out)
    return out


def compile_check(schema: dict) -> Callable[[Any], bool]:
    """True when fastjsonschema finds the record valid; False when it does not (then ask
    jsonschema), and always False for a schema using a keyword outside the shared set."""
    if not _keywords(schema, set()) <= _DRAFT_07_SHARED:
        return lambda _v: False
    draft7 = {k: v for k, v in schema.items() if k != "$id"} | {"$schema": _DRAFT_07}
    compiled = fastjsonschema.compile(draft7)

    def check(v) -> bool:
        try:
            compiled(v)
        except fastjsonschema.JsonSchemaException:
            return False
        return True

    return check
