"""The Akka throughput gap: the original program's runner (serverbench.benchmarks.throughput.original), the
akka-gap profile, and the attribution table (benchmarks/throughput/gap.py)."""

import json
import math
import os
import sys
import textwrap

import numpy as np
import pandas as pd
import pytest

from serverbench import records
from serverbench.benchmarks.throughput import gap
from serverbench.benchmarks.throughput import original as akka_original

PARAMS = {"pairs": 4, "message_bytes": 500, "duration_s": 2.0, "report_every": 10000, "payload": "copy"}
HOST = {"hostname": "h", "cpu_model": "cpu", "logical_cpus": 2, "memory_bytes": 1 << 30, "os": "Linux", "kernel": "6"}


def _fake_java(tmp_path, body: str) -> str:
    """A stand-in for `java`: a Python script that gets the original's argv."""
    p = tmp_path / "fake-java"
    p.write_text(f"#!{sys.executable}\nimport sys, time\n" + textwrap.dedent(body))
    p.chmod(0o755)
    return str(p)


def _run(tmp_path, body: str, timeout_s: float = 30.0) -> dict:
    jar = tmp_path / "maxSpeakers.jar"
    jar.write_bytes(b"")
    java = _fake_java(tmp_path, body)
    return akka_original.run("s1", 2, 1, PARAMS, HOST, sorted(os.sched_getaffinity(0)), timeout_s, jar, java)


def test_the_originals_argv_is_its_own_main_with_the_window_set():
    a = akka_original.argv("/x/maxSpeakers.jar", 2, 64, 60.0)
    want = ["java", "-XX:ActiveProcessorCount=2", "-Dserverbench.window.ms=60000", "-jar", "/x/maxSpeakers.jar", "64"]
    assert a == want


def test_a_printed_count_is_a_raw_record_with_its_rate(tmp_path):
    rec = _run(
        tmp_path,
        """
        assert sys.argv[-1] == "4" and "-Dserverbench.window.ms=2000" in sys.argv
        print("Number of actors: 4")
        print("Total number of messages after 2.004 seconds: 3121000")
        """,
    )
    assert records.raw_errors(rec) is None
    assert rec["status"] == "invalid" and rec["status_reason"] == akka_original.PRINTED_REASON
    assert rec["settings"] == {"program": "original"} and rec["language"] == "scala_akka24"
    assert rec["config_id"] == (
        "throughput/scala_akka24/original/c1/duration_s=2,message_bytes=500,pairs=4,payload=copy,report_every=10000"
    )
    assert math.isclose(akka_original.msgs_per_min(rec), 3121000 / 2.004 * 60)
    assert rec["pinned_cpus"] == sorted(os.sched_getaffinity(0))[:1]
    assert rec["command"][-2] == "maxSpeakers.jar"  # no machine path: the jar lies outside the home folder here
    assert akka_original.portable_jar(akka_original.Path.home() / "x" / "a.jar") == "~/x/a.jar"


def test_a_run_that_printed_nothing_crashed_or_hung_has_no_rate(tmp_path):
    silent = _run(tmp_path, 'print("Used memory in end: 40MB")\n')
    assert silent["status"] == "invalid" and silent["status_reason"].startswith("printed no count")
    crashed = _run(tmp_path, 'print("Total number of messages after 1.0 seconds: 5")\nsys.exit(3)\n')
    assert crashed["status"] == "crashed" and crashed["exit_code"] == 3
    hung = _run(tmp_path, "time.sleep(30)\n", timeout_s=0.5)
    assert hung["status"] == "timeout"
    for rec in (silent, crashed, hung):
        assert records.raw_errors(rec) is None and akka_original.msgs_per_min(rec) is None


def test_an_unbuilt_original_is_one_clear_error(tmp_path, monkeypatch):
    monkeypatch.setenv(akka_original.ENV_JAR, str(tmp_path / "absent.jar"))
    with pytest.raises(akka_original.OriginalError, match="scripts/akka-original-build.sh"):
        akka_original.jar_path()


def test_each_round_puts_another_block_first():
    assert [akka_original.blocks(k)[0] for k in (1, 2, 3, 4)] == ["original", "knobs", "fair", "original"]
    assert all(sorted(akka_original.blocks(k)) == ["fair", "knobs", "original"] for k in range(1, 7))


def test_the_profiles_pieces_run_the_papers_settings():
    from serverbench.harness import load_profile
    from serverbench.harness.planning.pieces import pieces

    p = pieces("akka-gap")
    assert set(p) == {"1core", "2cores", "pilot"}
    full = load_profile("akka-gap", p["1core"].sets)
    assert full["throughput"]["duration_s"] == [60.0] and full["throughput"]["message_bytes"] == [500]
    assert [c for c, _ in akka_original.configs(p["1core"].sets)] == [1, 1, 1]
    assert sorted(x["pairs"] for _, x in akka_original.configs(p["2cores"].sets)) == [1, 4, 64]
    pilot = load_profile("akka-gap", p["pilot"].sets)
    assert pilot["throughput"]["duration_s"] == [10.0] and pilot["defaults"]["trials"] == 3
    assert {c for c, _ in akka_original.configs(p["pilot"].sets)} == {1, 2}


