"""Values kept under the digest of their inputs and the code (analysis/reading/cache.py)."""

from __future__ import annotations

import json
import os

import pytest

from serverbench.analysis.reading import cache


@pytest.fixture
def kept(tmp_path, monkeypatch):
    monkeypatch.setenv("SERVERBENCH_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_a_value_is_computed_once_per_inputs_and_read_back_the_same(kept):
    calls = []

    def compute():
        calls.append(1)
        return {"rows": [[1, 0.1 + 0.2, None, "a"]], "nan": float("nan")}

    inputs = [("table.csv", b"x,y\n1,2\n")]
    first = cache.json_value("toy", inputs, compute)
    again = cache.json_value("toy", inputs, compute)
    assert len(calls) == 1 and first["rows"] == again["rows"] == [[1, 0.30000000000000004, None, "a"]]
    assert first["nan"] != first["nan"] and again["nan"] != again["nan"]  # NaN survives the round trip
    (path,) = (kept / "toy").iterdir()
    assert path == cache.path_of("toy", inputs) and json.loads(path.read_text())["rows"] == first["rows"]
    # one changed byte, another kind, another name: another key, computed again
    cache.json_value("toy", [("table.csv", b"x,y\n1,3\n")], compute)
    assert len(calls) == 2
    assert cache.key("toy", inputs) != cache.key("other", inputs)
    assert cache.key("toy", inputs) != cache.key("toy", [("other.csv", b"x,y\n1,2\n")])
    # no two inputs run together into one key
    assert cache.key("toy", [("a", b"bc")]) != cache.key("toy", [("ab", b"c")])


def test_a_cache_that_cannot_be_written_is_only_missed(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("SERVERBENCH_CACHE", str(blocker))
    calls = []
    assert cache.json_value("toy", [], lambda: calls.append(1) or [1]) == [1]
    assert cache.json_value("toy", [], lambda: calls.append(1) or [1]) == [1]
    assert len(calls) == 2


def test_an_unreadable_kept_value_is_computed_again(kept):
    path = cache.path_of("toy", [])
    path.parent.mkdir(parents=True)
    path.write_text('{"torn')
    assert cache.json_value("toy", [], lambda: {"v": 2}) == {"v": 2}
    assert json.loads(path.read_text()) == {"v": 2}


def test_drawn_files_are_written_with_the_same_bytes_from_the_cache(kept, tmp_path):
    calls = []

    def draw(folder):
        calls.append(folder)
        (folder / "a.png").write_bytes(bytes(range(256)))
        (folder / "a.pdf").write_bytes(b"%PDF")
        return ["caption", "a.png"]

    for out in ("first", "second"):
        assert cache.files("toy-files", [("in", b"1")], draw, tmp_path / out) == ["caption", "a.png"]
        assert sorted(os.listdir(tmp_path / out)) == ["a.pdf", "a.png"]
        assert (tmp_path / out / "a.png").read_bytes() == bytes(range(256))
        assert (tmp_path / out / "a.pdf").read_bytes() == b"%PDF"
    assert len(calls) == 1 and not calls[0].exists()  # drawn once, in a folder since removed


def test_the_code_is_part_of_every_key(monkeypatch):
    cache.code_digest.cache_clear()
    before = cache.key("toy", [])
    monkeypatch.setattr(cache, "code_digest", lambda: "another version of the code")
    assert cache.key("toy", []) != before
