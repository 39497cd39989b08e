"""Teaching labs and the sweep explorer: self-checks against measured data, predictions set
beside the measurement, why-questions, the instructor guide's generated table, bad parameters
as one clear message. The notebooks themselves: test_teaching_notebooks.py."""

import json
from pathlib import Path

import pytest

from serverbench.analysis.explorer import explore, explore_plots
from serverbench.teaching import checks, common, guide, lab1, lab2, lab3, lab4, lab4_tcp

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "data" / "raw" / "quick-20261121T134551Z"
TARGETS = ROOT / "data" / "raw" / "targets-20261121T134056Z"


_TEMPLATES: dict = {}


def _template(benchmark, search):
    """A real record of the sample sweep as a template (synthetic records must pass the schemas)."""
    key = (benchmark, bool(search))
    if key not in _TEMPLATES:
        for line in SAMPLE.joinpath("runs.jsonl").read_text().splitlines():
            r = json.loads(line)
            if r["benchmark"] == benchmark and bool(r.get("search")) == bool(search) and r["status"] == "ok":
                _TEMPLATES[key] = r
                break
    return json.loads(json.dumps(_TEMPLATES[key]))


def _rec(lang, benchmark, params, metrics, trial=1, status="ok", warmup=False, cores=2, search=None):
    r = _template(benchmark, search)
    r.update(
        language=lang,
        trial=trial,
        status=status,
        warmup=warmup,
        cores=cores,
        sweep_id="synthetic",
        config_id=f"{benchmark}/{lang}/fair/c{cores}/" + ",".join(f"{k}={v}" for k, v in sorted(params.items())),
    )
    r["params"].update(params)
    r["metrics"].update(metrics)
    if status != "ok":
        r["status_reason"] = "killed by the kernel OOM killer in its memory cgroup"
        r["exit_code"], r["signal"] = None, 9
        r["metrics"] = r["validation"] = r["runtime"] = None
    if search:
        r["search"] = search
    return r


