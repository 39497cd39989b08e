"""The original's JVM flags as a factor of the gap (docs/gap.md, `jvm flags`): a JVM original
runs as the authors ran it (the JVM's defaults) and with the heap and stack flags the
harness gives our programs, whose one source is spec/cli.json; the attribution splits the
old `program` factor into `program` and `jvm flags` where a sweep ran both, and reads the
sweeps before that (no flags field) as it always did."""

import copy
import json

import numpy as np
import pandas as pd
import pytest

from serverbench import contract
from serverbench.analysis.reading import gap_tables
from serverbench.originals import attribution, programs, rounds, runner
from serverbench.rawdata import records
from test_gap import CPUS, HOST, _cell, _script, _sides

TP = {"pairs": 1, "duration_s": 60.0, "message_bytes": 500, "payload": "copy", "report_every": 10000}
# a fake JVM: maxSpeakers' result line, 1.8 x the count with our heap (-Xms in its
# argv), the round's drift from the environment; its argv echoed on stderr
FAKE_JAVA = """
import os
n = 1_000_000 * float(os.environ.get("FAKE_DRIFT", "1")) * (1.8 if any(a.startswith("-Xms") for a in sys.argv) else 1)
print(" ".join(sys.argv[1:]), file=sys.stderr)
print(f"Total number of messages after 60.0 seconds: {int(n)}")
"""


def _fake_java(tmp_path, monkeypatch):
    """A built maxSpeakers.jar (any file) and a fake JVM where the originals' `java` goes (a
    unit test starts no real one: tests/python/conftest.py)."""
    jar = tmp_path / "originals" / "scala" / "maxSpeakers.jar"
    jar.parent.mkdir(parents=True, exist_ok=True)
    jar.write_text("not a jar")
    monkeypatch.setattr(programs, "JAVA", str(_script(tmp_path / "bin" / "fake-jvm", FAKE_JAVA)))
    monkeypatch.setenv(programs.ENV_DIR, str(tmp_path / "originals"))
    return programs.find("throughput", "scala_akka24")


# ---- the command line ---------------------------------------------------------------------


def test_our_jvm_flags_are_the_harness_s_heap_and_stack_flags_from_spec_cli_json(tmp_path, monkeypatch):
    a = tmp_path / "x"
    tp = programs.find("throughput", "scala_akka24")
    as_authors, _ = tp.command(a, 1, TP, 1)
    ours, _ = tp.command(a, 1, TP, 1, programs.OURS, 512)
    assert as_authors == ["java", "-XX:ActiveProcessorCount=1", "-Dserverbench.window.ms=60000", "-jar", str(a), "1"]
    assert ours == [as_authors[0], as_authors[1], "-Xms512m", "-Xmx512m", "-Xss512k", *as_authors[2:]]
    assert tp.command(a, 1, TP, 1, programs.AUTHORS, 512) == (as_authors, {})  # the heap alone adds nothing
    # the one source: spec/cli.json's command of the original's runtime, as the harness fills it
    template = contract.language("scala_akka24")["command"]
    assert programs.our_jvm_flags("scala_akka24", 512) == [
        a.replace("{heap_mb}", "512") for a in template if a.startswith("-X") and not a.startswith("-XX:")
    ]
    spec = copy.deepcopy(contract.cli_contract())  # an edited spec: the catalog builds its own objects
    spec["languages"]["scala_akka24"]["command"] = ["java", "-Xmx{heap_mb}m", "-Xss1m", "-jar", "{exe}"]
    monkeypatch.setattr(contract, "cli_contract", lambda: spec)
    assert programs.our_jvm_flags("scala_akka24", 300) == ["-Xmx300m", "-Xss1m"]
    assert tp.command(a, 2, TP, 1, programs.OURS, 300)[0][2:4] == ["-Xmx300m", "-Xss1m"]


def test_only_a_jvm_original_runs_with_our_flags_and_only_with_a_heap(tmp_path):
    a = tmp_path / "x"
    assert [p.language for p in programs.PROGRAMS if p.jvm] == ["scala_akka24"] * 3
    assert programs.find("pingping", "go").flag_sets() == (programs.AUTHORS,)
    assert programs.find("spawn", "scala_akka24").flag_sets() == (programs.AUTHORS, programs.OURS)
    with pytest.raises(programs.OriginalError, match="jvm_flags"):
        programs.find("pingping", "go").command(a, 1, {"repetitions": 1, "message_bytes": 1}, 1, programs.OURS, 512)
    with pytest.raises(programs.OriginalError, match="heap"):
        programs.find("throughput", "scala_akka24").command(a, 1, TP, 1, programs.OURS)


