"""docs/extending.md, walked: a toy benchmark defined in this test's folder, as a package
dropped beside the others, appears in the plan (with its own cost), the processed tables,
a figure, the claims and the explorer without editing any generic code. The spec edits a
real benchmark makes (spec/cli.json, the two record schemas, and its claims' entries in
spec/protocol.json: their words and yes regions) are made here to in-memory copies;
everything else is the package."""

from __future__ import annotations

import copy
import sys
import textwrap
from pathlib import Path

import pytest

from serverbench import benchmarks, contract, plugins, protocol, records
from serverbench.analysis.claims import engine, regime, tables
from serverbench.analysis.explorer import explore
from serverbench.analysis.reading import registry, synthetic
from serverbench.harness import plan as plan_mod
from serverbench.harness import profiles

TOY = {
    "__init__.py": '''
        """Toy: a number of units of nothing, timed (a test's benchmark, docs/extending.md)."""

        ORDER = 50
        ANALYSIS = ("tables", "figures", "claims")
    ''',
    "tables.py": """
        from serverbench.analysis.reading import registry

        registry.table(registry.TableSpec("toy", "toy", ("variant", "cores", "units"), ("elapsed_s",), "elapsed_s"))
    """,
    "figures.py": """
        import matplotlib.pyplot as plt

        from serverbench.analysis.reading import registry
        from serverbench.analysis.plotting.figstyle import color


        @registry.figure("fig_toy", title="Toy: time against n", tables=("toy",), order=90)
        def fig_toy(P, languages=None, show_reference=True, **_):
            s = P.stat("toy", "elapsed_s")
            if s.empty:
                return None
            fig, ax = plt.subplots()
            for lang, g in s.groupby("language"):
                ax.plot(g["units"], g["median"], "o-", color=color(lang), label=lang)
            ax.legend()
            return fig
    """,
    "claims.py": """
        from serverbench.analysis.claims import Claim, Needs, register
        from serverbench.analysis.claims.compare import ratio_between_languages


        def go_faster(data):
            d = data.values
            ns = sorted(set(d["units"]))
            return [ratio_between_languages(d, "go", "erlang", {"units": n}, data.region("X1")) for n in ns]


        register(Claim(id="X1", needs=Needs("toy", "elapsed_s", languages=("go", "erlang")), compare=go_faster))
    """,
    "cost.py": """
        def run_s(language, params):
            return 0.5 * params["units"]
    """,
}


@pytest.fixture
def toy(tmp_path, monkeypatch):
    root = tmp_path / "more_benchmarks"
    (root / "toy").mkdir(parents=True)
    for name, text in TOY.items():
        (root / "toy" / name).write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    registry.load()  # every real benchmark first; the toy joins them, and leaves after the test
    for obj, attr in ((registry.REG, "tables"), (registry.REG, "figures"), (registry.REG, "sections")):
        monkeypatch.setattr(obj, attr, dict(getattr(obj, attr)))
    monkeypatch.setattr(engine, "_CLAIMS", dict(engine._CLAIMS))
    monkeypatch.setattr(regime, "REGIMES", dict(regime.REGIMES))
    monkeypatch.setattr(plugins, "_LOADED", list(plugins._LOADED))
    monkeypatch.setattr(plugins, "_PARTS", {})
    monkeypatch.setattr(benchmarks, "__path__", [*benchmarks.__path__, str(root)])
    # the spec edits of a new benchmark: spec/cli.json and the raw and native record schemas
    spec = copy.deepcopy(contract.cli_contract())
    spec["benchmarks"]["toy"] = {
        "summary": "n units of nothing",
        "flags": {"--units": {"param": "units", "type": "int", "min": 1, "max": 1000, "required": True}},
    }
    for lang in ("go", "erlang"):
        spec["languages"][lang]["benchmarks"].append("toy")
    monkeypatch.setattr(contract, "cli_contract", lambda: spec)
    real_schema = records.load_schema

    def load_schema(name):
        s = copy.deepcopy(real_schema(name))
        if name == records.NATIVE_SCHEMA:
            s["$defs"]["toy"] = {"type": "object", "properties": {"benchmark": {"const": "toy"}}}
            s["oneOf"].append({"$ref": "#/$defs/toy"})
        else:
            s["properties"]["benchmark"]["enum"].append("toy")
        return s

    monkeypatch.setattr(records, "load_schema", load_schema)
    # its claim's entry in spec/protocol.json: the words and the yes region the encoding is judged by
    x1 = {
        "id": "X1",
        "source": "this test",
        "sentence": "Go finishes the toy faster than Erlang at every unit count",
        "quantity": "toy time ratio",
        "population": ["go", "erlang"],
        "deciding": "Go/Erlang at every unit count",
        "yes": {"words": "lower", "hi": [1, 0]},
    }
    real_claim = protocol.claim
    monkeypatch.setattr(protocol, "claim", lambda cid: x1 if cid == "X1" else real_claim(cid))
    records._validator.cache_clear()
    records._native_validator_for.cache_clear()
    # what profiles and the plan derive from spec/cli.json when they are imported
    monkeypatch.setattr(profiles, "BENCHMARKS", (*profiles.BENCHMARKS, "toy"))
    monkeypatch.setattr(profiles, "TOP_KEYS", profiles.TOP_KEYS | {"toy"})
    monkeypatch.setattr(profiles, "PARAM_KEYS", {**profiles.PARAM_KEYS, "toy": ("units",)})
    monkeypatch.setattr(plan_mod, "BENCHMARKS", profiles.BENCHMARKS)
    monkeypatch.setattr(plan_mod, "PARAM_KEYS", profiles.PARAM_KEYS)
    plugins.load()
    yield tmp_path
    records._validator.cache_clear()
    records._native_validator_for.cache_clear()
    for name in [m for m in sys.modules if m.startswith("serverbench.benchmarks.toy")]:
        del sys.modules[name]


