"""The contract's two schemas and the raw-log loader."""

import copy
import io
import json

import pytest

from serverbench.rawdata import records, sweepfiles

# The example record of the upstream spec (shared/spec/BENCHMARKS.md section 3),
# completed with payload_errors, which this project's schema requires.
SPEC_EXAMPLE = {
    "benchmark": "pingping",
    "language": "go",
    "variant": "fair",
    "params": {"message_bytes": 5000, "repetitions": 100000, "payload": "copy"},
    "metrics": {"elapsed_s": 0.081, "messages": 200000, "ns_per_message": 405.0},
    "validation": {"ok": True, "received_a": 100000, "received_b": 100000, "payload_errors": 0},
    "runtime": {"name": "go", "version": "go1.26.8", "schedulers": 2},
}

SPAWN = {
    "benchmark": "spawn",
    "language": "erlang",
    "variant": "fair",
    "params": {"processes": 1000},
    "metrics": {
        "spawn_call_s": 0.001,
        "all_ready_s": 0.002,
        "rss_bytes_before": 1000000,
        "rss_bytes_after": 3700000,
        "bytes_per_process": 2700.0,
        "runtime_memory_bytes": None,
    },
    "validation": {"ok": True, "ready": 1000},
    "runtime": {"name": "erlang", "version": "OTP 25", "schedulers": 2, "process_limit": 1048576},
}

THROUGHPUT = {
    "benchmark": "throughput",
    "language": "scala_akka",
    "variant": "fair",
    "params": {"pairs": 2, "message_bytes": 500, "duration_s": 0.5, "report_every": 10000, "payload": "copy"},
    "metrics": {
        "exchanges": 1000,
        "elapsed_s": 0.5,
        "exchanges_per_s": 2000.0,
        "paper_msgs_per_min": 120000.0,
        "samples": [[0.1, 100], [0.5, 1000]],
    },
    "validation": {
        "ok": True,
        "reported_exchanges": 1000,
        "counted_exchanges": 1000,
        "payload_errors": 0,
        "min_pair_exchanges": 400,
    },
    "runtime": {"name": "akka", "version": "Akka 2.6.21", "schedulers": 2, "max_heap_bytes": 10**9},
}


def raw_line(native=SPEC_EXAMPLE, **over):
    rec = {
        "schema_version": 1,
        "sweep_id": "test-1",
        "config_id": "pingping/go/x",
        "trial": 1,
        "warmup": False,
        **copy.deepcopy(native),
        "started_utc": "2026-11-21T13:00:00.123Z",
        "host": {
            "hostname": "h",
            "cpu_model": "cpu",
            "logical_cpus": 2,
            "memory_bytes": 2**34,
            "os": "Linux",
            "kernel": "6.1",
        },
        "cores": 2,
        "pinned_cpus": [0, 1],
        "command": ["serverbench", "pingping"],
        "env": {"GOMAXPROCS": "2"},
        "wall_s": 0.2,
        "user_cpu_s": 0.1,
        "system_cpu_s": 0.01,
        "peak_rss_bytes": 10**7,
        "exit_code": 0,
        "signal": None,
        "status": "ok",
        "status_reason": None,
        "stderr_tail": "",
        "timeout_s": 60,
        "memory_budget_bytes": 2**32,
        "memory_enforcement": "watchdog",
    }
    rec.update(over)
    return rec


@pytest.mark.parametrize("rec", [SPEC_EXAMPLE, SPAWN, THROUGHPUT], ids=["pingping", "spawn", "throughput"])
def test_native_schema_accepts_examples(rec):
    assert records.native_errors(rec) is None


def _broken(base, path, value=KeyError):
    rec = copy.deepcopy(base)
    obj = rec
    for k in path[:-1]:
        obj = obj[k]
    if value is KeyError:
        del obj[path[-1]]
    else:
        obj[path[-1]] = value
    return rec