# ---- the runner's record -------------------------------------------------------------------


def test_each_run_records_its_flags_and_an_older_line_reads_as_the_authors_ran_it(tmp_path, monkeypatch):
    tp = _fake_java(tmp_path, monkeypatch)
    args = ("s1", 1, 1, TP, HOST, CPUS, 30.0)
    mine = runner.run(tp, *args, flags=programs.OURS, heap_mb=512)
    theirs = runner.run(tp, *args)
    for rec in (mine, theirs):
        assert records.raw_errors(rec) is None and rec["status"] == "invalid"
    assert mine["settings"] == {"program": "original", programs.FLAGS_SETTING: programs.OURS}
    assert theirs["settings"] == {"program": "original", programs.FLAGS_SETTING: programs.AUTHORS}
    assert mine["command"][2:5] == ["-Xms512m", "-Xmx512m", "-Xss512k"] and "-Xms512m" not in theirs["command"]
    assert "-Xss512k" in mine["stderr_tail"]  # what the program was given, not only what the record says
    assert runner.value(tp, mine) / runner.value(tp, theirs) == pytest.approx(1.8, rel=1e-6)
    assert mine["config_id"] == theirs["config_id"].replace("/scala_akka24/", "/scala_akka24[jvm_flags=ours]/")
    assert theirs["config_id"] == runner.config_id(tp, 1, TP)  # as before the flags were a choice
    older = {**theirs, "settings": {"program": "original"}}  # a line of a sweep before the field
    assert [runner.flags_of(r) for r in (mine, theirs, older)] == [programs.OURS, programs.AUTHORS, programs.AUTHORS]
    go = programs.find("pingping", "go")
    _script(tmp_path / "originals" / "go" / "pingping", 'print("Time taken in seconds: 0.5")\n')
    rec = runner.run(go, "s1", 1, 1, {"message_bytes": 5, "repetitions": 1}, HOST, CPUS, 30.0)
    assert rec["settings"] == {"program": "original"}  # no JVM, no flags to choose


# ---- the rounds ------------------------------------------------------------------------------


def test_the_flags_piece_runs_the_paper_variant_and_the_original_both_ways_each_round(tmp_path, monkeypatch):
    """throughput-flags cut to 1 core and 3 rounds (overrides, as scripts/gap.py --set gives
    them), a fake JVM, and a recording stand-in for the harness: each round runs our paper
    variant (no knob steps) and the original both ways, back to back, the way that goes
    first rotating; the cut piece is a pilot by its name; a second call adds nothing."""
    import serverbench.harness as harness
    from serverbench.harness.planning import pieces
    from serverbench.harness.planning.profiles import ProfileError

    _fake_java(tmp_path, monkeypatch)
    real = pieces.piece(rounds.PROFILE, "throughput-flags")
    assert real.sets["variant"] == "paper" and real.sets["throughput.pairs"] == [1]
    calls = []

    def fake_sweep(profile, sweep_id, overrides, languages, benchmarks, raw_root, progress):
        calls.append((overrides["defaults.trials"], tuple(languages), overrides.get("throughput.steps")))

    monkeypatch.setattr(harness, "run_sweep", fake_sweep)
    log = []
    cut = {"defaults.trials": 3, "throughput.cores": [1]}
    out = rounds.run_rounds("throughput-flags", raw_root=tmp_path / "raw", log=log.append, overrides=cut)
    assert gap_tables.is_pilot(out.name) and out.name.startswith("gap-pilot-throughput-flags-")
    assert calls == [(k, ("scala_akka24",), None) for k in (1, 2, 3)]  # the paper variant only
    assert sum("paper block done" in m for m in log) == 3 and not any("knobs" in m for m in log)
    recs = [json.loads(x) for x in (out / runner.FILE_NAME).read_text().splitlines()]
    got = [(r["trial"], runner.flags_of(r)) for r in recs]
    a, o = programs.AUTHORS, programs.OURS
    assert got == [(1, a), (1, o), (2, o), (2, a), (3, a), (3, o)]
    assert all(records.raw_errors(r) is None and r["params"]["pairs"] == 1 and r["cores"] == 1 for r in recs)
    assert sum("with our JVM flags" in m for m in log) == 3
    rounds.run_rounds("throughput-flags", out.name, raw_root=tmp_path / "raw", log=log.append, overrides=cut)
    assert len((out / runner.FILE_NAME).read_text().splitlines()) == 6  # resumed: nothing twice
    S = attribution.sides(out)
    assert sorted(set(S["side"])) == [attribution.ORIGINAL, attribution.ORIGINAL_OURS]
    with pytest.raises(ProfileError):
        rounds.run_rounds("throughput-flags", raw_root=tmp_path / "raw", overrides={"throughput.nonsense": 1})


