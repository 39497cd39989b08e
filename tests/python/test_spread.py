"""The between-sweep spread (analysis/spread.py) is kept per kind of machine, and a sweep is
judged with the rows of the kind it ran on (claims.decision.load_spreads): a spread
measured on an AMD EPYC must not set the decision regions of a sweep on an Intel Xeon."""

from __future__ import annotations

import io
import json

import numpy as np
import pandas as pd
import pytest

from serverbench import cli
from serverbench.analysis import spread
from serverbench.analysis import synthetic as S
from serverbench.analysis.claims import decision, engine

KIND = "Synthetic CPU, 2 CPUs"  # synthetic.HOST's kind


def test_the_kind_of_a_machine_is_its_cpu_model_and_logical_cpus():
    assert decision.machine_kind(S.HOST) == KIND
    assert decision.machine_kind({"cpu_model": "AMD EPYC", "logical_cpus": 2, "hostname": "a"}) == "AMD EPYC, 2 CPUs"
    assert decision.machine_kind({"cpu_model": "AMD EPYC"}) == "AMD EPYC"
    assert decision.machine_kind({}) is None and decision.machine_kind(None) is None


def _spread_file(data, rows):
    d = data / "processed" / decision.SPREAD_FOLDER
    d.mkdir(parents=True)
    pd.DataFrame(rows).to_csv(d / decision.SPREAD_FILE, index=False)


def test_a_sweep_is_judged_with_its_own_kind_of_machine_s_spread(tmp_path, monkeypatch):
    monkeypatch.setenv("SERVERBENCH_DATA", str(tmp_path / "data"))
    times = {("erlang", 100_000): [0.22] * 5, ("go", 100_000): [0.155] * 5, ("scala_akka", 100_000): [0.8] * 5}
    P = S.processed_from(S.spawn_runs(times), tmp_path / "sweep")

    def c4_spread():
        return next(v for v in engine.check_all(P, ids={"C4"})).spread_log

    assert c4_spread() == decision.DEFAULT_SPREAD_LOG  # no table at all

    _spread_file(tmp_path / "data", [{"machine": "AMD EPYC, 2 CPUs", "table": "spawn", "spread_log": 0.07}])
    assert decision.load_spreads(machine="AMD EPYC, 2 CPUs") == {"spawn": 0.07}
    assert decision.load_spreads(machine=KIND) == {}
    assert c4_spread() == decision.DEFAULT_SPREAD_LOG  # measured on another kind: the default

    (tmp_path / "data" / "processed" / decision.SPREAD_FOLDER / decision.SPREAD_FILE).unlink()
    (tmp_path / "data" / "processed" / decision.SPREAD_FOLDER).rmdir()
    _spread_file(
        tmp_path / "data",
        [
            {"machine": "AMD EPYC, 2 CPUs", "table": "spawn", "spread_log": 0.07},
            {"machine": KIND, "table": "spawn", "spread_log": 0.11},
        ],
    )
    assert c4_spread() == 0.11
    v = next(v for v in engine.check_all(P, ids={"C4"}))
    assert v.spread_log == 0.11 and v.verdict == engine.CONTRADICTED  # go/erlang 0.70 is past even the wider gap


def test_a_table_without_machines_is_nobody_s(tmp_path):
    _spread_file(tmp_path, [{"table": "spawn", "spread_log": 0.07}])
    assert decision.load_spreads(tmp_path / "processed", machine=KIND) == {}


def _sweeps(tmp_path, cpu_models, seed=0):
    """Raw sweeps of spawn whose go/erlang ratio moves between sweeps by a known amount."""
    rng = np.random.default_rng(seed)
    out = []
    for i, cpu in enumerate(cpu_models):
        shift = float(np.exp(rng.normal(0.0, 0.2)))
        times = {
            ("erlang", 100_000): [0.22 * shift * (1 + 0.01 * k) for k in range(5)],
            ("go", 100_000): [0.155 * (1 + 0.01 * k) for k in range(5)],
            ("scala_akka", 100_000): [0.8 * (1 + 0.01 * k) for k in range(5)],
        }
        recs = S.spawn_runs(times)
        for r in recs:
            r["sweep_id"] = f"stab-{i}"
            r["host"] = {**S.HOST, "cpu_model": cpu}
        manifest = {"profile": {"name": "synthetic"}, "host": {**S.HOST, "cpu_model": cpu}}
        out.append(S.write_sweep(tmp_path / "raw" / f"stab-{i}", recs, manifest))
    return out