def _sweep(tmp_path, recs, name="synthetic"):
    d = tmp_path / name
    d.mkdir()
    d.joinpath("runs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in recs))
    return explore.load_sweep(d)


def _data(sweep, langs=("erlang", "go", "scala_akka")):
    return common.LabData(sweep, "folder", 0.0, list(langs))


def _verdict(capsys, exercise, answer, data):
    result = common.check(exercise, answer, data)
    return result, capsys.readouterr().out


# --- lab 1 ------------------------------------------------------------------------------
@pytest.fixture
def lab1_data(tmp_path):
    recs = []
    ns = {"copy": {100: 300, 1_000_000: 40_300}, "share": {100: 200, 1_000_000: 205}}
    for payload, by in ns.items():
        for b, v in by.items():
            for t in (1, 2, 3):
                recs.append(
                    _rec(
                        "go",
                        "pingping",
                        {"payload": payload, "message_bytes": b, "repetitions": 2000},
                        {"elapsed_s": v * 4e-6, "messages": 4000, "ns_per_message": float(v + t)},
                        trial=t,
                    )
                )
    return _data(_sweep(tmp_path, recs), ["go"])


def test_lab1_self_checks_say_correct_or_give_a_hint(lab1_data, capsys):
    ex = lab1.EXERCISES
    assert ex["ratio"].solve(lab1_data) == pytest.approx(40_302 / 207)  # medians of v+1, v+2, v+3
    ok, out = _verdict(capsys, ex["ratio"], 200, lab1_data)
    assert ok is True and out.startswith("correct")
    ok, out = _verdict(capsys, ex["ratio"], 3, lab1_data)
    assert ok is False and out.startswith("hint: too low") and "correct" not in out
    # (1,000,000 - 100) B / (40,302 - 302) ns = 25 bytes per ns
    assert ex["bandwidth"].solve(lab1_data) == pytest.approx(999_900 / 40_000)
    assert _verdict(capsys, ex["bandwidth"], 25, lab1_data)[0] is True
    ok, out = _verdict(capsys, ex["bandwidth"], 1000, lab1_data)
    assert ok is False and out.startswith("hint: too high")
    assert ex["share_flat"].solve(lab1_data) == "no"
    assert _verdict(capsys, ex["share_flat"], "No", lab1_data)[0] is True
    ok, out = _verdict(capsys, ex["share_flat"], "yes", lab1_data)
    assert ok is False and out.startswith("hint:")
    ok, out = _verdict(capsys, ex["share_flat"], "perhaps", lab1_data)
    assert ok is False and "answer with one of" in out


def test_unanswered_check_asks_and_solutions_fill_in(lab1_data, capsys):
    assert common.check(lab1.EXERCISES["ratio"], None, lab1_data) is None
    assert capsys.readouterr().out.startswith("no answer yet")
    assert common.check(lab1.EXERCISES["ratio"], None, lab1_data, solutions=True) is True
    out = capsys.readouterr().out
    assert out.startswith("solution: 195") and "correct" in out and "why:" in out


# --- lab 2 ------------------------------------------------------------------------------
def test_lab2_checks_use_the_search_and_the_statuses(tmp_path, capsys):
    recs = [
        _rec(
            "go",
            "spawn",
            {"processes": n},
            {"spawn_call_s": n * 3e-6, "all_ready_s": n * 3e-6, "bytes_per_process": 2750.0},
            trial=t,
        )
        for n in (1000, 50_000)
        for t in (1, 2)
    ]
    for step, (n, st) in enumerate(
        [(10_000, "ok"), (40_000, "ok"), (160_000, "over_memory_budget"), (100_000, "over_memory_budget")]
    ):
        recs.append(
            _rec(
                "go",
                "spawn",
                {"processes": n},
                {"spawn_call_s": 0.1, "all_ready_s": 0.1, "bytes_per_process": 2750.0},
                status=st,
                search={"name": "max_processes", "step": step, "budget_bytes": 160 * 2**20},
            )
        )
    data = _data(_sweep(tmp_path, recs), ["go"])
    ex = lab2.EXERCISES
    assert _verdict(capsys, ex["bytes"], 2700, data)[0] is True
    assert _verdict(capsys, ex["bytes"], 270, data)[0] is False
    assert lab2.search_bracket(data, "go") == (40_000, 100_000)
    assert _verdict(capsys, ex["limit"], 61_000, data)[0] is True
    ok, out = _verdict(capsys, ex["limit"], 1_000_000, data)
    assert ok is False and "failed at 100,000" in out
    assert _verdict(capsys, ex["stopper"], "memory", data)[0] is True
    assert _verdict(capsys, ex["stopper"], "time", data)[0] is False
    # page faults: no measurement yet -> the check says it cannot check, never "correct"
    ok, out = _verdict(capsys, ex["faults"], 0.7, data)
    assert ok is None and "cannot check" in out


# --- lab 3 ------------------------------------------------------------------------------
def test_lab3_checks(tmp_path, capsys):
    rate = {("go", 1): 1.5e6, ("go", 2): 2.2e6, ("erlang", 1): 1.0e6, ("erlang", 2): 1.1e6}
    recs = [
        _rec(
            lang,
            "throughput",
            {"pairs": p, "message_bytes": 500, "duration_s": 0.3, "report_every": 1000, "payload": "copy"},
            {"exchanges": 1000, "elapsed_s": 0.3, "exchanges_per_s": rate[(lang, c)] * (1 + 0.01 * t)},
            trial=t,
            cores=c,
        )
        for (lang, c) in rate
        for p in (1, 16)
        for t in (1, 2)
    ]
    data = _data(_sweep(tmp_path, recs), ["go", "erlang"])
    ex = lab3.EXERCISES
    assert ex["speedup"].solve(data) == pytest.approx(2.2 / 1.5)
    assert _verdict(capsys, ex["speedup"], 1.5, data)[0] is True
    assert _verdict(capsys, ex["speedup"], 2.0, data)[0] is False
    assert ex["gainer"].solve(data) == {"go"}
    assert _verdict(capsys, ex["gainer"], "go", data)[0] is True
    assert _verdict(capsys, ex["gainer"], "erlang", data)[0] is False
    assert _verdict(capsys, ex["pairs1"], "no", data)[0] is True
    assert lab3.table(data).loc[("go", 16), "speed-up"] == pytest.approx(2.2 / 1.5, abs=0.01)


# --- lab 4 ------------------------------------------------------------------------------
def test_lab4_math_and_batch_checks(tmp_path, capsys):
    recs = [
        _rec(
            "go",
            "throughput",
            {"pairs": 16, "message_bytes": 500, "duration_s": 0.3, "report_every": 10_000, "payload": "copy"},
            {"exchanges": 16 * 25_000, "elapsed_s": 0.3, "exchanges_per_s": 1.3e6},
        )
    ]
    recs += [
        _rec(
            "go",
            "pingping",
            {"payload": "copy", "message_bytes": 5000, "repetitions": r},
            {"elapsed_s": 1.0, "messages": 2 * r, "ns_per_message": v},
            trial=t,
        )
        for r in (1000, 20_000)
        for t, v in enumerate((300.0, 330.0, 600.0), start=1)
    ]
    data = _data(_sweep(tmp_path, recs), ["go"])
    ex = lab4.EXERCISES
    assert ex["coverage3"].solve(data) == pytest.approx(0.75)
    assert _verdict(capsys, ex["coverage3"], 0.75, data)[0] is True
    assert _verdict(capsys, ex["coverage3"], 0.95, data)[0] is False
    assert ex["min_trials"].solve(data) == 6
    assert _verdict(capsys, ex["min_trials"], 3, data)[0] is False
    # 25,000 per pair: 20,000 counted in whole batches, 5,000 of 25,000 lost
    assert ex["batch"].solve(data) == pytest.approx(0.2)
    assert _verdict(capsys, ex["batch"], 0.2, data)[0] is True
    assert _verdict(capsys, ex["batch"], 0.0, data)[0] is False
    assert ex["spread"].solve(data) == pytest.approx(2.0)
    assert _verdict(capsys, ex["spread"], 1.0, data)[0] is False


# --- bad input: one sentence ---------------------------------------------------------------
@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: lab1.load(trials=0), "trials=0 is out of range"),
        (lambda: lab1.load(message_bytes=[100]), "at least two different sizes"),
        (lambda: lab2.load(budget_mib=10_000), "budget_mib=10000 is out of range"),
        (lambda: lab3.load(duration_s=-1), "duration_s=-1 is out of range"),
        (lambda: lab4.load(languages=["cobol"]), "choose from"),
        (lambda: lab1.load(run="yes"), "use True or False"),
    ],
)
def test_bad_parameters_are_one_sentence(call, match):
    with pytest.raises(common.LabInputError, match=match) as e:
        call()
    assert e.value._render_traceback_() == [f"LabInputError: {e.value}"]


