"""spec/cli.json and the native schema describe the same records; native_args follows them."""

import copy

import pytest

from serverbench import contract
from serverbench.rawdata import records


def test_every_flag_param_is_a_schema_param_and_back():
    schema = records.load_schema(records.NATIVE_SCHEMA)["$defs"]
    for bench in contract.benchmarks():
        if contract.roles(bench):
            continue  # socket benchmarks: one $defs entry per role, checked by their own tests
        flags = contract.flags(bench).values()
        flag_params = {f.param for f in flags if f.is_param}
        knob_params = {f.param for f in flags if f.param and f.knob is not None}
        schema_params = set(schema[bench]["properties"]["params"]["properties"])
        # every parameter is required; a knob appears in params only when given explicitly
        assert set(schema[bench]["properties"]["params"]["required"]) == flag_params, bench
        assert schema_params == flag_params | knob_params, bench


def test_enums_agree_between_cli_and_schema():
    defs = records.load_schema(records.NATIVE_SCHEMA)["$defs"]
    flags = contract.flags("throughput")
    # a record may report more than a flag accepts (e.g. payload 'clone' resolved from --variant paper)
    assert set(flags["--payload"].values) <= set(defs["payload"]["enum"])
    assert set(flags["--variant"].values) <= set(defs["variant"]["enum"])
    # every language of spec/cli.json may appear in a record (the schema may name languages still being built)
    assert set(contract.cli_contract()["languages"]) == set(contract.languages()) <= set(defs["language"]["enum"])


def test_lists_come_from_cli_json():
    cli = contract.cli_contract()
    assert contract.languages() == tuple(cli["languages"]) and contract.benchmarks() == tuple(cli["benchmarks"])
    for lang, spec in cli["languages"].items():
        for bench in cli["benchmarks"]:
            assert contract.implements(lang, bench) == (bench in spec["benchmarks"])
        assert contract.variants(lang) == spec.get("variants", cli["implemented_variants"])


def test_native_args_passes_every_flag_explicitly():
    args = contract.native_args("throughput", {"pairs": 4, "message_bytes": 500, "duration_s": 2.0})
    assert args == [
        "throughput",
        "--pairs",
        "4",
        "--message-bytes",
        "500",
        "--duration-s",
        "2",
        "--report-every",
        "10000",
        "--payload",
        "copy",
        "--variant",
        "fair",
    ]
    assert contract.native_args("spawn", {"processes": 10}, variant="paper") == [
        "spawn",
        "--processes",
        "10",
        "--variant",
        "paper",
    ]


def test_native_args_names_a_missing_parameter():
    with pytest.raises(ValueError, match="repetitions"):
        contract.native_args("pingping", {"message_bytes": 5})


def test_a_flag_is_typed_from_its_spec_entry_and_the_contract_in_force(monkeypatch):
    f = contract.Flag.of("--x", {"param": "x", "type": "int", "min": 2, "knob": {"fair": 1}, "$comment": "why"})
    assert (f.param, f.type, f.min, f.max, f.has_default, f.is_param) == ("x", "int", 2, None, False, False)
    assert contract.Flag.of("--y", {"param": "y", "type": "enum", "values": ["a"], "default": "a"}).has_default
    assert not contract.Flag.of("--host", {"param": "host", "type": "enum", "values": ["h"]}).is_param
    # a test that overrides the contract gets flags of its spec, then the real ones back
    spec = copy.deepcopy(contract.cli_contract())
    spec["benchmarks"]["pingping"]["flags"]["--message-bytes"]["max"] = 7
    monkeypatch.setattr(contract, "cli_contract", lambda: spec)
    assert contract.flag_of("pingping", "message_bytes").max == 7
    monkeypatch.undo()
    assert contract.flag_of("pingping", "message_bytes").max != 7


def test_unknown_names_are_errors():
    with pytest.raises(ValueError, match="unknown language 'rust'"):
        contract.language("rust")
    with pytest.raises(ValueError, match="unknown benchmark"):
        contract.flags("pingpong")


