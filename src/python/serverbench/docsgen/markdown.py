"""Markdown for the generated docs (generate.py, folders.py): a table from rows, a cell
from any JSON value, and the spec they are generated from."""

from __future__ import annotations

import json

from serverbench import paths

ROOT = paths.code_root()


def load_cli() -> dict:
    return json.loads((ROOT / "spec" / "cli.json").read_text(encoding="utf-8"))


def md_cell(v) -> str:
    if v is None:
        return ""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, list):
        return ", ".join(md_cell(x) for x in v)
    if isinstance(v, dict):
        return "; ".join(f"{k}: {md_cell(x)}" for k, x in v.items())
    return str(v).replace("|", "\\|").replace("\n", " ")


def md_table(header: list[str], rows: list[list]) -> str:
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(md_cell(c) for c in r) + " |" for r in rows]
    return "\n".join(out)
