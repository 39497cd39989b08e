"""Raw logs -> processed tables: retries, warm-ups, counts, medians, failures, CLI."""

import dataclasses
import io
import json

import numpy as np
import pandas as pd
import pytest

import synthetic_sweeps
from serverbench import cli
from serverbench.analysis.reading import process, synthetic
from serverbench.rawdata import records


def _pp(lang, t, trial, **kw):
    return synthetic.raw_record(
        "pingping", lang, {"message_bytes": 5000, "repetitions": 1000}, {"elapsed_s": t}, trial=trial, **kw
    )


def test_synthetic_records_are_schema_valid():
    for rec in synthetic_sweeps.paper_like_sweep(trials=1)[:50]:
        assert records.raw_errors(rec) is None
    bad = synthetic.raw_record("spawn", "go", {"processes": 10}, None, status="crashed")
    assert records.raw_errors(bad) is None and bad["metrics"] is None


def test_retry_selection_warmup_and_counts(tmp_path):
    recs = [
        _pp("go", 9.0, 0, warmup=True, started_utc="2026-01-01T00:00:00Z"),  # warm-up: never in statistics
        synthetic.raw_record(
            "pingping",
            "go",
            {"message_bytes": 5000, "repetitions": 1000},
            None,
            trial=1,
            status="crashed",
            started_utc="2026-01-01T00:00:01Z",
        ),
        _pp("go", 1.0, 1, started_utc="2026-01-01T00:00:02Z"),  # the retry that succeeded
        _pp("go", 2.0, 2, started_utc="2026-01-01T00:00:03Z"),
        _pp("go", 3.0, 3, started_utc="2026-01-01T00:00:04Z"),
        synthetic.raw_record(
            "pingping",
            "go",
            {"message_bytes": 5000, "repetitions": 1000},
            None,
            trial=4,
            status="timeout",
            started_utc="2026-01-01T00:00:05Z",
        ),  # failed, never retried ok
    ]
    P = synthetic.processed_from(recs, tmp_path)
    runs = P.runs
    assert len(runs) == 6
    sel = runs[runs["selected"] & ~runs["warmup"]]
    assert sorted(sel["trial"]) == [1, 2, 3, 4]
    assert sel[sel["trial"] == 1]["status"].item() == "ok"
    assert sel[sel["trial"] == 1]["failed_attempts"].item() == 1
    s = P.stat("pingping", "elapsed_s").iloc[0]
    assert (s["n_trials"], s["n_ok"], s["n_failed"], s["n_invalid"], s["n_failed_attempts"]) == (4, 3, 1, 0, 2)
    assert s["median"] == 2.0 and s["ci_lo"] == 1.0 and s["ci_hi"] == 3.0
    assert s["statuses"] == "crashed:1;ok:3;timeout:1"
    f = P.failures.set_index("status")
    assert f.loc["crashed", "count"] == 1 and f.loc["crashed", "retried_ok"] == 1
    assert f.loc["timeout", "retried_ok"] == 0


@pytest.mark.slow
def test_tables_from_paper_like_sweep(tmp_path):
    recs = synthetic_sweeps.paper_like_sweep(trials=3)
    manifest = {
        "profile": {"name": "quick"},
        "not_runnable": [{"benchmark": "throughput", "cores": c, "reason": "2 CPUs"} for c in (4, 8, 16, 32)],
    }
    P = synthetic.processed_from(recs, tmp_path, manifest)
    assert P.info["profile"] == "quick"
    assert P.info["unrunnable_cores"] == [4, 8, 16, 32]
    assert P.info["logical_cpus"] == 2
    assert set(P.summary["table"]) == {"pingping", "spawn", "spawn_max", "throughput"}
    lim = P.spawn_max_limits.set_index("language")
    assert lim.loc["scala_akka", "max_ok_processes"] == 800_000
    assert lim.loc["go", "first_failed_processes"] == 400_000
    assert bool(lim.loc["go", "limit_found"])
    assert "over_memory_budget" in lim.loc["go", "failure"]
    r = P.ratios
    assert set(r["table"]) == {"pingping", "spawn", "throughput"}
    assert (r["ci_lo"] <= r["ratio"]).all() and (r["ratio"] <= r["ci_hi"]).all()
    ct = P.cpu_time
    assert {"system_share_of_cpu", "timed_share_of_wall"} <= set(ct.columns)
    tp = P.stat("throughput", "steady_msgs_per_min")
    assert tp["median"].notna().all()
    # processing is deterministic
    again = synthetic.processed_from(recs, tmp_path / "again", manifest)
    pd.testing.assert_frame_equal(P.ratios, again.ratios)


