"""docs/extending.md, walked: a toy benchmark defined in this test's folder, as a package
outside the tree that a distribution plugs in by its entry point (a temporary one on
sys.path, as `pip install` would leave it), appears in the plan (with its own cost), the processed tables,
a figure, the claims and the explorer without editing any generic code, and without touching
the analysis's registry: registry.load() sees the toy because it is on the path. Its spec entry
(its spec/cli.json entry, the languages that run it, its native record's schema and its claim's
words and yes region) is the package's own spec.json, which the spec's readers merge in: no
file of the tree is edited and nothing of the package is patched.

A toy language likewise: a package (a real PingPing in Python threads and queues, and its
spec/cli.json entry as language.json) plugged in by its entry point. The harness runs it, the
processed tables, the figures' look and the explorer name it, and the plan costs it by its own
factor. Both together: the toy language runs the toy benchmark through the harness to a
rendered report section."""

from __future__ import annotations

import contextlib
import importlib
import json
import re
import sys
import textwrap
import types
from pathlib import Path

import pytest

from serverbench import catalog, contract, plugins, protocol
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

        DECLARED = plugins.Declared(order=50, analysis=("tables", "figures", "claims", "report"), parts=("cost",))
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
    "report.py": """
        from serverbench.analysis.reading import registry


        @registry.report_section("Toy: units of nothing", order=95)
        def toy_section(P):
            s = P.stat("toy", "elapsed_s")
            if s.empty:
                return []
            return ["Median time per unit count, each language's ok runs.", s[["language", "units", "median", "n"]]]
    """,
    "cost.py": """
        def run_s(language, params):
            return 0.5 * params["units"]
    """,
    "spec.json": json.dumps(
        {
            "cli": {
                "summary": "n units of nothing",
                "flags": {"--units": {"param": "units", "type": "int", "min": 1, "max": 1000, "required": True}},
            },
            "languages": ["go", "erlang"],
            "record": {"type": "object", "properties": {"benchmark": {"const": "toy"}}},
            "claims": [
                {
                    "id": "X1",
                    "source": "this test",
                    "sentence": "Go finishes the toy faster than Erlang at every unit count",
                    "quantity": "toy time ratio",
                    "population": ["go", "erlang"],
                    "deciding": "Go/Erlang at every unit count",
                    "yes": {"words": "lower", "hi": [1, 0]},
                }
            ],
        }
    ),
}