def test_without_the_native_programs_a_lab_reads_the_recorded_sweep_and_says_so(tmp_path, monkeypatch, capsys):
    """A classroom server without the programs (Binder, JupyterHub): run=True falls back to
    the newest recorded sweep of the lab with a one-line note; with none to read, one sentence."""
    from serverbench import paths

    monkeypatch.setattr(common, "missing_programs", lambda languages: ["go (scripts/build.sh go)"])
    raw = tmp_path / "raw"
    raw.mkdir()
    monkeypatch.setattr(paths, "raw_dir", lambda: raw)
    monkeypatch.setattr(paths, "repo_root", lambda: tmp_path / "elsewhere")
    with pytest.raises(common.LabInputError, match="not built: go .*no earlier lab1 sweep"):
        common.get_runs("lab1", run=True, raw_folder=None, languages=["go"], benchmarks=["pingping"], overrides={})
    rec = _rec("go", "pingping", {"payload": "copy", "message_bytes": 100, "repetitions": 1000}, {"elapsed_s": 1.0})
    _sweep(raw, [rec], name="lab1-20261127T000000Z")
    data = common.get_runs("lab1", run=True, raw_folder=None, languages=["go"], benchmarks=["pingping"], overrides={})
    assert data.source == "folder" and data.sweep.sweep_id == "lab1-20261127T000000Z"
    out = capsys.readouterr().out
    assert out.count("\n") == 1 and "not built here (go" in out
    assert "reads the recorded sweep lab1-20261127T000000Z" in out


def test_bad_sweep_folders(tmp_path):
    with pytest.raises(explore.SweepInputError, match="does not exist"):
        lab1.load(raw_folder=str(tmp_path / "nope"))
    empty = tmp_path / "empty"
    empty.mkdir()
    empty.joinpath("runs.jsonl").write_text('not json\n{"also": "not a record"}\n')
    with pytest.raises(explore.SweepInputError, match="holds no valid records"):
        lab1.load(raw_folder=str(empty))
    with pytest.raises(explore.SweepInputError, match="no runs.jsonl"):
        explore.load_sweep(tmp_path)


