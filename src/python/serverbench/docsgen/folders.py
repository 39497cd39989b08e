"""The README's map of the tree (the generated block `readme-folders`): each folder of src/
with its languages, benchmarks and program, each sub-package of the Python package with
the first sentence of its docstring, each document and notebook with its first heading,
all read from the tree and spec/cli.json so that the map cannot drift from it."""

from __future__ import annotations

import json
import re
from pathlib import Path

from serverbench.docsgen.markdown import ROOT, load_cli, md_table
from serverbench.rawdata.columns import Col


def _first_heading(text: str) -> str:
    """The first Markdown heading of text, without its #s ("" if none); fenced code skipped."""
    fenced = False
    for line in text.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and re.match(r"#+ ", line):
            return line.lstrip("#").strip()
    return ""


def _notebook_heading(path: Path) -> str:
    """Its title (metadata.title: the report notebook displays its own per report, from code),
    else its first Markdown heading."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    if nb.get("metadata", {}).get("title"):
        return str(nb["metadata"]["title"])
    for cell in nb.get("cells", []):
        if cell.get("cell_type") == "markdown":
            src = cell.get(Col.source, "")
            heading = _first_heading("".join(src) if isinstance(src, list) else src)
            if heading:
                return heading
    return ""


def _first_sentence(doc: str | None) -> str:
    """The first sentence of a docstring's first paragraph, on one line."""
    para = " ".join((doc or "").strip().split("\n\n")[0].split())
    return re.split(r"(?<=\.)\s", para)[0].rstrip(".")


def _code(names: list[str]) -> str:
    return ", ".join(f"`{n}`" for n in names)


def gen_readme_folders() -> str:
    """The folders of the tree: every src/<folder> with the languages spec/cli.json builds
    there, the Python package's sub-packages, the docs and notebooks with their first
    headings, and the profiles. Paths are relative to the repository; sorted by name."""
    import ast

    from serverbench import contract

    cli = load_cli()
    by_folder: dict[str, list[str]] = {}
    for lang in contract.languages():
        exe = Path(cli[Col.languages][lang].get("executable", ""))
        if len(exe.parts) > 2 and exe.parts[0] == "src":
            by_folder.setdefault(exe.parts[1], []).append(lang)
    src_rows = []
    for d in sorted(p for p in (ROOT / "src").iterdir() if p.is_dir() and not p.name.startswith((".", "_"))):
        langs = by_folder.get(d.name, [])
        benches = [b for b in contract.benchmarks() if any(contract.implements(lang, b) for lang in langs)]
        exes = list(dict.fromkeys(f"`{cli[Col.languages][lang]['executable']}`" for lang in langs))
        packages = sorted(p.parent.name for p in d.glob("*/__init__.py"))
        if langs:
            row = [_code(langs), ", ".join(benches), ", ".join(exes)]
        elif packages:
            row = ["", "", "the Python package " + _code(packages) + " (next table)"]
        else:
            row = ["", "", ""]
        src_rows.append([f"`src/{d.name}/`", *row])

    pkg = ROOT / "src" / "python" / "serverbench"
    pkg_rows = []
    for d in sorted(p for p in pkg.iterdir() if p.is_dir() and (p / "__init__.py").exists()):
        doc = ast.get_docstring(ast.parse((d / "__init__.py").read_text(encoding="utf-8")))
        pkg_rows.append([f"`{d.name}/`", _first_sentence(doc)])
    profiles = sorted(p.stem for p in (pkg / "profiles").glob("*.toml"))
    pkg_rows.append(["`profiles/`", "the profiles (TOML, above): " + _code(profiles)])

    doc_rows = [
        [f"`docs/{p.name}`", _first_heading(p.read_text(encoding="utf-8"))]
        for p in sorted((ROOT / "docs").glob("*.md"))
    ]
    nb_rows = [
        [f"`{p.relative_to(ROOT).as_posix()}`", _notebook_heading(p)]
        for p in sorted([*(ROOT / "notebooks").glob("*.ipynb"), *(ROOT / "notebooks").glob("[!.]*/*.ipynb")])
    ]
    return "\n\n".join(
        [
            md_table(["folder", "languages (spec/cli.json)", "benchmarks", "program"], src_rows),
            md_table(["`src/python/serverbench/`", "what (the sub-package's docstring)"], pkg_rows),
            md_table(["document", "its first heading"], doc_rows),
            md_table(["notebook", "its first heading"], nb_rows),
        ]
    )
