"""The catalog: languages and benchmarks as typed objects, built from spec/cli.json and the
benchmark packages, rebuilt only when the contract is another object."""

from __future__ import annotations

import copy
import dataclasses

import pytest

from serverbench import catalog, contract


def test_the_paper_languages_are_the_specs_flagged_ones_in_order():
    spec = contract.cli_contract()["languages"]
    assert set(catalog.paper_languages()) == {k for k, v in spec.items() if v.get("paper")}
    assert len(catalog.paper_languages()) == 3
    orders = [catalog.language(x).order for x in catalog.paper_languages()]
    assert orders == sorted(orders)


def test_every_language_has_its_label_and_a_distinct_order():
    langs = catalog.languages()
    assert [x.id for x in langs] == list(contract.languages())
    assert len({x.order for x in langs}) == len(langs)
    for x in langs:
        assert x.label == contract.language(x.id)["plot"]["label"]
    with pytest.raises(dataclasses.FrozenInstanceError):
        langs[0].order = 0  # type: ignore[misc]


def test_ordered_puts_a_setting_after_its_language_and_unknown_ones_last():
    first, second = catalog.presentation_order()[:2]
    assert catalog.ordered({"zz_new", second, f"{first}[x=y]", first}) == [first, f"{first}[x=y]", second, "zz_new"]


def test_a_port_costs_what_its_original_costs():
    ports = [x for x in catalog.languages() if x.port_of != x.id]
    assert ports
    for x in ports:
        original = catalog.language(x.port_of)
        for bench in ("pingping", "spawn"):
            assert x.cost_factor(bench, default=7) == original.cost_factor(bench, default=7)


def test_a_language_without_a_factor_gets_the_models_default():
    spec = contract.cli_contract()["languages"]
    plain = next(k for k, v in spec.items() if "echo_flood" not in v.get("cost_factor", {}) and "port_of" not in v)
    assert catalog.language(plain).cost_factor("echo_flood", default=4) == 4


def test_benchmarks_come_in_their_packages_order_with_their_family():
    benches = catalog.benchmarks()
    assert {b.id for b in benches} == set(contract.benchmarks())
    assert [b.order for b in benches] == sorted(b.order for b in benches)
    for b in benches:
        assert b.family == ("socket" if contract.roles(b.id) else "process")
        assert b.parameters == contract.profile_params(b.id)
        assert b.cost is not None and (hasattr(b.cost, "run_s") or hasattr(b.cost, "socket_run_s"))


def test_an_option_is_found_by_name_with_its_choices():
    o = catalog.option("spawn_metric")
    assert o.default in o.choices and len(o.choices) >= 2
    assert catalog.option_defaults()["spawn_metric"] == o.default
    with pytest.raises(KeyError, match="no benchmark declares"):
        catalog.option("no_such_option")


def test_the_paper_figures_answer_to_their_short_names():
    names = catalog.figure_names()
    assert sorted(names) == ["fig3", "fig4", "fig5"]
    assert all(v.startswith(k + "_") for k, v in names.items())


def test_an_overridden_spec_gets_its_own_objects(monkeypatch):
    spec = copy.deepcopy(contract.cli_contract())
    spec["languages"]["toy_lang"] = {"plot": {"label": "Toy"}, "order": 0, "paper": True, "benchmarks": ["pingping"]}
    monkeypatch.setattr(contract, "cli_contract", lambda: spec)
    assert catalog.paper_languages()[0] == "toy_lang" and len(catalog.paper_languages()) == 4
    assert catalog.language("toy_lang").label == "Toy"
    monkeypatch.undo()
    assert "toy_lang" not in catalog.paper_languages()


def test_an_unknown_language_or_benchmark_is_named():
    with pytest.raises(ValueError, match="unknown language 'klingon'"):
        catalog.language("klingon")
    with pytest.raises(ValueError, match="unknown benchmark 'nope'"):
        catalog.benchmark("nope")


def test_the_command_line_takes_a_benchmarks_option_and_judges_by_it(tmp_path):
    """`claims --spawn-metric` (the spawn package's option, a flag generated from the
    catalog) judges the spawn claims by the chosen time and writes the tables beside them."""
    import io

    import pandas as pd

    import synthetic_sweeps
    from serverbench import cli
    from serverbench.analysis.reading import synthetic

    o = catalog.option("spawn_metric")
    other = next(c for c in o.choices if c != o.default)
    recs = synthetic_sweeps.paper_like_sweep(trials=8)
    for r in recs:  # the other time too, half the default one
        if r["benchmark"] == "spawn" and r["metrics"]:
            r["metrics"][other] = r["metrics"][o.default] / 2
    P = synthetic.processed_from(recs, tmp_path)
    out, err = io.StringIO(), io.StringIO()
    assert cli.run(["claims", str(P.folder), "--spawn-metric", other], out, err) in (0, 1), err.getvalue()
    evidence = pd.read_csv(P.folder / "claims_evidence.csv")
    spawn_rows = evidence[evidence["claim"] == "C4"]
    assert not spawn_rows.empty and spawn_rows["comparison"].str.contains(other).all()
    assert cli.run(["claims", str(P.folder), "--spawn-metric", "wall_s"], out, err) == 2


def test_a_language_carries_its_command_environment_settings_and_role_from_the_spec():
    """What the harness, the teaching labs and the IM tables read of a language: the typed
    object's fields, each the spec entry's value (none asks contract.language for a key)."""
    spec = contract.cli_contract()["languages"]
    for lang in catalog.languages():
        entry = spec[lang.id]
        assert lang.command == tuple(entry["command"]) and dict(lang.env) == entry.get("env", {})
        assert dict(lang.setting_defaults) == {k: v.get("default") for k, v in entry.get("settings", {}).items()}
        assert lang.jdk == entry.get("jdk") and lang.build == entry.get("build", "scripts/build.sh")
    assert catalog.language("go").env and dict(catalog.language("go").setting_defaults)["gc"]
    assert {x.id for x in catalog.languages() if x.production} == {"ngircd", "inspircd"}
    assert catalog.language("java_vthreads").jdk == 25