# --- the explorer's functions on the two committed sweeps -------------------------------------
@pytest.mark.slow
@pytest.mark.skipif(not (SAMPLE.exists() and TARGETS.exists()), reason="committed sample sweeps not present")
def test_explore_compares_the_two_committed_sweeps():
    a, b = explore.load_sweep(SAMPLE), explore.load_sweep(TARGETS)
    c = explore.compare(a, b, "pingping")
    assert len(c) == 3  # 5 kB, R = 100,000 in all three languages
    assert (c["ci_lo"] <= c["ratio"]).all() and (c["ratio"] <= c["ci_hi"]).all()
    assert (c["ci_level"] > 0).all()
    t = explore.compare(a, b, "throughput")  # durations differ (1 s vs 10 s): matched as the same rate
    assert len(t) == 3
    env = explore.environment_diff(a, b)
    assert env.loc[env["what"] == "created_utc", "differs"].item()
    assert not env.loc[env["what"] == "cpu_model", "differs"].item()
    ids = set(explore.list_sweeps(ROOT / "data" / "raw")["sweep_id"])
    assert {SAMPLE.name, TARGETS.name} <= ids
    # a same CPU model is not a same machine: these sweeps predate fingerprints and say so
    assert explore.same_machine(a, b).startswith("Not known to be the same machine")
    new = ROOT / "data" / "raw" / "quick-20261124T231433Z"
    if new.exists():
        n = explore.load_sweep(new)
        assert explore.same_machine(n, n) == "Same machine: every sweep's fingerprint is 4947c750802ff210."
        envn = explore.environment_diff(n, a)
        assert envn.loc[envn["what"] == "machine_fingerprint", "differs"].item()
        listed = explore.list_sweeps(ROOT / "data" / "raw").set_index("sweep_id")
        assert listed.loc[new.name, "machine"] == "4947c750802ff210"
    figs = explore_plots.distribution_appendix(a)
    assert [t for t, _ in figs] == ["pingping", "spawn", "spawn_max", "throughput"]
    assert explore_plots.overlay([a, b], "pingping").axes[0].get_lines()


def test_lab2_page_faults_from_the_recorded_rusage(tmp_path, capsys):
    recs = []
    for n, faults in ((1000, 1700), (50_000, 35_000)):
        r = _rec(
            "go", "spawn", {"processes": n}, {"spawn_call_s": 0.1, "all_ready_s": 0.1, "bytes_per_process": 2750.0}
        )
        r["minor_page_faults"], r["major_page_faults"] = faults, 0
        recs.append(r)
    data = _data(_sweep(tmp_path, recs), ["go"])
    t = lab2.faults(data)
    assert t.loc[0, "faults_per_process"] == pytest.approx((35_000 - 1700) / 49_000, abs=1e-3)
    assert _verdict(capsys, lab2.EXERCISES["faults"], 0.68, data)[0] is True
    assert _verdict(capsys, lab2.EXERCISES["faults"], 5, data)[0] is False


def test_lab4_paper_and_tcp_checks_read_the_extra_runs(lab1_data, capsys):
    import pandas as pd

    data = lab1_data
    assert common.check(lab4.EXERCISES["tcp"], 4, data) is None  # nothing run yet: cannot check
    assert "cannot check" in capsys.readouterr().out
    tcp = pd.DataFrame(
        {
            "language": ["go", "go"],
            "read_buffer_bytes": [1, 4],
            "status": ["invalid", "ok"],
            "bytes_read": [4000, 16000],
            "reported_us_per_round_trip": [30.0, 420.0],
            "true_us_per_round_trip": [120.0, 420.0],
            "table": "tcp_pingpong",
        }
    )
    data.extra["tcp"] = explore.SweepView(Path("tcp"), tcp)
    assert lab4.EXERCISES["tcp"].solve(data) == pytest.approx(14.0)
    assert _verdict(capsys, lab4.EXERCISES["tcp"], 14, data)[0] is True
    assert _verdict(capsys, lab4.EXERCISES["tcp"], 1, data)[0] is False
    paper = pd.DataFrame(
        {
            "language": ["go"],
            "variant": ["paper"],
            "status": ["ok"],
            "table": ["throughput"],
            "exchanges": [124_728],
            "true_exchanges": [124_728],
            "reported_exchanges": [0],
            "reported_printed": [True],
        }
    )
    data.extra["paper"] = explore.SweepView(Path("paper"), paper)
    assert lab4.EXERCISES["paper"].solve(data) == 0.0
    assert _verdict(capsys, lab4.EXERCISES["paper"], 0, data)[0] is True
    assert _verdict(capsys, lab4.EXERCISES["paper"], 1, data)[0] is False


