"""Protocol 5's re-run rule (spec/protocol.json im.search.reruns) on the IM grid's runs (the
storm piece's latency, login and idle runs), as the searches' runs follow it: a run invalid
for a reason starting 'generator', or flagged interfered whatever its status, is re-run at
most twice; every attempt stays in the raw log, marked as a search's attempts are (raw
`search`: attempt, rerun_reason, rerun_of, final); the last attempt is the run's, counted
once in the processed tables and the IM report, its earlier attempts listed as re-runs with
their reason. A run invalid for the server's reason is not re-run, and another benchmark's
grid runs keep the harness's own rule.

The sweep runs through the harness (recording.sweep.run_sweep) with a fake socket family:
each attempt's record is im_fakes' generator record, its status scripted per round and
attempt; the interference flag is scripted too (a busy test machine must not re-run)."""

from __future__ import annotations

import json

import pytest

import im_fakes
from harness_fakes import fake
from serverbench.analysis.reading import process
from serverbench.benchmarks.im import parts_v5, tables_v5
from serverbench.benchmarks.im import search as im_search
from serverbench.benchmarks.im import tables as T
from serverbench.harness.recording import sweep
from serverbench.harness.running import interference
from serverbench.harness.running.environment import utc
from serverbench.harness.running.launch import Family, run_process
from serverbench.rawdata import records

LIMITED = "generator schedule slip p99 0.005 s > schedule_slip_limit_s 0.002: sends left late"
SETUP = "setup: 3 of 20 clients not registered"


class Script:
    """Each round's attempts, in order: 'ok', 'limited' (invalid, the generator's reason),
    'setup' (invalid, the server's), 'crashed'; a '+' suffix flags the attempt interfered.
    A round's attempts past its script repeat its last entry."""

    def __init__(self, rounds: dict[int, list[str]]):
        self.rounds, self.seen, self.interfered = rounds, {}, False

    def next(self, task) -> str:
        if task.language != "im_loadgen":  # our Go as the client (a sweep with go among its languages)
            self.interfered = False
            return "ok"
        n = self.seen.get(task.trial, 0)
        self.seen[task.trial] = n + 1
        script = self.rounds[task.trial]
        what = script[min(n, len(script) - 1)]
        self.interfered = what.endswith("+")
        return what.rstrip("+")


def im_record(script: Script):
    def run(lau, task) -> dict:
        what = script.next(task)
        params = {k: v for k, v in task.params.items() if k in ("mode", "clients", "rate_per_s", "seed")}
        if what == "crashed":
            rec = im_fakes.record("go", task.trial, params, status="crashed", reason="the server crashed")
        else:
            reason = {"ok": None, "limited": LIMITED, "setup": SETUP}[what]
            rec = im_fakes.record("go", task.trial, params, reason=reason)
            if reason:  # as the harness's classify words it
                rec["status_reason"] = f"the program's own validation failed (validation.ok false): {reason}"
        rec.update(sweep_id=lau.sweep_id, config_id=task.config_id, trial=task.trial, started_utc=utc())
        return rec

    return run


def _fields(script: Script):
    def fields(*args, **kw) -> dict:
        return {"other_cpu_s": 0.0, "other_cpu_share": 0.0, "interfered": script.interfered}

    return fields


def run_grid(tmp_path, monkeypatch, rounds: dict[int, list[str]], sweep_id: str = "g"):
    script = Script(rounds)
    monkeypatch.setitem(sweep.FAMILIES, "socket", Family(im_record(script), lambda lau, task: [0]))
    monkeypatch.setattr(interference, "fields", _fields(script))
    prof = tmp_path / "imgrid.toml"
    prof.write_text(im_fakes.tiny_grid("imgrid", trials=max(rounds)), encoding="utf-8")
    d = sweep.run_sweep(
        str(prof),
        sweep_id=sweep_id,
        benchmarks=["im"],
        raw_root=tmp_path / "raw",
        progress=False,
        commands={"im_loadgen": fake("ok", "im_loadgen")},
    )
    recs = [json.loads(x) for x in (d / "runs.jsonl").read_text(encoding="utf-8").splitlines()]
    assert recs and all(records.raw_errors(r) is None for r in recs)  # every attempt a valid line
    return d, recs, script


def by_round(recs: list[dict]) -> dict[int, list[dict]]:
    out: dict[int, list[dict]] = {}
    for r in recs:
        out.setdefault(r["trial"], []).append(r)
    return out