@pytest.mark.parametrize(
    "path,value,needle",
    [
        (("metrics", "elapsed_s"), KeyError, "elapsed_s"),  # missing field
        (("validation",), KeyError, "validation"),  # missing section
        (("metrics", "messages"), "200000", "messages"),  # wrong type
        (("params", "repetitions"), 1.5, "repetitions"),  # float for an integer
        (("language",), "rust", "language"),  # unknown language
        (("metrics", "elapsed_s"), -0.5, "elapsed_s"),  # negative time
        (("runtime", "schedulers"), 0, "schedulers"),  # no scheduler
        (("metrics", "extra_s"), 1.0, "extra_s"),  # undeclared field
        (("benchmark",), "pingpong", "benchmark"),  # unknown benchmark
        (("metrics", "ns_per_message"), float("nan"), "ns_per_message"),  # NaN
    ],
)
def test_native_schema_rejects_broken(path, value, needle):
    err = records.native_errors(_broken(SPEC_EXAMPLE, path, value))
    assert err is not None and needle in err
    with pytest.raises(records.RecordError):
        records.validate_native(_broken(SPEC_EXAMPLE, path, value))


def test_native_schema_rejects_params_of_another_benchmark():
    rec = copy.deepcopy(SPAWN)
    rec["params"] = {"message_bytes": 5, "repetitions": 5, "payload": "copy"}
    assert records.native_errors(rec) is not None


def test_throughput_samples_must_be_pairs():
    rec = copy.deepcopy(THROUGHPUT)
    rec["metrics"]["samples"] = [[0.1, 100, 7]]
    assert records.native_errors(rec) is not None


def test_raw_schema_accepts_ok_and_failed_runs():
    assert records.raw_errors(raw_line()) is None
    failed = raw_line(
        metrics=None,
        validation=None,
        runtime=None,
        status="timeout",
        status_reason="no record within 60 s",
        exit_code=None,
        signal=9,
    )
    assert records.raw_errors(failed) is None


@pytest.mark.parametrize(
    "over",
    [
        {"status": "fine"},  # unknown status
        {"language": "cobol"},  # unknown language
        {"wall_s": -1.0},  # negative time; null is for missing
        {"peak_rss_bytes": -1},  # -1 is never "missing"
        {"schema_version": 2},
        {"exit_code": 1},  # ok needs exit 0
        {"validation": {**SPEC_EXAMPLE["validation"], "ok": False}},  # ok needs validation.ok
        {"metrics": None},  # ok needs a record
        {"started_utc": "yesterday"},
        {"memory_enforcement": "hope"},
    ],
)
def test_raw_schema_rejects(over):
    assert records.raw_errors(raw_line(**over)) is not None


def test_raw_line_with_broken_native_part_is_rejected():
    rec = raw_line()
    rec["metrics"] = {"elapsed_s": 1.0}
    err = records.raw_errors(rec)
    assert err and err.startswith("native part")


def _write(path, lines):
    with open(path, "w", encoding="utf-8") as f:
        for line in lines:
            f.write(line if isinstance(line, str) else json.dumps(line))
            f.write("\n")


def test_loader_reads_a_sweep_into_a_dataframe(tmp_path):
    sweep = tmp_path / "s1"
    sweep.mkdir()
    _write(sweep / sweepfiles.RAW_LOG_NAME, [raw_line(trial=1), raw_line(trial=2), raw_line(SPAWN, trial=1)])
    df = records.load_raw(sweep)
    assert len(df) == 3
    assert list(df["trial"]) == [1, 2, 1]
    assert df.loc[0, "metrics.ns_per_message"] == 405.0
    assert df.loc[2, "params.processes"] == 1000
    assert df.attrs["skipped"] == []
    # a folder of sweeps reads them all
    assert len(records.load_raw(tmp_path)) == 3


def test_loader_error_names_file_and_line(tmp_path):
    f = tmp_path / "runs.jsonl"
    _write(f, [raw_line(), "{not json", raw_line()])
    with pytest.raises(records.RawLogError) as e:
        records.load_raw(f)
    assert e.value.line == 2 and e.value.path == f
    assert f"{f}:2:" in str(e.value)


