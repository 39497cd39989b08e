"""docs/extending.md, walked: a toy benchmark defined in this test's folder, as a package
outside the tree that a distribution plugs in by its entry point (a temporary one on
sys.path, as `pip install` would leave it), appears in the plan (with its own cost), the processed tables,
a figure, the claims and the explorer without editing any generic code, and without touching
the analysis's registry: registry.load() sees the toy because it is on the path. The spec edits a
real benchmark makes (spec/cli.json, the two record schemas, and its claims' entries in
spec/protocol.json: their words and yes regions) are made here to in-memory copies;
everything else is the package.

A toy language likewise: its folder (a real PingPing in Python threads and queues) and its
spec/cli.json entry, with the record schemas' language enums generated from that spec (as
`python -m serverbench docs` writes them). The harness runs it, the processed tables, the
figures' look and the explorer name it, and the plan costs it by its own factor."""

from __future__ import annotations

import copy
import sys
import textwrap
import types
from pathlib import Path

import pytest

from serverbench import contract, plugins, protocol
from serverbench.analysis.claims import engine, tables
from serverbench.analysis.explorer import explore
from serverbench.analysis.reading import registry, synthetic
from serverbench.harness.planning import plan as plan_mod
from serverbench.harness.planning import profiles
from serverbench.rawdata import records

TOY = {
    "__init__.py": '''
        """Toy: a number of units of nothing, timed (a test's benchmark, docs/extending.md)."""

        from serverbench import plugins

        DECLARED = plugins.Declared(order=50, analysis=("tables", "figures", "claims"), parts=("cost",))
    ''',
    "tables.py": """
        from serverbench.analysis.reading import registry

        TABLE = registry.TableSpec("toy", "toy", ("variant", "cores", "units"), ("elapsed_s",), "elapsed_s")
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
        from serverbench.analysis.claims import Claim, Needs
        from serverbench.analysis.claims.compare import ratio_between_languages


        def go_faster(data):
            d = data.values
            ns = sorted(set(d["units"]))
            return [ratio_between_languages(d, "go", "erlang", {"units": n}, data.region("X1")) for n in ns]


        X1 = Claim(id="X1", needs=Needs("toy", "elapsed_s", languages=("go", "erlang")), compare=go_faster)
    """,
    "cost.py": """
        def run_s(language, params):
            return 0.5 * params["units"]
    """,
}