def marks(r: dict) -> tuple:
    s = r["search"]
    return (s["attempt"], s["rerun_reason"], s["rerun_of"], s["final"])


def processed(d, tmp_path):
    process.process_sweep(d, tmp_path / "processed" / d.name)
    return process.Processed(tmp_path / "processed" / d.name)


# ---- the harness: which runs are re-run, and how their attempts are marked ------------------
def test_a_grid_run_the_generator_limited_is_re_run_and_counted_once(tmp_path, monkeypatch):
    d, recs, _ = run_grid(tmp_path, monkeypatch, {1: ["limited", "ok"]})
    (one,) = by_round(recs).values()
    assert [r["status"] for r in one] == ["invalid", "ok"]  # both attempts in the raw log
    assert [marks(r) for r in one] == [(1, "generator", None, False), (2, None, "generator", True)]
    assert all("name" not in r["search"] and "rerun_of_interfered" not in r for r in one)  # no search step
    P = processed(d, tmp_path)
    lat = T.latency_part(P)  # the IM report's and claims' reading: one run, the ok attempt
    assert len(lat) == 1 and lat["is_ok"].all() and int(lat["attempt"].iloc[0]) == 2
    assert len(T.valid(lat)) == 1
    runs = P.runs[(P.runs["table"] == "im") & P.runs["selected"]]  # the processed tables' selection
    assert len(runs) == 1 and runs["status"].tolist() == ["ok"]
    s = P.summary[(P.summary["table"] == "im") & (P.summary["metric"] == "latency_p99_s")]
    assert (s["n_trials"].tolist(), s["n_ok"].tolist(), s["n"].tolist()) == ([1], [1], [1])
    re = parts_v5.reruns_table(P)  # the report's list of re-runs: the first attempt, with its reason
    assert len(re) == 1 and re["search"].iloc[0] == "grid latency"
    assert (re["run"].iloc[0], re["attempt"].iloc[0], re["rerun_reason"].iloc[0]) == (1, 1, "generator")
    assert parts_v5.runs_table(P).empty  # the searches' own table holds no grid run


def test_a_run_limited_three_times_has_three_attempts_and_stays_invalid(tmp_path, monkeypatch):
    d, recs, script = run_grid(tmp_path, monkeypatch, {1: ["limited"]})
    assert script.seen == {1: 3}  # two re-runs, not more
    assert [marks(r) for r in recs] == [
        (1, "generator", None, False),
        (2, "generator", "generator", False),
        (3, "generator", "generator", True),
    ]
    assert all(im_search.generator_limited(r) for r in recs)
    P = processed(d, tmp_path)
    lat = T.latency_part(P)
    assert len(lat) == 1 and int(lat["attempt"].iloc[0]) == 3 and T.valid(lat).empty
    assert parts_v5.reruns_table(P)["attempt"].tolist() == [1, 2]


def test_a_run_invalid_for_the_servers_reason_is_not_re_run(tmp_path, monkeypatch):
    d, recs, script = run_grid(tmp_path, monkeypatch, {1: ["setup"], 2: ["limited", "setup"]})
    rounds = by_round(recs)
    assert script.seen == {1: 1, 2: 2}
    assert [marks(r) for r in rounds[1]] == [(1, None, None, True)]
    assert [marks(r) for r in rounds[2]] == [(1, "generator", None, False), (2, None, "generator", True)]
    assert rounds[2][-1]["status_reason"].endswith(SETUP)


def test_an_interfered_run_is_re_run_whatever_its_status_and_the_last_attempt_is_the_runs(tmp_path, monkeypatch):
    # round 1: crashed and interfered, then ok; round 2: ok but interfered, then limited twice:
    # the last attempt (invalid) is the run's, not the earlier ok one
    d, recs, script = run_grid(tmp_path, monkeypatch, {1: ["crashed+", "ok"], 2: ["ok+", "limited"]})
    rounds = by_round(recs)
    assert [marks(r) for r in rounds[1]] == [(1, "interfered", None, False), (2, None, "interfered", True)]
    assert [r.get("rerun_of_interfered", False) for r in rounds[1]] == [False, True]  # as the harness marks it
    assert [r["status"] for r in rounds[2]] == ["ok", "invalid", "invalid"]
    assert [marks(r)[1] for r in rounds[2]] == ["interfered", "generator", "generator"]
    assert records.duplicate_runs(recs) == []
    P = processed(d, tmp_path)
    lat = T.latency_part(P).set_index("trial")
    assert lat.loc[1, "is_ok"] and not lat.loc[2, "is_ok"] and int(lat.loc[2, "attempt"]) == 3
    assert len(tables_v5.grid_attempts(P)) == 5
    # processing's own selection (summary.csv, ratios.csv) is the same attempt: round 2's last
    sel = P.runs[P.runs["selected"].astype(bool) & ~P.runs["warmup"].astype(bool)].set_index("trial")
    assert int(sel.loc[2, "attempt"]) == 3 and sel.loc[2, "status"] == "invalid"


