"""The record schemas' lists that spec/cli.json owns, generated into them (generate.py):
the `language` enum of both schemas (spec/native-record.schema.json's $defs.language,
spec/raw-record.schema.json's properties.language) and the raw schema's `benchmark` enum.
A new language or benchmark is a spec entry; `python -m serverbench docs` writes it into
the schemas, and `docs --check` (tests/python/test_docs.py) fails while they differ.

The schemas are hand-formatted JSON (one property a line), so the enum is replaced in
place in the text, the rest of the file byte for byte as it was."""

from __future__ import annotations

import json
import re

from serverbench import catalog
from serverbench.rawdata.columns import Col

NATIVE = "spec/native-record.schema.json"
RAW = "spec/raw-record.schema.json"


def _enum(name: str) -> re.Pattern:
    # `"<name>": {... "enum": [...]` on one line; "server_language" does not match "language"
    return re.compile(r'(?<![\w])("' + name + r'": \{[^{}\n]*?"enum": )\[[^\]\n]*\]')


def enums(rel: str) -> dict[str, list[str]]:
    """{property: its values} that spec/cli.json gives the schema at `rel`."""
    out = {"language": list(catalog.presentation_order())}
    if rel == RAW:
        out[Col.benchmark] = [b.id for b in catalog.benchmarks()]
    return out


def generate(rel: str, text: str) -> str:
    """The schema's text with every enum of enums(rel) written from the spec; a schema
    without one of them is an error (the generator and the schema have drifted)."""
    for name, values in enums(rel).items():
        text, n = _enum(name).subn(lambda m: m.group(1) + json.dumps(values), text)  # noqa: B023
        if n != 1:
            raise ValueError(f'{rel}: expected one "{name}" enum on one line, found {n}')
    return text