def test_explorer_plots_every_language_a_sweep_has():
    # a runtime setting is plotted right after its language, every language in the catalog's order
    assert explore_plots.languages_in({"java_vthreads", "go", "go[gc=nogreentea]", "erlang"}) == [
        "erlang",
        "go",
        "go[gc=nogreentea]",
        "java_vthreads",
    ]


# --- predictions set beside the measurement --------------------------------------------------
def test_a_prediction_is_set_beside_the_measurement_once_the_answer_is_judged(lab1_data, capsys):
    ex = lab1.EXERCISES["ratio"]  # measured 40,302 / 207 = 195
    assert common.check(ex, 200, lab1_data, prediction=10) is True
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "correct" and out[1].startswith("why:")
    assert out[2] == "You predicted 10; measured 195: off by 19x (too low) — what did you not account for?"
    assert common.check(ex, 200, lab1_data, prediction=180) is True
    assert "You predicted 180; measured 195: within 8 %" in capsys.readouterr().out
    assert common.check(ex, 200, lab1_data, prediction=50) is True
    assert "off by 3.9x (too low)" in capsys.readouterr().out
    # no prediction: a reminder, after the verdict
    assert common.check(ex, 200, lab1_data) is True
    assert capsys.readouterr().out.splitlines()[-1].startswith("No prediction was written")
    # a wrong answer: the line does not give the measurement away
    assert common.check(ex, 3, lab1_data, prediction=10) is False
    out = capsys.readouterr().out
    assert out.startswith("hint: too low") and "195" not in out and "You predicted 10:" in out
    # a choice: the predicted option beside the measured one
    assert common.check(lab1.EXERCISES["share_flat"], "no", lab1_data, prediction="yes") is True
    assert "You predicted 'yes'; measured 'no' — what did you not account for?" in capsys.readouterr().out
    # the teacher's filled-in copy gets no reminder; the lab's wrapper passes the prediction on
    assert common.check(ex, None, lab1_data, solutions=True) is True
    assert "predict" not in capsys.readouterr().out.lower()
    lab1.check("ratio", 200, lab1_data, prediction=200)
    assert "You predicted 200; measured 195: within 3 %" in capsys.readouterr().out


def test_numbers_for_people():
    got = [checks.human(v) for v in (40_302, 0.7483, 6, 999.6, 0.0, 1_234_567, 13.56)]
    assert got == ["40,300", "0.748", "6", "1,000", "0", "1,230,000", "13.6"]


# --- why-questions: the mechanism, judged; a hint names what to look at -----------------------
@pytest.mark.parametrize(
    "lab, key",
    [(lab1, "why_share"), (lab2, "why_bytes"), (lab3, "why_one_pair"), (lab4, "why_warmup"), (lab4, "why_tcp")],
)
def test_a_why_question_takes_the_mechanism_and_hints_without_giving_it(lab1_data, capsys, lab, key):
    ex = lab.EXERCISES[key]
    assert ex.fixed and set(ex.options) == {"a", "b", "c"}
    right = ex.solve(lab1_data)  # fixed: the runs do not decide it
    ok, out = _verdict(capsys, ex, right.upper(), lab1_data)
    assert ok is True and out.startswith("correct") and f"why: {right}) {ex.options[right]}" in out
    for wrong in sorted(set(ex.options) - {right}):
        ok, out = _verdict(capsys, ex, wrong, lab1_data)
        assert ok is False and out.startswith("hint: not that mechanism; look at")
        assert ex.options[right] not in out and f"'{right}'" not in out
    ok, out = _verdict(capsys, ex, "d", lab1_data)
    assert ok is False and "answer with one of: 'a', 'b', 'c'" in out


def test_lab1_who_pays_most_at_the_smallest_size_is_decided_by_the_runs(tmp_path, capsys):
    ns = {"go": {100: 300.0, 10_000: 900.0}, "erlang": {100: 600.0, 10_000: 1200.0}}
    recs = [
        _rec(
            lang,
            "pingping",
            {"payload": "copy", "message_bytes": b, "repetitions": 2000},
            {"elapsed_s": 1.0, "messages": 4000, "ns_per_message": v},
            trial=t,
        )
        for lang, by in ns.items()
        for b, v in by.items()
        for t in (1, 2)
    ]
    data = _data(_sweep(tmp_path, recs), ["go", "erlang"])
    ex = lab1.EXERCISES["fixed_cost"]
    assert ex.solve(data) == {"erlang"}
    ok, out = _verdict(capsys, ex, "Erlang", data)
    assert ok is True and "erlang 600 ns, go 300 ns at 100 B" in out
    ok, out = _verdict(capsys, ex, "go", data)
    assert ok is False and out.startswith("hint: look at the copy rows at the smallest size") and "erlang" not in out