def test_a_resumed_sweep_goes_on_with_an_unfinished_run_and_keeps_a_decided_one(tmp_path, monkeypatch):
    d, recs, _ = run_grid(tmp_path, monkeypatch, {1: ["limited"], 2: ["setup"]}, sweep_id="r")
    # as if interrupted after round 1's first attempt: its last two attempts were never written
    lines = (d / "runs.jsonl").read_text(encoding="utf-8").splitlines()
    kept = [x for x in lines if json.loads(x)["trial"] != 1 or json.loads(x)["search"]["attempt"] == 1]
    (d / "runs.jsonl").write_text("".join(x + "\n" for x in kept), encoding="utf-8")
    _, again, script = run_grid(tmp_path, monkeypatch, {1: ["ok"], 2: ["ok"]}, sweep_id="r")
    assert script.seen == {1: 1}  # round 2 was decided (invalid for the server): not run again
    assert [marks(r) for r in by_round(again)[1]] == [(1, "generator", None, False), (2, None, "generator", True)]


# ---- another benchmark's grid runs: the harness's own rule, as before ------------------------
def test_another_benchmarks_invalid_grid_run_is_not_re_run(tmp_path, monkeypatch):
    """pingping's run invalid with a reason starting 'generator' (the fake says so) stays one
    attempt, unmarked, in the same sweep as an IM run the same reason re-runs."""
    script = Script({1: ["limited", "ok"]})

    def limited(lau, task) -> dict:
        rec = run_process(lau, task)
        rec.update(status="invalid", validation={**rec["validation"], "ok": False, "reason": LIMITED})
        rec["status_reason"] = f"the program's own validation failed (validation.ok false): {LIMITED}"
        return rec

    monkeypatch.setitem(sweep.FAMILIES, "process", Family(limited, lambda lau, task: [0]))
    monkeypatch.setitem(sweep.FAMILIES, "socket", Family(im_record(script), lambda lau, task: [0]))
    monkeypatch.setattr(interference, "fields", _fields(script))
    prof = tmp_path / "imgrid.toml"
    text = im_fakes.tiny_grid("imgrid").replace('["im_loadgen"]', '["im_loadgen", "go"]')
    prof.write_text(text, encoding="utf-8")
    over = {"pingping.message_bytes": [100], "pingping.repetitions": [10], "rerun_interfered": True}
    d = sweep.run_sweep(
        str(prof),
        sweep_id="p",
        benchmarks=["im", "pingping"],
        raw_root=tmp_path / "raw",
        progress=False,
        overrides=over,
        commands={"im_loadgen": fake("ok", "im_loadgen"), "go": fake("ok", "go")},
    )
    recs = [json.loads(x) for x in (d / "runs.jsonl").read_text(encoding="utf-8").splitlines()]
    ping = [r for r in recs if r["benchmark"] == "pingping"]
    im = [r for r in recs if r["config_id"].startswith("im/im_loadgen/")]
    assert len(ping) == 1 and ping[0]["status"] == "invalid" and "search" not in ping[0]
    assert [marks(r) for r in im] == [(1, "generator", None, False), (2, None, "generator", True)]


@pytest.mark.parametrize("benchmark", ["pingping", "spawn", "throughput", "echo_flood", "recovery", "tcp_pingpong"])
def test_only_im_declares_a_rule_for_its_grid_runs(benchmark):
    from serverbench.harness.running.replicated import grid_rule

    assert grid_rule(benchmark) is None
    im = grid_rule("im")
    assert im is not None and im.grid_rerun is im_search.grid_rerun_reason and im.grid_reruns == 2
