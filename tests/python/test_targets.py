"""spec/targets.toml stays runnable: every target names a real language, benchmark
and metric, and its overrides are settings the harness accepts."""

import io

import pytest

from serverbench import cli, contract
from serverbench.harness import load_profile
from serverbench.paths import repo_root
from serverbench.rawdata import records
from serverbench.selfcheck import targets

FILE = repo_root() / targets.DEFAULT_FILE


def test_every_target_is_a_valid_profile_override():
    doc = targets.load_targets(FILE)
    defs = records.load_schema(records.NATIVE_SCHEMA)["$defs"]
    assert len(doc["target"]) >= 9
    for t in doc["target"]:
        assert t["language"] in contract.languages()
        prof = load_profile(doc["profile"], t.get("set", {}))  # raises on an unknown key
        assert prof[t["benchmark"]]["enabled"]
        for b in t["bounds"]:
            metric_names = set(defs[t["benchmark"]]["properties"]["metrics"]["properties"]) | {"wall_s"}
            assert b["metric"] in metric_names, (t, b)


def test_every_language_has_each_benchmark_target():
    doc = targets.load_targets(FILE)
    have = {(t["language"], t["benchmark"]) for t in doc["target"]}
    # the paper's three languages, each on every single-process benchmark it implements
    want = {
        (lang, bench)
        for lang in ("erlang", "go", "scala_akka")
        for bench in contract.language(lang)["benchmarks"]
        if contract.family(bench) == "process"
    }
    assert have >= want


def test_a_file_without_targets_is_refused(tmp_path):
    f = tmp_path / "t.toml"
    f.write_text('profile = "quick"\n')
    with pytest.raises(ValueError, match="no \\[\\[target\\]\\]"):
        targets.load_targets(f)


@pytest.mark.parametrize(
    "argv,needle",
    [
        (["targets", "--languages", "rust"], "unknown language"),
        (["targets", "--trials", "0"], "--trials"),
        (["targets", "--file", "/nonexistent.toml"], "no such targets file"),
    ],
)
def test_bad_input_is_a_usage_error(argv, needle):
    err = io.StringIO()
    assert cli.run(argv, io.StringIO(), err) == 2
    assert needle in err.getvalue()