def test_a_toy_benchmark_package_joins_every_stage(toy):
    assert "toy" in plugins.ids()
    # the plan: its runs, priced by its own cost model
    rounds = protocol.rounds_deciding()  # a configuration a claim decides at gets the design's rounds
    prof = profiles.resolve(
        {"name": "t", "languages": ["go", "erlang"], "toy": {"units": [10, 20], "trials": "deciding"}}
    )
    p = plan_mod.make_plan(prof)
    toy_tasks = [t for t in p.tasks if t.benchmark == "toy"]
    assert len(toy_tasks) == 2 * 2 * rounds
    t = next(t for t in toy_tasks if t.params["units"] == 20 and t.language == "go")
    assert plan_mod.estimate_task_s(t) == pytest.approx(plan_mod.STARTUP_S["go"] + 10.0)
    # the processed tables, a figure, the claims, the explorer
    recs = [
        synthetic.raw_record("toy", lang, {"units": n}, {"elapsed_s": base * n * (1 + 0.01 * k)}, trial=k + 1)
        for lang, base in (("go", 0.1), ("erlang", 0.3))
        for n in (10, 20)
        for k in range(rounds)
    ]
    P = synthetic.processed_from(recs, toy / "sweep")
    summary = P.stat("toy", "elapsed_s")
    assert sorted(set(summary["language"])) == ["erlang", "go"] and sorted(set(summary["units"])) == [10, 20]
    assert "toy" in set(P.ratios["table"])
    assert registry.load().figures["fig_toy"].draw(P) is not None
    V = engine.check_all(P)
    v = {x.id: x for x in V}
    assert v["X1"].verdict == engine.SUPPORTED, v["X1"].summary
    assert len(v["X1"].evidence) == 2 and set(v["X1"].evidence["rounds"]) == {rounds}  # one per unit count
    row = tables.claims_table(V).set_index("id").loc["X1"]  # its words are its protocol entry's
    assert row["claim"] == "Go finishes the toy faster than Erlang at every unit count"
    assert "Regions: lower: yes <= 1; no >= 1.25." in row["definition"]
    assert v["C1"].verdict == engine.NOT_TESTABLE  # the real claims are all still there
    assert (
        "toy" in explore.tables() and explore.default_metric("toy") == "elapsed_s" and explore.x_axis("toy") == "units"
    )


def test_a_benchmark_package_must_list_its_modules(tmp_path, monkeypatch):
    root = tmp_path / "pkgs"
    (root / "bad").mkdir(parents=True)
    (root / "bad" / "__init__.py").write_text('"""No ANALYSIS."""\n', encoding="utf-8")
    monkeypatch.setattr(plugins, "_LOADED", list(plugins._LOADED))
    monkeypatch.setattr(benchmarks, "__path__", [*benchmarks.__path__, str(root)])
    try:
        with pytest.raises(ImportError, match="ANALYSIS"):
            plugins.load()
    finally:
        sys.modules.pop("serverbench.benchmarks.bad", None)


def test_the_native_files_it_lists_are_recoverys_own():
    """docs/extending.md names every native file of its example benchmark, recovery: the
    list and the tree agree both ways, so the per-language count it gives is a real one."""
    import re

    root = Path(__file__).resolve().parents[2]
    doc = (root / "docs" / "extending.md").read_text(encoding="utf-8")
    native = doc[doc.index("**The native programs") : doc.index("The conformance suite picks")]
    listed = set(re.findall(r"`(src/[^`<>]*[Rr]ecovery[^`<>]*)`", native))
    sources = {".go", ".erl", ".scala", ".java", ".rs", ".c", ".js"}  # not build outputs (.class, .beam)
    skip = {"target", "_build", "node_modules", "bin"}
    files = {
        p.relative_to(root).as_posix()
        for p in (root / "src").rglob("*")
        if p.suffix in sources
        and "recovery" in p.name.lower()
        and not skip & set(p.relative_to(root).parts)
        and "python" not in p.parts
    }
    assert files, "no native recovery source under src/"
    assert listed == files, f"only in the doc: {sorted(listed - files)}; only in the tree: {sorted(files - listed)}"