def test_loader_error_names_schema_violation_line(tmp_path):
    f = tmp_path / "runs.jsonl"
    _write(f, [raw_line(), raw_line(), raw_line(status="great")])
    with pytest.raises(records.RawLogError, match=r":3: status"):
        records.load_raw(f)


def test_loader_rejects_a_cut_off_last_line(tmp_path):
    f = tmp_path / "runs.jsonl"
    f.write_text(json.dumps(raw_line()) + "\n" + json.dumps(raw_line()), encoding="utf-8")
    with pytest.raises(records.RawLogError, match=":2:.*newline"):
        records.load_raw(f)


def test_loader_can_skip_bad_lines_but_says_so(tmp_path):
    f = tmp_path / "runs.jsonl"
    _write(f, [raw_line(), "garbage", raw_line(language="cobol"), raw_line(trial=2)])
    with pytest.warns(UserWarning, match="skipped 2 bad raw line"):
        df = records.load_raw(f, skip_bad=True)
    assert len(df) == 2
    assert [(line, reason.split(" ")[0]) for _, line, reason in df.attrs["skipped"]] == [(2, "not"), (3, "language:")]


def test_loader_names_a_missing_source(tmp_path):
    with pytest.raises(FileNotFoundError, match="no such raw log"):
        records.load_raw(tmp_path / "nope")
    with pytest.raises(FileNotFoundError, match="no raw log"):
        records.load_raw(tmp_path)


# --- lines that are not UTF-8 ----------------------------------------------------------
def _with_bad_byte(line: dict) -> bytes:
    """A raw line whose status_reason holds the byte 0xff (never valid in UTF-8)."""
    data = json.dumps(line).encode()
    at = data.index(b'"status_reason": null')
    return data[:at] + b'"status_reason": "x\xff"' + data[at + len(b'"status_reason": null') :] + b"\n"


def _bad_column(data: bytes) -> int:
    return data.index(b"\xff") + 1


@pytest.mark.parametrize("bad_at", [3, 1], ids=["middle line", "first line"])
def test_a_line_that_is_not_utf8_is_named_by_its_number(tmp_path, bad_at):
    f = tmp_path / "runs.jsonl"
    good = [(json.dumps(raw_line(trial=t)) + "\n").encode() for t in (1, 2, 3, 4)]
    bad = _with_bad_byte(raw_line(trial=9))
    f.write_bytes(b"".join(good[: bad_at - 1] + [bad] + good[bad_at - 1 :]))
    want = f"not UTF-8 text (byte 0xff at column {_bad_column(bad)})"
    with pytest.raises(records.RawLogError) as e:
        records.load_raw(f)
    assert (e.value.line, e.value.reason) == (bad_at, want)
    assert str(e.value) == f"{f}:{bad_at}: {want}"
    with pytest.warns(UserWarning, match=f"skipped 1 bad raw line.*:{bad_at}: not UTF-8"):
        df = records.load_raw(f, skip_bad=True)
    assert list(df["trial"]) == [1, 2, 3, 4]  # every other line still read
    assert df.attrs["skipped"] == [(str(f), bad_at, want)]


def test_validate_prints_the_line_that_is_not_utf8(tmp_path):
    from serverbench import cli

    f = tmp_path / "runs.jsonl"
    bad = _with_bad_byte(raw_line(trial=3))
    f.write_bytes(b"".join((json.dumps(raw_line(trial=t)) + "\n").encode() for t in (1, 2)) + bad)
    out, err = io.StringIO(), io.StringIO()
    assert cli.run(["validate", str(f)], out, err) == 1
    assert err.getvalue() == f"{f}:3: not UTF-8 text (byte 0xff at column {_bad_column(bad)})\n"
    assert out.getvalue() == f"{f}: 2 valid line(s), 1 bad\n"