def test_executables_live_where_the_spec_says():
    assert str(contract.executable("go")).endswith("src/go/bin/serverbench")
    assert str(contract.executable("erlang")).endswith("src/erlang/_build/default/bin/serverbench")
    assert str(contract.executable("scala_akka")).endswith("src/scala/target/serverbench.jar")


def test_every_language_has_its_look_and_start_up_in_its_spec_entry():
    """One home for a language's facts: its name, colour and marker in figures (`plot`) and its
    start-up cost for the plan's estimates live in spec/cli.json, read by process.py,
    figstyle.py and plan.py."""
    from serverbench.analysis.plotting import figstyle
    from serverbench.analysis.reading import process

    styles = contract.plot_styles()
    for lang, spec in contract.cli_contract()["languages"].items():
        assert {"label", "color", "marker"} <= set(spec["plot"]), lang
        assert process.LANGUAGE_LABELS[lang] == spec["plot"]["label"] and figstyle.color(lang) == spec["plot"]["color"]
        if any(contract.family(b) == "process" for b in spec["benchmarks"]):  # an in-process benchmark: a start-up cost
            assert contract.startup_costs()[lang] == spec["startup_s"], lang
    colours = [s["color"] for s in styles.values() if "color" in s]
    assert len(colours) == len(set(colours))  # no two languages look alike
    assert process.LANGUAGE_LABELS["go[gc=nogreentea]"] == "Go, Green Tea GC off"  # a build's own look


def _language_facts_in(text: str) -> list[str]:
    """Each place in `text` that writes down a language's look or start-up from its spec
    entry: a spec colour anywhere, or the language's name paired with its label, marker,
    dodge or start-up seconds (`"go": "Go"`, `'erlang': 0.2`)."""
    import re

    found = []
    for lang, spec in contract.cli_contract()["languages"].items():
        plot = spec.get("plot", {})
        if "color" in plot and plot["color"].lower() in text.lower():
            found.append(f"{lang} colour {plot['color']}")
        values = [plot.get("label"), plot.get("marker"), plot.get("dodge"), spec.get("startup_s")]
        for value in [*values, spec.get("server_startup_s")]:
            if value is None:
                continue
            v = f"[\"']{re.escape(value)}[\"']" if isinstance(value, str) else re.escape(f"{value:g}") + r"(\.0+)?\b"
            if re.search(rf"[\"']{re.escape(lang)}[\"']\s*:\s*{v}", text):
                found.append(f"{lang}: {value!r}")
    return found


def test_no_language_label_colour_marker_or_start_up_is_written_outside_the_spec():
    """One home for a language's facts: grep the package, the scripts and the notebooks for
    a copy of what spec/cli.json says (a language's colour, or its name paired with its
    label, marker, dodge or start-up seconds)."""
    from serverbench import paths

    planted = '{"erlang": "Erlang", "go": 0.03}  # ' + contract.language("go")["plot"]["color"]
    assert len(_language_facts_in(planted)) == 3  # the grep finds each kind it looks for
    root = paths.repo_root()
    files = [*root.joinpath("src", "python").rglob("*.py"), *root.joinpath("scripts").glob("*.sh")]
    files += [*root.joinpath("notebooks").rglob("*.ipynb")]
    copies = {
        str(f.relative_to(root)): hits for f in files if (hits := _language_facts_in(f.read_text(encoding="utf-8")))
    }
    assert copies == {}


def test_the_socket_host_is_loopback_and_fair_is_always_built():
    """What the socket harness and the profile check read of the spec's top level."""
    import ipaddress

    assert ipaddress.ip_address(contract.socket_host()) in ipaddress.ip_network("127.0.0.0/8")
    assert "fair" in contract.implemented_variants()
    assert contract.variants("go") == contract.implemented_variants()  # no variants of its own