def installed(site: Path, package: str, files: dict[str, str], entry: str, group: str = plugins.GROUP) -> Path:
    """What `pip install` of a one-package distribution leaves in site-packages: the package
    and its metadata, with its entry point `entry` in `group` (serverbench.benchmarks)."""
    (site / package).mkdir(parents=True)
    for name, text in files.items():
        (site / package / name).write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    meta = site / f"{package}-0.1.dist-info"
    meta.mkdir()
    (meta / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {package}\nVersion: 0.1\n", encoding="utf-8")
    (meta / "entry_points.txt").write_text(f"[{group}]\n{entry} = {package}\n", encoding="utf-8")
    return site


@contextlib.contextmanager
def on_path(site: Path, *packages: str):
    """A site folder on sys.path for the block, as `pip install` leaves one (and `pip
    uninstall` after it): the only change a plug-in makes, and undone after it."""
    sys.path.insert(0, str(site))
    importlib.invalidate_caches()
    try:
        yield site
    finally:
        sys.path.remove(str(site))
        for package in packages:
            _forget(package)


def _forget(package: str) -> None:
    for name in [m for m in sys.modules if m == package or m.startswith(package + ".")]:
        del sys.modules[name]


@pytest.fixture
def toy(tmp_path):
    before = registry.load()  # the real benchmarks' registry: the toy's path gives another
    with on_path(installed(tmp_path / "site", "toy_benchmark", TOY, "toy"), "toy_benchmark"):
        yield tmp_path
    # uninstalled: the real spec, schemas, claims and registry again, untouched by the toy
    assert registry.load() is before and "toy" not in before.tables and "X1" not in before.claims
    assert "toy" not in contract.benchmarks() and "toy" not in contract.language("go")["benchmarks"]
    assert "toy" not in records.load_schema(records.NATIVE_SCHEMA)["$defs"]
    with pytest.raises(KeyError, match="X1"):
        protocol.claim("X1")


@pytest.mark.parametrize("key, bad", [("record", "[]"), ("languages", '"go"'), ("cli", "null")])
def test_a_benchmark_entry_of_the_wrong_shape_is_named(tmp_path, key, bad):
    spec = json.loads(TOY["spec.json"])
    spec[key] = json.loads(bad)
    site = installed(tmp_path / "site", "toy_benchmark", {**TOY, "spec.json": json.dumps(spec)}, "toy")
    with on_path(site, "toy_benchmark"), pytest.raises(ValueError, match=rf"spec.json: its '{key}' is an? "):
        contract.benchmarks()
    assert "toy" not in contract.benchmarks()


def test_the_docs_describe_the_tree_whatever_plug_in_is_installed(toy):
    from serverbench.docsgen import generate, schemas

    assert "toy" in schemas.enums(schemas.RAW)["benchmark"]  # installed: every reader sees it
    pages = generate.generated(only=("readme-benchmarks", generate.RECORD_SCHEMAS))
    assert pages and all(old == new for old, new in pages.values()), "a plug-in reached the committed docs"
    assert "toy" in schemas.enums(schemas.RAW)["benchmark"]  # and sees it again after


def test_a_toy_benchmark_package_joins_every_stage(toy):
    assert plugins.packages()["toy"] == "toy_benchmark"  # found by its entry point
    # its spec entry, merged: the contract, both record schemas, its claim's protocol entry
    assert contract.benchmark("toy")["summary"] == "n units of nothing" and contract.implements("go", "toy")
    assert "toy" in records.load_schema(records.RAW_SCHEMA)["properties"]["benchmark"]["enum"]
    assert protocol.claim("X1")["population"] == ["go", "erlang"]
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
    # what the harness reads: the typed Benchmark's attributes
    spawn, pingping = catalog.benchmark("spawn"), catalog.benchmark("pingping")
    assert spawn.limits is plugins.part("spawn", "limits") and pingping.limits is None
    assert spawn.search is not None and spawn.search_hooks is not None and pingping.search_hooks is None
    assert pingping.socket_hooks is plugins.NO_SOCKET_HOOKS
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
runtime["schedulers"] = int(os.environ.get("SERVERBENCH_CORES", "1"))
if bench == "toy":  # the toy benchmark's n units of nothing, counted as it goes
    units, done = int(flags["--units"]), 0
    t0 = time.perf_counter()
    for _ in range(units):
        done += 1
    print(json.dumps({
        "benchmark": "toy", "language": "toy_queues", "variant": flags.get("--variant", "fair"),
        "params": {"units": units}, "metrics": {"elapsed_s": time.perf_counter() - t0, "units_done": done},
        "validation": {"ok": done == units}, "runtime": runtime,
    }))
    sys.exit(0)
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
print(json.dumps({
    "benchmark": "pingping", "language": "toy_queues", "variant": flags.get("--variant", "fair"),
    "params": {"message_bytes": size, "repetitions": reps, "payload": flags.get("--payload", "copy")},
    "metrics": {"elapsed_s": elapsed, "messages": 2 * reps, "ns_per_message": elapsed * 1e9 / (2 * reps)},
    "validation": {"ok": got["bad"] == 0 and got["a"] == got["b"] == reps, "received_a": got["a"],
                   "received_b": got["b"], "payload_errors": got["bad"]},
    "runtime": runtime,
}))
'''


def toy_language_site(site: Path, benchmarks: tuple[str, ...] = ("pingping",)) -> Path:
    """The toy language as a distribution: its package holds the program and its spec/cli.json
    entry (language.json, the executable relative to the package), its entry point is in the
    group serverbench.languages."""
    entry = {
        "executable": "serverbench-toy.py",
        "plot": {"label": "Python queues (toy)", "color": "#123456", "marker": "P"},
        "order": 99,
        "cost_factor": {"pingping": 40},
        "startup_s": 0.05,
        "benchmarks": list(benchmarks),
        "variants": ["fair"],
        "build": "true",
        "command": [sys.executable, "{exe}"],
        "env": {"SERVERBENCH_CORES": "{cores}"},
    }
    files = {
        "__init__.py": '"""A toy language: PingPing in Python threads and queues (docs/extending.md)."""\n',
        "serverbench-toy.py": TOY_LANGUAGE_PROGRAM.lstrip(),
        plugins.LANGUAGE_SPEC: json.dumps(entry),
    }
    return installed(site, "toy_queues_lang", files, "toy_queues", group=plugins.LANGUAGE_GROUP)


@pytest.fixture
def toy_language(tmp_path):
    with on_path(toy_language_site(tmp_path / "site"), "toy_queues_lang"):
        yield tmp_path
    assert "toy_queues" not in contract.languages()  # uninstalled: the real spec again
    assert "toy_queues" not in records.load_schema(records.RAW_SCHEMA)["properties"]["language"]["enum"]


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


@pytest.mark.parametrize("text", ['{"executable": "x",', "[1, 2]"])
def test_a_broken_spec_entry_is_named_by_its_file(tmp_path, text):
    site = toy_language_site(tmp_path / "site")
    entry = site / "toy_queues_lang" / plugins.LANGUAGE_SPEC
    entry.write_text(text, encoding="utf-8")
    with on_path(site, "toy_queues_lang"), pytest.raises(ValueError, match=re.escape(str(entry))):
        contract.languages()
    assert "toy_queues" not in contract.languages()


def test_a_sockets_module_without_its_hooks_is_named():
    mod = types.ModuleType("serverbench.benchmarks.toy.sockets")
    with pytest.raises(ImportError, match=r"toy.sockets: declares HOOKS = plugins.SocketHooks"):
        plugins.hooks(mod, plugins.SocketHooks)
    mod.HOOKS = plugins.SearchHooks()  # the wrong kind is refused too
    with pytest.raises(ImportError, match="SocketHooks"):
        plugins.hooks(mod, plugins.SocketHooks)
    mod.HOOKS = plugins.SocketHooks(round_param="seed")
    assert plugins.hooks(mod, plugins.SocketHooks).round_param == "seed"


def test_the_toy_language_runs_the_toy_benchmark_through_the_harness_to_its_report_section(tmp_path):
    """Both plug-ins at once, nothing of the tree edited: the toy language's program runs the
    toy benchmark's runs as the harness plans them (its own spec entry names the benchmark),
    the records pass the toy's own record schema, and the processed sweep renders the toy's
    report section among the report's."""
    from serverbench import harness
    from serverbench.analysis.reading import process
    from serverbench.analysis.reporting import sections

    profile = tmp_path / "toyrun.toml"
    # one record a run even on a busy machine (as the smoke profile): the count below is exact
    toml = 'name = "toyrun"\nlanguages = ["toy_queues"]\nrerun_interfered = false\n\n'
    toml += "[toy]\nunits = [10, 20]\ncores = [1]\ntrials = 3\n"
    profile.write_text(toml)
    site = tmp_path / "site"
    installed(site, "toy_benchmark", TOY, "toy")
    toy_language_site(site, benchmarks=("pingping", "toy"))
    with on_path(site, "toy_benchmark", "toy_queues_lang"):
        d = harness.run_sweep(str(profile), sweep_id="toy-run", raw_root=tmp_path / "raw", progress=False)
        recs, skipped = records.load_records(d)
        runs = [r for r in recs if not r["warmup"]]
        assert not skipped and {r["benchmark"] for r in runs} == {"toy"}
        assert all(r["status"] == "ok" for r in runs), [r["status_reason"] for r in runs]
        assert len(runs) == 2 * 3 and {r["trial"] for r in runs} == {1, 2, 3}
        assert {r["metrics"]["units_done"] for r in runs} == {10, 20}  # the work it claims, done
        process.process_sweep(d, tmp_path / "processed")
        P = process.Processed(tmp_path / "processed")
        # the report's registry holds its section, which renders from the processed sweep (the
        # report's other sections are not rendered here: the warm-up's alone takes ~30 s)
        (section,) = [x for x in sections.registered() if x.title == "Toy: units of nothing"]
        text, table = section.render(P)
        assert text.startswith("Median time") and set(table["units"]) == {10, 20}
        assert set(table["language"]) == {"toy_queues"} and (table["n"] == 3).all()
    assert "toy" not in contract.benchmarks() and "toy_queues" not in contract.languages()