def test_the_flags_piece_takes_about_half_an_hour_at_both_core_counts():
    from serverbench.harness import load_profile
    from serverbench.harness.planning.pieces import piece

    sets = piece(rounds.PROFILE, "throughput-flags").sets
    cfg = rounds.configs(sets, "throughput", ["scala_akka24"])
    assert sorted((t.cores, t.params["pairs"], t.variant) for _, t in cfg) == [(1, 1, "paper"), (2, 1, "paper")]
    prof = load_profile(rounds.PROFILE, sets)
    assert rounds.present_blocks(prof["languages"], "throughput") == ("original", "knobs")
    per_round = sum(1 + len(prog.flag_sets()) for prog, _ in cfg)  # our paper variant, the original both ways
    minutes = per_round * int(prof["defaults"]["trials"]) * (prof["throughput"]["duration_s"][0] + 2) / 60
    assert per_round == 6 and minutes < 40


# ---- the attribution -------------------------------------------------------------------------


def _original_log(tmp_path, monkeypatch, drifts) -> pd.DataFrame:
    """The sides of an original.jsonl written by the runner (the fake JVM): round k both
    ways with drift drifts[k-1]."""
    tp = _fake_java(tmp_path, monkeypatch)
    sweep = tmp_path / "sweep"
    sweep.mkdir(exist_ok=True)
    with open(sweep / runner.FILE_NAME, "w") as f:
        for k, d in enumerate(drifts, 1):
            monkeypatch.setenv("FAKE_DRIFT", str(d))
            for flags in rounds.flag_order(tp, k):
                f.write(json.dumps(runner.run(tp, "s1", k, 1, TP, HOST, CPUS, 30.0, flags=flags, heap_mb=512)) + "\n")
    return attribution.sides(sweep)


def test_the_jvm_flags_factor_from_an_original_log_and_the_product_still_the_gap(tmp_path, monkeypatch):
    """The known factors of test_gap._sides (release 8, quirks 2, paper = 1.5 x the original
    as the authors ran it, that original 0.5 x the paper's value) with the original's runs
    taken from an original.jsonl in which our flags make it 1.8 x faster: `program` becomes
    1.5 / 1.8, `jvm flags` 1.8, and the product is still the whole gap."""
    drifts = [1.0, 0.8, 1.3, 0.9, 1.1]
    orig_log = _original_log(tmp_path, monkeypatch, drifts)
    assert len(orig_log) == 10 and set(orig_log["side"]) == {attribution.ORIGINAL, attribution.ORIGINAL_OURS}
    S = _sides()
    tp = S[S["benchmark"] == "throughput"]
    rest = tp[tp["side"] != attribution.ORIGINAL].copy()
    # ours rescaled round by round from _sides' original to the log's (as the authors ran it)
    new = orig_log[orig_log["side"] == attribution.ORIGINAL].set_index("trial")["value"]
    old = tp[tp["side"] == attribution.ORIGINAL].set_index("trial")["value"]
    rest["value"] *= rest["trial"].map(new / old)
    A = attribution.attribution(pd.concat([rest, orig_log], ignore_index=True))
    akka = A[(A.benchmark == "throughput") & (A.language == "scala_akka")].set_index("factor")
    assert akka.loc[gap_tables.JVM_FLAGS, "ratio"] == pytest.approx(1.8, rel=1e-3)
    assert akka.loc[gap_tables.JVM_FLAGS, "n_rounds"] == 5
    assert akka.loc["program", "ratio"] == pytest.approx(1.5 / 1.8, rel=0.03)
    assert "with our JVM flags" in akka.loc["program", "what"]
    assert akka.loc["not attributed", "what"].startswith("the original here, as the authors ran it")
    factors = [f for f in akka.index if f in gap_tables.PRODUCT]
    assert factors == list(gap_tables.PRODUCT)  # the order of the chain from today to the paper
    product = float(np.prod(akka.loc[factors, "ratio"]))
    assert akka.loc["product", "ratio"] == pytest.approx(product, rel=1e-9)
    assert akka.loc["product", "ratio"] / akka.loc["total", "ratio"] == pytest.approx(1.0, rel=0.1)
    # the same sides with the original as the authors ran it only: the table as before the flags
    before = attribution.attribution(
        pd.concat([rest, orig_log[orig_log["side"] == attribution.ORIGINAL]], ignore_index=True)
    )
    b = before[before.language == "scala_akka"].set_index("factor")
    assert gap_tables.JVM_FLAGS not in b.index
    assert b.loc["program", "ratio"] == pytest.approx(1.5, rel=0.03)
    assert b.loc["program", "what"] == "ours paper on scala_akka24 / the original"
    assert b.loc["product", "ratio"] == pytest.approx(akka.loc["product", "ratio"], rel=0.03)