@pytest.mark.slow
def test_a_shard_file_line_that_is_not_utf8(tmp_path, capsys):
    """A sharded sweep's runs.<i>.jsonl: the loader names file and line and reads the rest;
    the resumed shard names the line, leaves it as it is and re-runs only that run."""
    from harness_fakes import SMALL, fakes
    from serverbench.harness.recording.sweep import run_sweep

    ov = {**SMALL, "pingping.repetitions": [10, 20], "spawn.enabled": False}

    def shard(i):
        return run_sweep(
            "smoke", sweep_id="sh", raw_root=tmp_path, progress=False, overrides=ov, commands=fakes(), shard=f"{i}/2"
        )

    d = shard(0)
    shard(1)
    runs = d / "runs.1.jsonl"
    lines = runs.read_bytes().splitlines(keepends=True)
    assert len(lines) >= 3
    hit = json.loads(lines[1])
    at = lines[1].index(b'"hostname":"') + len(b'"hostname":"')
    lines[1] = lines[1][:at] + b"\xff" + lines[1][at:]  # e.g. a bit flipped on disk
    runs.write_bytes(b"".join(lines))
    want = f"not UTF-8 text (byte 0xff at column {at + 1})"
    with pytest.raises(records.RawLogError) as e:
        records.load_records(d)
    assert (e.value.path, e.value.line, e.value.reason) == (runs, 2, want)
    with pytest.warns(UserWarning, match="skipped 1 bad raw line"):
        recs, skipped = records.load_records(d, skip_bad=True)
    assert skipped == [(str(runs), 2, want)]
    n_total = len(recs) + 1
    before = runs.read_bytes()
    capsys.readouterr()
    shard(1)
    assert f"{runs}: 1 unreadable line(s) (line 2) left untouched" in capsys.readouterr().err
    after = runs.read_bytes()
    assert after.startswith(before)  # the bad line kept byte for byte, nothing rewritten
    again = [json.loads(x) for x in after[len(before) :].splitlines()]
    assert [(r["config_id"], r["trial"]) for r in again] == [(hit["config_id"], hit["trial"])]
    with pytest.warns(UserWarning, match="skipped 1 bad raw line"):
        recs, skipped = records.load_records(d, skip_bad=True)
    assert len(recs) == n_total and [s[1] for s in skipped] == [2]


def test_resume_reads_lines_as_strictly_as_the_loader(tmp_path):
    """A BOM or an encoded lone surrogate: json.loads would take the bytes, the loader
    refuses the line, so the harness must not count its run as done."""
    from serverbench.harness.recording import rawlog

    f = tmp_path / "runs.jsonl"
    ok = json.dumps(raw_line()).encode()
    f.write_bytes(b"\xef\xbb\xbf" + ok + b"\n" + ok.replace(b'"h"', b'"\xed\xa0\x80"') + b"\n" + ok + b"\n")
    bad: list[int] = []
    assert len(rawlog.read_lines(f, bad)) == 1 and bad == [1, 2]
    with pytest.warns(UserWarning, match="skipped 2 bad raw line"):
        recs, skipped = records.load_records(f, skip_bad=True)
    assert len(recs) == 1 and [s[1] for s in skipped] == [1, 2]


def test_a_search_steps_replicated_runs_are_not_duplicates_but_a_repeated_run_is():
    """A search's runs share a config_id and a trial and differ in their `search` fields;
    the warning about a run recorded ok twice (a shard run on two hosts) must not fire on
    them (a whole IM sweep warned of 50), and still fires on a real repeat."""
    step = {"name": "im_rate", "phase": "grid", "step": 3, "attempt": 1}
    a, b = ({**raw_line(), "search": {**step, "run": k}} for k in (1, 2))
    assert records.duplicate_runs([a, b]) == []
    assert len(records.duplicate_runs([a, b, copy.deepcopy(b)])) == 1
    assert len(records.duplicate_runs([raw_line(), raw_line()])) == 1