def test_sessions_add_not_runnable(tmp_path):
    recs = [_pp("go", 1.0, 0)]
    sweep = synthetic.write_sweep(
        tmp_path / "raw" / "synthetic-1", recs, {"profile": {"name": "smoke"}, "not_runnable": []}
    )
    (sweep / "sessions.jsonl").write_text(
        json.dumps({"event": "start", "not_runnable": [{"benchmark": "throughput", "cores": 4, "reason": "x"}]}) + "\n"
    )
    process.process_sweep(sweep, tmp_path / "p")
    info = process.Processed(tmp_path / "p").info
    assert info["unrunnable_cores"] == [4] and info["sessions"] == 1


def test_steady_rate():
    s = [[0.1 * i, 1000 * i] for i in range(1, 11)]
    assert process.steady_rate_per_min(s) == pytest.approx(1000 / 0.1 * 60)
    assert np.isnan(process.steady_rate_per_min([[1, 2]]))
    # the final sample adds the remainders still unreported (batches of 10,000 per pair): it
    # must not end the window (a real Erlang run at 64 pairs of a committed runtimes sweep)
    erl = [[0.101, 80000], [0.232, 170000], [0.400, 210000], [0.513, 290000], [0.618, 400000]]
    erl += [[0.720, 510000], [0.824, 610000], [0.934, 710000], [1.004, 1067528]]
    assert process.steady_rate_per_min(erl) == pytest.approx((710000 - 290000) / (0.934 - 0.513) * 60)
    assert np.isnan(process.steady_rate_per_min([[0.1, 10], [0.2, 20], [0.25, 27]]))
    assert np.isnan(process.steady_rate_per_min(None))


def test_bad_raw_line_is_an_error_unless_skipped(tmp_path):
    sweep = synthetic.write_sweep(tmp_path / "raw" / "s1", [_pp("go", 1.0, 0)])
    with open(sweep / "runs.jsonl", "a") as f:
        f.write("{not json\n")
    with pytest.raises(records.RawLogError):
        process.process_sweep(sweep, tmp_path / "p")
    with pytest.warns(UserWarning, match="skipped 1 bad raw line"):
        out = process.process_sweep(sweep, tmp_path / "p", skip_bad=True)
    assert json.loads(out["sweep"].read_text())["skipped_bad_lines"] == 1


@pytest.mark.e2e
def test_cli_process_figures_claims(tmp_path, monkeypatch):
    monkeypatch.setenv("SERVERBENCH_DATA", str(tmp_path / "data"))
    monkeypatch.setenv("SERVERBENCH_PAPER", str(tmp_path / "paper"))
    sweep = synthetic.write_sweep(
        tmp_path / "data" / "raw" / "synthetic-1", synthetic_sweeps.paper_like_sweep(trials=3)
    )
    out, err = io.StringIO(), io.StringIO()
    assert cli.run(["process", str(sweep)], out, err) == 0, err.getvalue()
    assert (tmp_path / "data" / "processed" / "synthetic-1" / "claims.csv").exists()
    out = io.StringIO()
    assert cli.run(["claims", "synthetic-1"], out, err) == 0, err.getvalue()
    assert "C1" in out.getvalue() and "supported" in out.getvalue()
    assert cli.run(["figures", "synthetic-1", "--no-reference"], io.StringIO(), err) == 0, err.getvalue()
    assert (tmp_path / "paper" / "figures" / "fig5_throughput.pdf").exists()
    err = io.StringIO()
    assert cli.run(["process", str(tmp_path / "nope")], io.StringIO(), err) == 2
    assert "no sweep folder" in err.getvalue()


