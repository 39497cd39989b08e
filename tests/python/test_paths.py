"""paths.py: the one module that knows the tree's layout."""

from __future__ import annotations

import re
from pathlib import Path

from serverbench import paths

PKG = Path(__file__).resolve().parents[2] / "src" / "python" / "serverbench"


def test_the_code_root_holds_the_contract_and_is_not_moved(tmp_path, monkeypatch):
    root = paths.code_root()
    assert (root / "spec" / "cli.json").is_file()
    monkeypatch.setenv("SERVERBENCH_ROOT", str(tmp_path))
    assert paths.code_root() == root and paths.repo_root() == tmp_path.resolve()
    assert paths.spec_dir() == root / "spec" and paths.notebooks_dir() == root / "notebooks"
    assert paths.raw_dir() == tmp_path.resolve() / "data" / "raw"


def test_the_reference_tables_stay_with_the_code_under_another_data_folder(tmp_path, monkeypatch):
    """SERVERBENCH_DATA moves what sweeps write, not the sources' published values: a data
    folder without them (a test's, a cluster's scratch) still finds every one of them."""
    monkeypatch.setenv("SERVERBENCH_DATA", str(tmp_path / "data"))
    monkeypatch.setenv("SERVERBENCH_ROOT", str(tmp_path))
    assert paths.processed_dir() == (tmp_path / "data" / "processed").resolve()
    ref = paths.reference_dir()
    assert ref == paths.code_root() / "data" / "reference"
    for name in ("paper_fig3_pingping.csv", "servers_echo_flood.csv", "servers_tcp_pingpong.csv"):
        assert (ref / name).is_file(), name


def test_no_module_but_paths_counts_parents_of_its_own_file():
    counting = re.compile(r"__file__\)[^\n]*\.parents\[")
    found = sorted(
        p.relative_to(PKG).as_posix()
        for p in PKG.rglob("*.py")
        if p.name != "paths.py" and counting.search(p.read_text(encoding="utf-8"))
    )
    assert found == []