@pytest.mark.slow
def test_measuring_one_kind_keeps_the_others_rows(tmp_path):
    out = tmp_path / "spread"
    intel = _sweeps(tmp_path / "a", ["Intel Xeon"] * 3)
    spread.measure(intel, out)
    amd = _sweeps(tmp_path / "b", ["AMD EPYC"] * 3, seed=1)
    spread.measure(amd, out)
    t = pd.read_csv(out / decision.SPREAD_FILE)
    assert set(t["machine"]) == {"Intel Xeon, 2 CPUs", "AMD EPYC, 2 CPUs"}
    s = t.set_index(["machine", "table"])["spread_log"]
    assert s[("Intel Xeon, 2 CPUs", "spawn")] > 0.05  # the sweeps moved by a log sd of 0.2
    prov = json.loads((out / "provenance.json").read_text(encoding="utf-8"))
    assert set(prov["machines"]) == {"Intel Xeon, 2 CPUs", "AMD EPYC, 2 CPUs"}
    assert list(prov["machines"]["AMD EPYC, 2 CPUs"]["sweeps"]) == ["stab-0", "stab-1", "stab-2"]

    again = _sweeps(tmp_path / "c", ["Intel Xeon"] * 2, seed=2)  # re-measured: Intel's rows replaced
    spread.measure(again, out)
    t2 = pd.read_csv(out / decision.SPREAD_FILE)
    assert (
        len(t2) == len(t) and (t2["machine"] == "AMD EPYC, 2 CPUs").sum() == (t["machine"] == "AMD EPYC, 2 CPUs").sum()
    )
    n = t.set_index(["machine", "table"])["n_differences"][("Intel Xeon, 2 CPUs", "spawn")]
    n2 = t2.set_index(["machine", "table"])["n_differences"][("Intel Xeon, 2 CPUs", "spawn")]
    assert n2 * 3 == n  # one pair of sweeps now, three before


def test_sweeps_of_two_kinds_are_not_pooled(tmp_path):
    dirs = _sweeps(tmp_path, ["Intel Xeon", "AMD EPYC"])
    with pytest.raises(ValueError, match="one kind of machine"):
        spread.measure(dirs, tmp_path / "spread")
    err = io.StringIO()
    code = cli.run(["spread", *map(str, dirs), "--out", str(tmp_path / "spread")], io.StringIO(), err)
    assert code == 2 and "Intel Xeon, 2 CPUs" in err.getvalue() and "AMD EPYC, 2 CPUs" in err.getvalue()
    assert not (tmp_path / "spread" / decision.SPREAD_FILE).exists()


@pytest.mark.parametrize(
    "name,text,says",
    [
        ("provenance.json", "{not json", "cannot be read"),
        ("provenance.json", '{"sweeps": {}, "machines": []}', "no 'machines' object"),
        ("spread.csv", "table,spread_log\nspawn,0.07\n", "no machine column"),
    ],
)
def test_what_is_recorded_is_never_overwritten_unread(tmp_path, name, text, says):
    """A spread folder whose files cannot be read as per-machine records stops the command
    before anything is measured, and the files are left as they were."""
    out = tmp_path / "spread"
    out.mkdir()
    (out / name).write_text(text, encoding="utf-8")
    dirs = _sweeps(tmp_path, ["Intel Xeon"] * 2)
    err = io.StringIO()
    code = cli.run(["spread", *map(str, dirs), "--out", str(out)], io.StringIO(), err)
    assert code == 2 and says in err.getvalue() and name in err.getvalue()
    assert (out / name).read_text(encoding="utf-8") == text
    assert sorted(p.name for p in out.iterdir()) == [name]