@pytest.mark.slow
def test_report_tables(tmp_path):
    from serverbench.analysis.reporting import report

    recs = synthetic_sweeps.paper_like_sweep(trials=3) + [
        synthetic.raw_record("throughput", "go", {"pairs": 1}, None, cores=1, trial=9, status="timeout")
    ]
    P = synthetic.processed_from(recs, tmp_path, {"profile": {"name": "quick"}, "runtime_versions": {}})
    m = report.machine_table(P).set_index("item")["value"]
    assert m["logical CPUs"] == "2" and "Synthetic CPU" in m["CPU"]  # the table's values are text
    d = report.differences_table(P).set_index("aspect")
    assert d.loc["trials per point", "this sweep"].startswith("pingping 3, spawn 3")
    # the rows each benchmark's package adds (registry.setup_rows), between trials and cores
    assert {"PingPing largest repetitions", "spawn, Fig. 4 (b) largest N", "throughput run length"} <= set(d.index)
    assert list(d.index)[-1] == "cores"
    assert "4, 8, 16, 32" in d.loc["cores", "this sweep"]
    # a sweep that ran only PingPing gets no rows about benchmarks it did not run
    only = [r for r in recs if r["benchmark"] == "pingping"]
    d1 = report.differences_table(synthetic.processed_from(only, tmp_path / "pp", {"profile": {"name": "pp"}}))
    assert "PingPing largest repetitions" in set(d1["aspect"]) and "not run" not in set(d1["this sweep"])
    assert not {"spawn, Fig. 4 (b) largest N", "spawn, Fig. 4 (a) memory", "throughput run length"} & set(d1["aspect"])
    f = report.failures_table(P)
    assert {"timeout", "over_memory_budget"} <= set(f["status"])
    assert not report.time_table(P).empty and "all attempts" in report.status_counts(P).columns
    assert report.verdict_style("supported").startswith("background-color")
    assert len(report.reference_notes()) == 3


def test_a_search_attempt_is_retried_ok_only_by_its_own_step():
    """A scout step and a grid step at one rate share a config_id and a trial (the run
    number): an invalid scout attempt was once counted "retried ok" by the grid step's ok
    run, so an IM report's failures table claimed more re-runs than its re-run table listed."""
    from serverbench.analysis.reading import side_tables

    runs = pd.DataFrame(
        {
            "table": "im_rate",
            "language": "im_loadgen",
            "config_id": "c",
            "trial": [1, 1, 1, 1],
            "search_name": ["im_rate"] * 4,
            "search_step": [8, 10, 11, 11],
            "status": ["invalid", "ok", "invalid", "ok"],
            "is_ok": [False, True, False, True],
            "status_reason": "generator",
            "stderr_last_line": "",
        }
    )
    f = side_tables.failures(runs).set_index("status")
    assert f.loc["invalid", "count"] == 2 and f.loc["invalid", "retried_ok"] == 1  # step 11's, not step 8's
    plain = runs.drop(columns=["search_name", "search_step"])  # the control: no search, one key
    assert side_tables.failures(plain).set_index("status").loc["invalid", "retried_ok"] == 2


def test_a_socket_sweeps_machine_table_names_its_servers_runtimes():
    """The servers' runtimes (their own records, in the runs table) are listed beside the
    clients' (sweep.json); an IM report once named only the load generator's."""
    from types import SimpleNamespace

    from serverbench.analysis.reporting import report

    runs = pd.DataFrame(
        {
            "is_ok": [True, True, False, True],
            "server_language": ["erlang", "ngircd", "go", "im_loadgen"],
            "server.record.runtime.name": ["erlang", "ngircd", "go", "rust"],
            "server.record.runtime.version": ["OTP 25", "26.1", "go1.26", "1.95.0"],
        }
    )
    info = {"host": {}, "runtime_versions": {"im_loadgen": ["rust 1.95.0"]}}
    m = report.machine_table(SimpleNamespace(info=info, runs=runs)).set_index("item")["value"]
    assert m["runtime: Erlang (server)"] == "erlang OTP 25" and m["runtime: ngIRCd (C) (server)"] == "ngircd 26.1"
    assert "runtime: Go (server)" not in m  # its only run was not ok
    assert "runtime: IM load generator (server)" not in m  # the null sink: the same runtime as the client's
    assert report.server_runtimes(pd.DataFrame({"is_ok": [True]})) == {}  # a sweep without servers


