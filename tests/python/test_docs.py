"""Docs that cannot drift: the generated tables in the docs (flags, languages, profiles,
profile settings; the README's benchmarks, profiles and folder map) equal what
`python -m serverbench docs` generates from spec/cli.json, the profile files, the harness
plan and the tree; a stale README block fails the check; and no doc points at a machine
path."""

import re
from pathlib import Path

import pytest

from serverbench.docsgen import generate as docsgen

ROOT = Path(__file__).resolve().parents[2]


def test_every_generated_block_is_present():
    assert docsgen.missing_blocks() == []


def test_generating_some_blocks_touches_only_their_files():
    gen = docsgen.generated(only=("cli-flags",))
    assert list(gen) == [ROOT / "docs/spec.md"] and gen[ROOT / "docs/spec.md"][0] == gen[ROOT / "docs/spec.md"][1]
    with pytest.raises(ValueError, match="no generated block 'cli-flag'"):
        docsgen.generated(only=("cli-flag",))


def test_committed_docs_equal_the_generated_ones():
    stale = [str(p.relative_to(ROOT)) for p, (old, new) in docsgen.generated().items() if old != new]
    assert stale == [], f"docs differ from spec/cli.json or the profiles: run `python -m serverbench docs` ({stale})"


def test_a_changed_profile_makes_the_check_fail(monkeypatch):
    real = docsgen._profiles

    def edited():
        p = real()
        p["quick"] = {**p["quick"], "description": "edited"}
        return p

    monkeypatch.setattr(docsgen, "_profiles", edited)
    assert any(old != new for old, new in docsgen.generated(only=("profiles", "profile-settings")).values())


def test_docs_name_no_machine_paths():
    docs = [*ROOT.glob("docs/*.md"), ROOT / "README.md", *ROOT.glob("src/*/README.md"), *ROOT.glob("data/*/*.md")]
    bad = []
    for p in docs:
        for m in re.finditer(r"(/work/\S+|/home/\S+|\.\./shared/\S*|/root/\S+)", p.read_text(encoding="utf-8")):
            bad.append(f"{p.relative_to(ROOT)}: {m.group(1)}")
    assert bad == []


README_BLOCKS = ("readme-benchmarks", "readme-profiles", "readme-folders")


def _block(text: str, name: str) -> str:
    begin, end = docsgen.BEGIN.format(name=name), docsgen.END.format(name=name)
    return text[text.index(begin) + len(begin) : text.index(end)]


def test_the_readme_has_its_generated_blocks():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert all(docsgen.BLOCKS[n][0] == "README.md" and docsgen.BEGIN.format(name=n) in text for n in README_BLOCKS)


def test_a_hand_edited_readme_block_is_stale():
    """An edit inside a README block is what `docs --check` reports (and `docs` undoes)."""
    committed = (ROOT / "README.md").read_text(encoding="utf-8")
    for name in README_BLOCKS:
        body = _block(committed, name)
        edited = committed.replace(body, body.replace("|---|", "|---|\n| `hand-typed` | row |", 1), 1)
        assert edited != committed
        assert docsgen.render(edited, name, docsgen.BLOCKS[name][1]()) == committed


def test_a_changed_spec_makes_the_readme_check_fail(monkeypatch, capsys):
    name, (rel, fn) = "readme-benchmarks", docsgen.BLOCKS["readme-benchmarks"]
    monkeypatch.setitem(docsgen.BLOCKS, name, (rel, lambda: fn().replace("Fig. 3", "Fig. 9")))
    gen = docsgen.generated(only=(name, "protocol-claims", docsgen.RECORD_SCHEMAS))  # the others stay fresh
    assert [p.name for p, (old, new) in gen.items() if old != new] == ["README.md"]
    monkeypatch.setattr(docsgen, "generated", lambda: gen)  # main() reports these, not a second generation
    assert docsgen.main(check=True) == 1
    assert "generated/README.md" in capsys.readouterr().out


def test_the_readme_names_every_benchmark_folder_doc_and_socket_server():
    """What the README's blocks must cover, checked against the tree, not the generator."""
    import json

    text = (ROOT / "README.md").read_text(encoding="utf-8")
    cli = json.loads((ROOT / "spec" / "cli.json").read_text(encoding="utf-8"))
    benches = _block(text, "readme-benchmarks")
    assert all(f"| `{b}` |" in benches for b in cli["benchmarks"])
    folders = _block(text, "readme-folders")
    assert all(f"`src/{d.name}/`" in folders for d in (ROOT / "src").glob("[!._]*/"))
    assert all(f"`docs/{p.name}`" in folders for p in ROOT.glob("docs/*.md"))
    assert all(
        f"`{p.relative_to(ROOT).as_posix()}`" in folders
        for p in [*ROOT.glob("notebooks/*.ipynb"), *ROOT.glob("notebooks/[!.]*/*.ipynb")]
    )
    servers = next(line for line in _block(text, "readme-profiles").splitlines() if line.startswith("| `servers`"))
    assert all(lang in servers for lang in ("c", "nodejs", "twisted", "eventlet", "python_threads", "scala_akka"))
    assert "the three native programs" not in text


def test_a_new_language_in_the_spec_makes_the_schema_check_fail(monkeypatch, capsys):
    """The record schemas' language (and raw benchmark) enums are generated from
    spec/cli.json: a language added to the spec alone leaves both schemas stale."""
    import copy
    import json

    from serverbench import contract
    from serverbench.docsgen import folders as docs_folders
    from serverbench.docsgen import schemas as docs_schemas

    spec = copy.deepcopy(contract.cli_contract())
    spec["languages"]["toy_lang"] = {"plot": {"label": "Toy"}, "benchmarks": ["pingping"]}
    monkeypatch.setattr(contract, "cli_contract", lambda: spec)
    monkeypatch.setattr(docsgen, "load_cli", lambda: spec)  # the docs' languages table sees it too
    monkeypatch.setattr(docs_folders, "load_cli", lambda: spec)
    gen = docsgen.generated(only=("languages", docsgen.RECORD_SCHEMAS))
    stale = {p.name for p, (old, new) in gen.items() if old != new}
    assert {"spec.md", "native-record.schema.json", "raw-record.schema.json"} <= stale
    monkeypatch.setattr(docsgen, "generated", lambda: gen)  # main() reports these, not a second generation
    assert docsgen.main(check=True) == 1 and "generated/spec/raw-record.schema.json" in capsys.readouterr().out
    for rel in (docs_schemas.NATIVE, docs_schemas.RAW):
        new = json.loads(docs_schemas.generate(rel, (ROOT / rel).read_text(encoding="utf-8")))
        enum = new["$defs"]["language"]["enum"] if rel == docs_schemas.NATIVE else new["properties"]["language"]["enum"]
        assert enum[-1] == "toy_lang" and set(enum) == set(spec["languages"])


def test_a_schema_without_its_enum_is_an_error():
    import pytest

    from serverbench.docsgen import schemas as docs_schemas

    with pytest.raises(ValueError, match='expected one "language" enum'):
        docs_schemas.generate(docs_schemas.NATIVE, '{"$defs": {"language": {"type": "string"}}}')