def installed(site: Path, package: str, files: dict[str, str], entry: str) -> Path:
    """What `pip install` of a one-package distribution leaves in site-packages: the package
    and its metadata, with its entry point `entry` in the group serverbench.benchmarks."""
    (site / package).mkdir(parents=True)
    for name, text in files.items():
        (site / package / name).write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    meta = site / f"{package}-0.1.dist-info"
    meta.mkdir()
    (meta / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {package}\nVersion: 0.1\n", encoding="utf-8")
    (meta / "entry_points.txt").write_text(f"[{plugins.GROUP}]\n{entry} = {package}\n", encoding="utf-8")
    return site


def _forget(package: str) -> None:
    for name in [m for m in sys.modules if m == package or m.startswith(package + ".")]:
        del sys.modules[name]


@pytest.fixture
def toy(tmp_path, monkeypatch):
    before = registry.load()  # the real benchmarks' registry: the toy's path gives another
    monkeypatch.syspath_prepend(str(installed(tmp_path / "site", "toy_benchmark", TOY, "toy")))
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
    yield tmp_path
    records._validator.cache_clear()
    records._native_validator_for.cache_clear()
    _forget("toy_benchmark")
    monkeypatch.undo()  # sys.path as before: the real registry again, untouched by the toy
    assert registry.load() is before and "toy" not in before.tables and "X1" not in before.claims


def test_a_toy_benchmark_package_joins_every_stage(toy):
    assert plugins.packages()["toy"] == "toy_benchmark"  # found by its entry point
    assert "toy" in profiles.table_names() and profiles.param_keys("toy") == ("units",)
    # the plan: its runs, priced by its own cost model
    rounds = protocol.rounds_deciding()  # a configuration a claim decides at gets the design's rounds
    prof = profiles.resolve(
        {"name": "t", "languages": ["go", "erlang"], "toy": {"units": [10, 20], "trials": "deciding"}}
    )
    p = plan_mod.make_plan(prof)
    toy_tasks = [t for t in p.tasks if t.benchmark == "toy"]
    assert len(toy_tasks) == 2 * 2 * rounds
    t = next(t for t in toy_tasks if t.params["units"] == 20 and t.language == "go")
    assert plan_mod.estimate_task_s(t) == pytest.approx(contract.startup_costs()["go"] + 10.0)
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


def test_a_benchmark_package_must_declare_itself(tmp_path, monkeypatch):
    files = {"__init__.py": '"""No DECLARED."""\n'}
    monkeypatch.syspath_prepend(str(installed(tmp_path, "bad_benchmark", files, "bad")))
    try:
        with pytest.raises(ImportError, match="bad_benchmark: a benchmark package declares DECLARED"):
            plugins.load()
    finally:
        _forget("bad_benchmark")


def test_an_entry_point_must_name_a_package_with_an_id_of_its_own(tmp_path, monkeypatch):
    files = {"__init__.py": "from serverbench import plugins\nDECLARED = plugins.Declared(order=1, analysis=())\n"}
    site = installed(tmp_path / "a", "odd_benchmark", files, "odd")
    (site / "odd_benchmark-0.1.dist-info" / "entry_points.txt").write_text(
        f"[{plugins.GROUP}]\nodd = odd_benchmark:DECLARED\n", encoding="utf-8"
    )
    monkeypatch.syspath_prepend(str(site))
    with pytest.raises(ImportError, match="odd = odd_benchmark:DECLARED names a package, not 'DECLARED'"):
        plugins.packages()
    monkeypatch.undo()
    clash = installed(tmp_path / "b", "my_spawn", files, "spawn")  # a built-in benchmark's id
    monkeypatch.syspath_prepend(str(clash))
    with pytest.raises(ImportError, match="two benchmark packages are called 'spawn'"):
        plugins.packages()
    monkeypatch.undo()
    assert plugins.packages()["spawn"] == "serverbench.benchmarks.spawn"  # nothing of theirs stays


def test_a_part_is_what_the_package_declares_never_a_probe():
    assert plugins.part("spawn", "limits") is not None and plugins.part("pingping", "limits") is None
    assert plugins.part("no_such_benchmark", "cost") is None
    with pytest.raises(ValueError, match="no harness part 'tables'"):
        plugins.part("spawn", "tables")


def test_a_declared_part_the_loader_does_not_know_is_named(tmp_path, monkeypatch):
    declared = "DECLARED = plugins.Declared(order=1, analysis=(), parts=('costs',))"
    files = {"__init__.py": f"from serverbench import plugins\n{declared}\n"}
    monkeypatch.syspath_prepend(str(installed(tmp_path, "typo_benchmark", files, "typo")))
    try:
        with pytest.raises(ImportError, match="typo_benchmark: DECLARED.parts names costs"):
            plugins.part("typo", "cost")
    finally:
        _forget("typo_benchmark")


def test_a_name_two_modules_declare_differently_is_an_error_naming_both():
    """The registry is collected, not filled: a table (or claim, figure, section) declared
    twice with different contents stops the load, naming the module and the first one; the
    same value imported into a second module is one declaration."""
    spec = registry.TableSpec("dup", "toy", ("variant",), ("elapsed_s",))
    first, again, other = (types.ModuleType(n) for n in ("first_mod", "imports_it", "second_mod"))
    first.TABLE = spec
    again.TABLE = spec  # `from first_mod import TABLE`
    other.TABLE = registry.TableSpec("dup", "toy", ("variant", "cores"), ("elapsed_s",))
    assert list(registry.Registry().with_modules(first, again).tables) == ["dup"]
    with pytest.raises(ImportError, match=r"second_mod declares table 'dup' again \(first declared in first_mod\)"):
        registry.Registry().with_modules(first, other)


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


# ---------------------------------------------------------------------------------------
# A toy language: its folder (the program below) and its spec/cli.json entry, nothing else.
# The record schemas' language enums are generated from the spec (docsgen/schemas.py), so the
# test reads them as `python -m serverbench docs` would write them.

TOY_LANGUAGE_PROGRAM = '''
"""serverbench's PingPing in Python: two threads pass one message back and forth R times
through queues of capacity 1 (a test's toy language, docs/extending.md)."""

import json
import os
import queue
import sys
import threading
import time

args = sys.argv[1:]
runtime = {"name": "cpython-threads", "version": sys.version.split()[0], "schedulers": 1}
if args == ["--version"]:
    record = {"program": "serverbench", "program_version": "toy-1", "language": "toy_queues", "runtime": runtime}
    print(json.dumps(record))
    sys.exit(0)
bench, flags = args[0], dict(zip(args[1::2], args[2::2]))
if bench != "pingping":
    print(f"error: unknown sub-command {bench}", file=sys.stderr)
    sys.exit(2)
size, reps = int(flags["--message-bytes"]), int(flags["--repetitions"])
to_a, to_b = queue.Queue(1), queue.Queue(1)
got = {"a": 0, "b": 0, "bad": 0}


def b():
    for _ in range(reps):
        m = to_b.get()
        got["b"] += 1
        got["bad"] += len(m) != size
        to_a.put(m)


payload = bytes(size)
t = threading.Thread(target=b)
t0 = time.perf_counter()
t.start()
for _ in range(reps):
    to_b.put(payload)
    got["bad"] += len(to_a.get()) != size
    got["a"] += 1
t.join()
elapsed = time.perf_counter() - t0
runtime["schedulers"] = int(os.environ.get("SERVERBENCH_CORES", "1"))
print(json.dumps({
    "benchmark": "pingping", "language": "toy_queues", "variant": flags.get("--variant", "fair"),
    "params": {"message_bytes": size, "repetitions": reps, "payload": flags.get("--payload", "copy")},
    "metrics": {"elapsed_s": elapsed, "messages": 2 * reps, "ns_per_message": elapsed * 1e9 / (2 * reps)},
    "validation": {"ok": got["bad"] == 0 and got["a"] == got["b"] == reps, "received_a": got["a"],
                   "received_b": got["b"], "payload_errors": got["bad"]},
    "runtime": runtime,
}))
'''


@pytest.fixture
def toy_language(tmp_path, monkeypatch):
    import json

    from serverbench.docsgen import schemas as docs_schemas

    folder = tmp_path / "src" / "toy_queues"
    folder.mkdir(parents=True)
    (folder / "serverbench-toy.py").write_text(TOY_LANGUAGE_PROGRAM.lstrip(), encoding="utf-8")
    spec = copy.deepcopy(contract.cli_contract())
    spec["languages"]["toy_queues"] = {
        "executable": str(folder / "serverbench-toy.py"),
        "plot": {"label": "Python queues (toy)", "color": "#123456", "marker": "P"},
        "order": 99,
        "cost_factor": {"pingping": 40},
        "startup_s": 0.05,
        "benchmarks": ["pingping"],
        "variants": ["fair"],
        "build": "true",
        "command": [sys.executable, "{exe}"],
        "env": {"SERVERBENCH_CORES": "{cores}"},
    }
    monkeypatch.setattr(contract, "cli_contract", lambda: spec)
    root = Path(__file__).resolve().parents[2]

    def load_schema(name):  # the schemas as `python -m serverbench docs` generates them from the spec
        rel = docs_schemas.NATIVE if name == records.NATIVE_SCHEMA else docs_schemas.RAW
        return json.loads(docs_schemas.generate(rel, (root / rel).read_text(encoding="utf-8")))

    monkeypatch.setattr(records, "load_schema", load_schema)
    records._validator.cache_clear()
    records._native_validator_for.cache_clear()
    yield tmp_path
    records._validator.cache_clear()
    records._native_validator_for.cache_clear()


def test_a_toy_language_runs_and_renders(toy_language):
    import matplotlib.colors

    from harness_fakes import fake
    from serverbench import catalog, harness
    from serverbench.analysis.explorer import explore_plots
    from serverbench.analysis.plotting import figstyle
    from serverbench.analysis.reading import process
    from serverbench.benchmarks.pingping import cost

    lang = catalog.language("toy_queues")
    assert lang.label == "Python queues (toy)" and not lang.paper and "toy_queues" not in catalog.paper_languages()
    assert catalog.presentation_order()[-1] == "toy_queues"  # its order puts it after every real one
    params = {"message_bytes": 100, "repetitions": 1000}
    assert cost.run_s("toy_queues", params) == pytest.approx(40 * cost.run_s("go", params))  # its own cost factor
    # it runs: the harness plans it, runs its program and validates its records (Go is a fake here)
    ov = {"pingping.message_bytes": [100], "pingping.repetitions": [2000], "spawn.enabled": False}
    ov |= {"throughput.enabled": False, "spawn_max.enabled": False, "pingping.trials": 3}
    ov["languages"] = ["toy_queues", "go"]
    d = harness.run_sweep(
        "smoke",
        sweep_id="toy-language",
        raw_root=toy_language / "raw",
        progress=False,
        overrides=ov,
        languages=["toy_queues", "go"],
        benchmarks=["pingping"],
        commands={"go": fake("ok", "go")},
    )
    recs, skipped = records.load_records(d)
    assert not skipped
    toy = [r for r in recs if r["language"] == "toy_queues" and not r["warmup"]]
    assert toy and all(r["status"] == "ok" and r["validation"]["ok"] for r in toy)
    assert {r["params"]["repetitions"] for r in toy} == {2000}
    # it renders: the processed tables, the figures' look and the explorer's plot name it
    process.process_sweep(d, toy_language / "processed")
    P = process.Processed(toy_language / "processed")
    s = P.stat("pingping", "elapsed_s")
    assert set(s["language"]) == {"go", "toy_queues"} and (s["median"] > 0).all()
    r = P.ratios[P.ratios["table"] == "pingping"]
    assert {tuple(sorted((a, b))) for a, b in zip(r["numerator"], r["denominator"])} == {("go", "toy_queues")}
    assert process.LANGUAGE_LABELS["toy_queues"] == "Python queues (toy)" and figstyle.color("toy_queues") == "#123456"
    fig = explore_plots.overlay([explore.load_sweep(d)], "pingping", metric="elapsed_s")
    labels = {t.get_text() for ax in fig.axes if ax.get_legend() for t in ax.get_legend().get_texts()}
    assert any(x.startswith("toy_queues") for x in labels), labels
    line = next(ln for ax in fig.axes for ln in ax.get_lines() if ln.get_label().startswith("toy_queues"))
    assert matplotlib.colors.to_hex(line.get_color()) == "#123456"  # its spec colour, in the explorer too


def test_a_sockets_module_without_its_hooks_is_named():
    mod = types.ModuleType("serverbench.benchmarks.toy.sockets")
    with pytest.raises(ImportError, match=r"toy.sockets: declares HOOKS = plugins.SocketHooks"):
        plugins.hooks(mod, plugins.SocketHooks)
    mod.HOOKS = plugins.SearchHooks()  # the wrong kind is refused too
    with pytest.raises(ImportError, match="SocketHooks"):
        plugins.hooks(mod, plugins.SocketHooks)
    mod.HOOKS = plugins.SocketHooks(round_param="seed")
    assert plugins.hooks(mod, plugins.SocketHooks).round_param == "seed"