def test_lab2_whose_time_per_process_grows_most_is_decided_by_the_runs(tmp_path, capsys):
    per_process_s = {"go": {1000: 3e-6, 50_000: 3e-6}, "erlang": {1000: 2e-6, 50_000: 5e-6}}
    recs = [
        _rec(
            lang,
            "spawn",
            {"processes": n},
            {"spawn_call_s": n * s, "all_ready_s": n * s, "bytes_per_process": 2750.0},
            trial=t,
        )
        for lang, by in per_process_s.items()
        for n, s in by.items()
        for t in (1, 2)
    ]
    data = _data(_sweep(tmp_path, recs), ["go", "erlang"])
    ex = lab2.EXERCISES["grows"]
    assert lab2.per_process_growth(data) == pytest.approx({"erlang": 2.5, "go": 1.0})
    assert ex.solve(data) == {"erlang"}
    ok, out = _verdict(capsys, ex, "erlang", data)
    assert ok is True and "erlang 2.5x, go 1x" in out
    ok, out = _verdict(capsys, ex, "go", data)
    assert ok is False and "us_per_process" in out and "erlang" not in out


# --- the instructor guide: one producer for every expected value ------------------------------
COMMITTED_LABS = [ROOT / "data" / "raw" / s for s in guide.SWEEPS.values()]
RECORDED_TCP = ROOT / "data" / "raw" / lab4_tcp.RECORDED_TCP


def test_the_guide_range_is_over_single_trials(lab1_data):
    assert guide.trials(lab1_data) == [1, 2, 3]
    assert guide.spread("lab1", lab1.EXERCISES["why_share"], lab1_data) == "fixed"
    assert guide.spread("lab1", lab1.EXERCISES["share_flat"], lab1_data) == "'no' in every trial"
    # trial k alone: (40,300 + k) / (205 + k)
    assert guide.spread("lab1", lab1.EXERCISES["ratio"], lab1_data) == "194 to 196"


@pytest.mark.skipif(not all(p.exists() for p in COMMITTED_LABS), reason="committed lab sweeps not present")
def test_the_instructor_guide_is_computed_from_the_committed_lab_sweeps():
    import re

    from serverbench.docsgen import generate as docsgen

    text = guide.markdown()
    assert not re.search(r"\bnan\b|\bNone\b|\binf\b", text, re.I)
    for lab, (mod, title) in guide.LABS.items():
        section = text.split(f"### {title}")[1].split("\n### ")[0]
        assert f"`{guide.SWEEPS[lab]}`" in section
        for key in mod.EXERCISES:
            assert f"| `{key}` |" in section and f"- **`{key}`**:" in section
    # an expected value is the exercise's own answer on the committed sweep
    data = guide.lab_data("lab1")
    assert f"| {common.human(lab1.EXERCISES['ratio'].solve(data))} |" in text
    # the committed block of docs/instructor.md is this text
    committed = (ROOT / "docs" / "instructor.md").read_text(encoding="utf-8")
    assert docsgen.render(committed, "instructor-guide", text) == committed


@pytest.mark.skipif(not (RECORDED_TCP.exists() and COMMITTED_LABS[3].exists()), reason="recorded runs not present")
def test_the_tcp_number_has_one_producer(capsys):
    """How much faster the 1-byte TCP run looks: the instructor guide's number is lab 4's own
    self-check on the recorded runs, which lab 4 shows when it studies an existing sweep."""
    looks = lab4.EXERCISES["tcp"].solve(guide.lab_data("lab4"))
    assert looks is not None and looks > 1
    row = next(r for r in guide.lab_markdown("lab4").splitlines() if r.startswith("| `tcp` |"))
    assert f"| {common.human(looks)} |" in row
    student = _data(explore.load_sweep(COMMITTED_LABS[3]))
    table = lab4.tcp_buffer(student, run=False)
    assert f"recorded in {lab4_tcp.RECORDED_TCP}" in capsys.readouterr().out
    assert set(table["read_buffer_bytes"]) == {1, 4} and set(table["language"]) <= {"go", "scala", "erlang"}
    assert lab4.EXERCISES["tcp"].solve(student) == looks
    assert _verdict(capsys, lab4.EXERCISES["tcp"], looks, student)[0] is True