def test_the_flags_piece_alone_measures_jvm_flags_and_program_and_leaves_the_rest_to_other_pieces(
    tmp_path, monkeypatch
):
    """A sweep of our paper variant and the original both ways (throughput-flags): `jvm flags`,
    `program` and `not attributed` measured, the factors it does not run n/a, so no product;
    combined with an older piece, each cell from the sweep that measured it."""
    orig_log = _original_log(tmp_path, monkeypatch, [1.0, 0.9, 1.2, 1.0, 1.1])
    paper = orig_log[orig_log["side"] == attribution.ORIGINAL_OURS].assign(side="scala_akka24:paper")
    paper["value"] *= 0.9
    A = attribution.attribution(pd.concat([paper, orig_log], ignore_index=True))
    akka = A.set_index("factor")
    assert akka.loc["program", "ratio"] == pytest.approx(0.9, rel=1e-3)
    assert akka.loc[gap_tables.JVM_FLAGS, "ratio"] == pytest.approx(1.8, rel=1e-3)
    for f in ("total", "release", "quirks", "product"):
        assert np.isnan(akka.loc[f, "ratio"]), f
    old = attribution.attribution(_sides()[lambda d: d["benchmark"] == "throughput"])
    C = gap_tables.combine({"gap-throughput-1core-20261129T000000Z": old, "gap-throughput-flags-20261202T000000Z": A})
    c = C[C.language == "scala_akka"].set_index("factor")
    assert c.loc["release", "sweep"].startswith("gap-throughput-1core") and c.loc["product", "ratio"] > 0
    assert c.loc["program", "sweep"].startswith("gap-throughput-flags")
    assert list(c.index[:7]) == ["total", *gap_tables.PRODUCT, "product"]
    assert "| jvm flags |" in gap_tables.markdown(C)


def test_an_older_originals_log_reads_as_before(tmp_path, monkeypatch):
    """A line without the flags field is the original as the authors ran it: the side the
    tables always had, and the same table whether the field is absent or says so."""
    orig_log = _original_log(tmp_path, monkeypatch, [1.0, 1.0])
    lines = (tmp_path / "sweep" / runner.FILE_NAME).read_text().splitlines()
    theirs = [json.loads(x) for x in lines if runner.flags_of(json.loads(x)) == programs.AUTHORS]
    for rec in theirs:
        rec["settings"] = {"program": "original"}
    (tmp_path / "sweep" / runner.FILE_NAME).write_text("".join(json.dumps(r) + "\n" for r in theirs))
    S = attribution.sides(tmp_path / "sweep")
    assert set(S["side"]) == {attribution.ORIGINAL}
    pd.testing.assert_frame_equal(
        S.reset_index(drop=True), orig_log[orig_log["side"] == attribution.ORIGINAL].reset_index(drop=True)
    )
    assert _cell(attribution.attribution(S), "throughput", "scala_akka", "not attributed")["what"] == (
        "the original here / the paper's value; 0 run(s) of the original printed nothing"
    )


def test_table_only_refuses_overrides():
    """--table-only runs nothing, so a --set beside it would be ignored without a word."""
    import subprocess
    import sys
    from pathlib import Path

    script = Path(__file__).resolve().parents[2] / "scripts" / "gap.py"
    r = subprocess.run(
        [sys.executable, str(script), "--table-only", "--set", "defaults.trials=1", "--sweep-id", "gap-none"],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 2 and "--set" in r.stderr and "runs nothing" in r.stderr