def test_a_registered_table_of_another_benchmark_is_processed(tmp_path, monkeypatch):
    """A module declares a table for its own benchmark: its params and metrics become
    columns, summary.csv and ratios.csv cover it, P.values reads it."""
    from serverbench.analysis.reading import registry

    real = registry.load()
    tables = {n: t for n, t in real.tables.items() if t.benchmark != "echo_flood"}  # not the echo module's own
    tables["toy_echo"] = registry.TableSpec(
        "toy_echo", "echo_flood", ("variant", "cores", "clients"), ("requests_per_s",), "requests_per_s"
    )
    monkeypatch.setattr(registry, "load", lambda: dataclasses.replace(real, tables=tables))
    recs = []
    for lang, rate in (("go", 100.0), ("erlang", 50.0)):
        for t in range(1, 6):
            r = synthetic.raw_record(
                "pingping",
                lang,
                {"message_bytes": 1, "repetitions": 1},
                {"elapsed_s": 1.0},
                trial=t,
                validate=False,
            )
            r.update(
                benchmark="echo_flood",
                params={"clients": 4},
                metrics={"requests_per_s": rate + t},
                config_id=f"toy-{lang}",
            )
            recs.append(r)
    # (the raw schema's echo_flood record is the echo module's; here the loader's
    # flattening is used directly, as process_sweep does after validation)
    runs = process.runs_table(records.flatten(recs))
    v = process.trial_values(runs, "toy_echo", "requests_per_s")
    assert len(v) == 10 and set(v.columns) >= {"language", "clients", "value"}
    s = process.summarize(runs)
    s = s[(s["table"] == "toy_echo") & (s["metric"] == "requests_per_s")]
    assert sorted(s["median"]) == [53.0, 103.0]
    r = process.ratios(runs)
    r = r[r["table"] == "toy_echo"].iloc[0]
    assert (r["numerator"], r["denominator"]) == ("erlang", "go") and r["ci_level"] >= 0.95


def test_prepare_processes_and_judges_a_sweep_once_until_its_raw_files_or_code_change(tmp_path, monkeypatch):
    """A render's four notebooks each call prepare: the first processes and judges the sweep,
    the others reuse the tables; new raw lines or a change to the analysis code redo both."""
    from serverbench.analysis.reporting import notebook

    monkeypatch.setenv("SERVERBENCH_DATA", str(tmp_path / "data"))
    recs = [_pp(lang, t, i) for lang in ("go", "erlang") for i, t in enumerate((1.0, 1.1, 1.2))]
    sweep = synthetic.write_sweep(
        tmp_path / "data" / "raw" / recs[0]["sweep_id"], recs, {"profile": {"name": "synthetic"}}
    )
    calls = []
    real = process.process_sweep
    monkeypatch.setattr(process, "process_sweep", lambda d, *a, **k: calls.append(d) or real(d, *a, **k))
    judged = []
    real_write = notebook.claims_mod.write_claims
    monkeypatch.setattr(notebook.claims_mod, "write_claims", lambda P, **k: judged.append(P) or real_write(P, **k))
    P = notebook.prepare(sweep)
    assert (P.folder / "claims.csv").exists() and len(calls) == len(judged) == 1
    notebook.prepare(sweep)
    assert len(calls) == len(judged) == 1  # same raw files, same code: nothing redone
    monkeypatch.setattr(notebook, "_code_fingerprint", lambda: "changed analysis code")
    notebook.prepare(sweep)
    assert len(calls) == len(judged) == 2
    with open(sweep / "runs.jsonl", "a") as f:
        f.write(json.dumps(_pp("go", 1.3, 3)) + "\n")
    notebook.prepare(sweep)
    assert len(calls) == len(judged) == 3