def _timed_sweeps(tmp_path, stage1_s, cpu="Intel Xeon", profile="quick"):
    """Raw sweep folders holding only what the stage-1 time needs: a manifest and the
    sessions log (stage 1's sessions, then a stage-2 one that must not count)."""
    out = []
    for i, t in enumerate(stage1_s):
        d = tmp_path / f"{profile}-{cpu.split()[0]}-{i}"
        d.mkdir(parents=True)
        manifest = {"profile": {"name": profile}, "host": {**S.HOST, "cpu_model": cpu}}
        (d / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
        lines = []
        if t is not None:  # an older sweep: no sessions log
            halves = [("a", 1, t / 2), ("b", 1, t / 2), ("c", 2, 30.0)]
            for sid, stage, took in halves:
                lines += [
                    {"event": "start", "session": sid, "stage": stage},
                    {"event": "end", "session": sid, "elapsed_s": took},
                ]
        (d / "sessions.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
        out.append(d)
    return out


def test_stage1_time_s_spread_is_measured_per_kind_and_profile(tmp_path):
    """How far stage 1's wall time moves between sweeps sets the chance that a re-run's
    second stage has a budget (analysis.rerun)."""
    out = tmp_path / "spread"
    times = [700.0, 760.0, 820.0]
    intel = _timed_sweeps(tmp_path / "a", [*times, None])  # the one without sessions is left out
    row = spread.stage1_row(intel)
    assert row["n_sweeps"] == 3 and row["machine"] == "Intel Xeon, 2 CPUs" and row["profile"] == "quick"
    assert row["stage1_log_sd"] == pytest.approx(np.std(np.log(times), ddof=1), abs=1e-4)  # stage 2's 30 s left out
    assert row["mean_stage1_s"] == pytest.approx(760.0)

    spread.measure_stage1(intel, out)
    spread.measure_stage1(_timed_sweeps(tmp_path / "b", [620.0, 625.0], cpu="AMD EPYC"), out)
    spread.measure_stage1(_timed_sweeps(tmp_path / "c", [500.0, 600.0]), out)  # Intel re-measured
    t = pd.read_csv(out / spread.STAGE1_FILE)
    assert sorted(t["machine"]) == ["AMD EPYC, 2 CPUs", "Intel Xeon, 2 CPUs"]
    assert t.loc[t["machine"] == "Intel Xeon, 2 CPUs", "n_sweeps"].item() == 2

    processed = tmp_path / "processed"
    (processed / decision.SPREAD_FOLDER).mkdir(parents=True)
    (out / spread.STAGE1_FILE).replace(processed / decision.SPREAD_FOLDER / spread.STAGE1_FILE)
    sd, measured = spread.stage1_log_sd("Intel Xeon, 2 CPUs", "quick", processed)
    assert measured and sd == pytest.approx(np.std(np.log([500.0, 600.0]), ddof=1), abs=1e-4)
    sd, measured = spread.stage1_log_sd("AMD EPYC, 2 CPUs", "quick", processed)
    assert measured and sd == spread.MIN_STAGE1_LOG_SD  # 0.006 measured in one hour: floored
    assert spread.stage1_log_sd("AMD EPYC, 2 CPUs", "smoke", processed) == (spread.DEFAULT_STAGE1_LOG_SD, False)
    assert spread.stage1_log_sd(None, "quick", processed) == (spread.DEFAULT_STAGE1_LOG_SD, False)


def test_stage1_time_needs_two_timed_sweeps_of_one_profile_and_kind(tmp_path):
    with pytest.raises(ValueError, match="fewer than two"):
        spread.stage1_row(_timed_sweeps(tmp_path / "a", [700.0, None]))
    mixed = _timed_sweeps(tmp_path / "b", [700.0]) + _timed_sweeps(tmp_path / "c", [700.0], profile="smoke")
    with pytest.raises(ValueError, match="one profile on one kind of machine"):
        spread.stage1_row(mixed)
    out = tmp_path / "spread"
    err = io.StringIO()
    code = cli.run(["spread", "--stage1-time", *map(str, mixed), "--out", str(out)], io.StringIO(), err)
    assert code == 2 and "smoke" in err.getvalue() and not out.exists()

    # --stage1-time reads the sessions logs only: no spread.csv
    dirs = _timed_sweeps(tmp_path / "d", [700.0, 740.0])
    assert cli.run(["spread", "--stage1-time", *map(str, dirs), "--out", str(out)], io.StringIO(), io.StringIO()) == 0
    assert sorted(p.name for p in out.iterdir()) == [spread.STAGE1_FILE]


@pytest.mark.parametrize(
    "text,says", [("machine,profile\nx,quick\n", "lacks column(s) stage1_log_sd"), ('"a,b\n1', "cannot be read")]
)
def test_a_stage1_file_that_cannot_be_read_is_named_and_kept(tmp_path, text, says):
    """stage1.csv holds other machines' measurements: a file that is not one stops both the
    command (exit 2, the file unchanged) and P(verdict) (no silent default)."""
    out = tmp_path / "processed" / decision.SPREAD_FOLDER
    out.mkdir(parents=True)
    (out / spread.STAGE1_FILE).write_text(text, encoding="utf-8")
    dirs = _timed_sweeps(tmp_path / "a", [700.0, 740.0])
    err = io.StringIO()
    code = cli.run(["spread", "--stage1-time", *map(str, dirs), "--out", str(out)], io.StringIO(), err)
    assert code == 2 and says in err.getvalue() and spread.STAGE1_FILE in err.getvalue()
    assert (out / spread.STAGE1_FILE).read_text(encoding="utf-8") == text
    with pytest.raises(ValueError, match="move it away"):
        spread.stage1_log_sd("Intel Xeon, 2 CPUs", "quick", tmp_path / "processed")