def _sides(rounds: int = 5) -> pd.DataFrame:
    """Known factors: today = 8 x port fair; port fair = 2 x port paper; port paper =
    1.5 x the original; the original = 0.5 x the paper's value (18.458 M at 1 core, 1 pair);
    JDK 25 = 1.1 x JDK 17; the dispatcher quirk alone halves the rate."""
    rng = np.random.default_rng(1)
    base = 0.5 * 18_458_000
    values = {
        "original": base,
        "scala_akka24:paper": base * 1.5,
        "scala_akka24:fair": base * 3.0,
        "scala_akka:fair": base * 24.0,
        "scala_akka24:dispatcher": base * 1.5,
        "scala_pekko:fair": base * 10,
        "scala_pekko_jdk25:fair": base * 11,
    }
    rows = []
    for k in range(1, rounds + 1):
        drift = 1 + 0.2 * rng.standard_normal()  # a slow round slows every side
        for side, v in values.items():
            value = v * drift * (1 + 0.01 * rng.standard_normal())
            rows.append({"side": side, "cores": 1, "pairs": 1, "trial": k, "value": value})
    return pd.DataFrame(rows).assign(printed=True)


def test_the_attribution_recovers_known_factors_paired_by_round():
    from serverbench.analysis.reading import reference

    A = gap.attribution(_sides(), reference.fig5_median()).set_index("factor")
    want = {"release": 8.0, "quirks": 2.0, "program": 1.5, "quirk:dispatcher": 2.0, "jdk 25 / 17": 1.1}
    for factor, r in want.items():
        row = A.loc[factor]
        assert abs(row["ratio"] / r - 1) < 0.03, factor
        assert row["lo"] <= row["ratio"] <= row["hi"] and row["n_rounds"] == 5
        assert row["level"] == pytest.approx(1 - 2 / 2**5)
    # against the paper's single value the round's drift is not removed: a wider interval
    assert A.loc["unexplained (machine, year)", "lo"] <= 0.5 * 1.3 and A.loc["total", "n_rounds"] == 5
    assert A.loc["product", "ratio"] / A.loc["total", "ratio"] == pytest.approx(1.0, rel=0.05)
    assert math.isnan(A.loc["quirk:exit", "ratio"])  # not run: no pair, no number
    assert list(A.reset_index().columns) == gap.COLUMNS


def test_rounds_where_the_original_printed_nothing_drop_out_of_its_pairs():
    from serverbench.analysis.reading import reference

    S = _sides()
    silent = (S["side"] == "original") & S["trial"].isin([2, 4])
    S.loc[silent, "value"], S.loc[silent, "printed"] = np.nan, False
    A = gap.attribution(S, reference.fig5_median()).set_index("factor")
    assert A.loc["program", "n_rounds"] == 3 and A.loc["release", "n_rounds"] == 5
    assert "2 run(s) of the original printed nothing" in A.loc["unexplained (machine, year)", "what"]


def test_sides_reads_the_harness_log_and_the_originals_file(tmp_path):
    rec = _run(tmp_path, 'print("Total number of messages after 2.0 seconds: 1000000")\n')
    sweep = tmp_path / "sweep"
    sweep.mkdir()
    (sweep / akka_original.FILE_NAME).write_text(json.dumps(rec) + "\n")
    S = gap.sides(sweep)
    assert S.to_dict("records") == [
        {"side": "original", "cores": 1, "pairs": 4, "trial": 2, "value": 30_000_000.0, "printed": True}
    ]


def test_the_markdown_table_has_a_row_per_factor_and_a_cell_per_configuration():
    from serverbench.analysis.reading import reference

    S = _sides()
    S = pd.concat([S, S.assign(cores=2)], ignore_index=True)
    md = gap.markdown(gap.attribution(S, reference.fig5_median())).splitlines()
    assert md[0] == "| factor | 1 core, 1 pair | 2 cores, 1 pair |"
    rows = {line.split(" | ")[0].lstrip("| "): line for line in md[2:]}
    assert list(rows) == ["total", "release", "quirks", "program", "unexplained (machine, year)", "product"] + [
        f"quirk:{q}" for q in gap.QUIRKS
    ] + ["jdk 25 / 17"]
    assert "n=5 @94%" in rows["release"] and rows["release"].count("[") == 2
    assert rows["quirk:exit"].endswith("| n/a | n/a |")  # not run
    assert "[" not in rows["product"]  # a product of point estimates has no interval
