"""The authors' original Scala throughput program as one more side of a sweep (docs/akka-gap.md).

The original (maxSpeakers.scala, Akka 2.4.12) is built outside the repository by
scripts/akka-original-build.sh and is not a language of spec/cli.json: it takes the number
of pairs as its only argument and prints a line of text, not a native record. This module
runs it the way the harness runs a native program (pinned to the first C of the allowed
CPUs, -XX:ActiveProcessorCount=C, a wall-clock limit, the child's rusage) and writes what
happened as a raw-log line (spec/raw-record.schema.json) into the sweep folder's
``original.jsonl``, beside the harness's runs.jsonl, so every other reader of the sweep
leaves it alone. ``metrics`` is null, as for any program that prints no native record;
what the original printed is in ``stdout_tail`` (read back by ``printed``). ``status`` is
``invalid`` (the schema's word for a run that printed no native record; ``ok`` requires
one) with ``status_reason`` saying whether it printed its count or nothing (it calls
System.exit right after asking for the count: the paper variant's `exit` quirk);
``crashed`` or ``timeout`` as for any run. The record is
labelled language scala_akka24 (the runtime it runs on), variant paper, settings
{"program": "original"}.

The JVM runs with its default heap and Akka's default dispatcher, as the authors ran it.
"""

from __future__ import annotations

import os
import re
import resource
import signal
import subprocess
import time
from datetime import UTC, datetime
from pathlib import Path

from serverbench import records

FILE_NAME = "original.jsonl"
LANGUAGE = "scala_akka24"
SETTINGS = {"program": "original"}
ENV_JAR = "SERVERBENCH_AKKA_ORIGINAL_JAR"
DEFAULT_JAR = Path.home() / ".cache" / "serverbench" / "akka-original" / "target" / "maxSpeakers.jar"
WINDOW_PROPERTY = "serverbench.window.ms"  # the build recipe's one edit: the window's length
PRINTED = re.compile(r"Total number of messages after ([0-9]+(?:\.[0-9]+)?) seconds: ([0-9]+)")
TAIL = 4000
PRINTED_REASON = "printed its count (stdout_tail), as the original does: no native record"


class OriginalError(ValueError):
    """The original program cannot be run here (one line)."""


def jar_path() -> Path:
    """The built original: $SERVERBENCH_AKKA_ORIGINAL_JAR, else the build script's default."""
    p = Path(os.environ.get(ENV_JAR) or DEFAULT_JAR)
    if not p.is_file():
        raise OriginalError(
            f"the original Akka throughput program is not built ({p}): run "
            "scripts/akka-original-build.sh PATH/TO/maxSpeakers.scala (docs/akka-gap.md)"
        )
    return p


def portable_jar(jar) -> str:
    """The jar as the record names it: under the home folder as ~/..., else its file name
    (no machine path in what a sweep writes)."""
    p = Path(jar)
    try:
        return "~/" + p.relative_to(Path.home()).as_posix()
    except ValueError:
        return p.name


def config_id(cores: int, params: dict) -> str:
    """As the harness names a configuration, with `original` where the variant goes."""
    kv = ",".join(f"{k}={_fmt(params[k])}" for k in sorted(params))
    return f"throughput/{LANGUAGE}/original/c{cores}/{kv}"


def _fmt(v) -> str:
    return f"{v:g}" if isinstance(v, float) else str(v)


def argv(jar: Path, cores: int, pairs: int, duration_s: float, java: str = "java") -> list[str]:
    """The command: the original's own `Main <pairs>`, its window set to duration_s."""
    return [
        java,
        f"-XX:ActiveProcessorCount={cores}",
        f"-D{WINDOW_PROPERTY}={round(duration_s * 1000)}",
        "-jar",
        str(jar),
        str(pairs),
    ]


def printed(stdout: str | None) -> tuple[float, int] | None:
    """(seconds, messages) of the original's result line, None when it printed none."""
    m = PRINTED.search(stdout or "")
    return (float(m.group(1)), int(m.group(2))) if m else None


def msgs_per_min(rec: dict) -> float | None:
    """What the original reported, as the paper's messages per minute (count / its own
    elapsed seconds * 60); None when it printed nothing."""
    p = printed(rec.get("stdout_tail")) if rec.get("status") == "invalid" and rec.get("exit_code") == 0 else None
    return p[1] / p[0] * 60.0 if p and p[0] > 0 else None


def run(
    sweep_id: str,
    trial: int,
    cores: int,
    params: dict,
    host: dict,
    allowed_cpus: list[int],
    timeout_s: float,
    jar: Path | None = None,
    java: str = "java",
) -> dict:
    """One run of the original; its raw record (checked against the raw schema)."""
    jar = jar or jar_path()
    cpus = sorted(allowed_cpus)[: min(cores, len(allowed_cpus))]
    cmd = argv(jar, cores, int(params["pairs"]), float(params["duration_s"]), java)
    started = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)  # this run's CPU = the difference (one child at a time)
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        cmd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        preexec_fn=lambda: os.sched_setaffinity(0, cpus),
    )
    timed_out = False
    try:
        out, err = proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        timed_out = True
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
    wall = time.perf_counter() - t0
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    rec = {
        "schema_version": 1,
        "sweep_id": sweep_id,
        "config_id": config_id(cores, params),
        "trial": trial,
        "warmup": False,
        "benchmark": "throughput",
        "language": LANGUAGE,
        "variant": "paper",
        "knobs": None,
        "params": dict(params),
        "settings": dict(SETTINGS),
        "metrics": None,
        "validation": None,
        "runtime": None,
        "started_utc": started,
        "host": host,
        "cores": cores,
        "pinned_cpus": cpus,
        "command": [portable_jar(a) if a == str(jar) else a for a in cmd],
        "env": {},
        "wall_s": wall,
        "user_cpu_s": ru.ru_utime - ru0.ru_utime,
        "system_cpu_s": ru.ru_stime - ru0.ru_stime,
        "peak_rss_bytes": None,  # RUSAGE_CHILDREN's maxrss is over every child, not this run's
        "exit_code": None if proc.returncode < 0 else proc.returncode,
        "signal": -proc.returncode if proc.returncode < 0 else None,
        "status": "timeout" if timed_out else "invalid",
        "status_reason": None,
        "stdout_tail": (out or "")[-TAIL:],
        "stderr_tail": (err or "")[-TAIL:],
        "timeout_s": timeout_s,
        "memory_budget_bytes": None,
        "memory_enforcement": "none",
    }
    if not timed_out:
        rec.update(classify(out, proc.returncode))
    err_text = records.raw_errors(rec)
    if err_text:
        raise OriginalError(f"the original's record does not meet the raw schema: {err_text}")
    return rec


def classify(stdout: str | None, returncode: int) -> dict:
    """status and status_reason of a finished run from what it printed and how it ended."""
    if returncode < 0:
        return {"status": "crashed", "status_reason": f"killed by signal {-returncode}"}
    if returncode != 0:
        return {"status": "crashed", "status_reason": f"exit code {returncode}"}
    if printed(stdout) is None:
        return {
            "status": "invalid",
            "status_reason": "printed no count: System.exit ran before the manager printed (the exit quirk)",
        }
    return {"status": "invalid", "status_reason": PRINTED_REASON}


# ---- the rounds: the harness's runs and the original's, interleaved ------------------------

PROFILE = "akka-gap"
KNOB_LANGUAGE = "scala_akka24"  # fair, paper and each quirk alone (steps = "knobs")


def blocks(k: int) -> list[str]:
    """Round k's three blocks in the order they run: the original, our port on Akka 2.4.12
    (every step) and the fair-only languages, the one that goes first rotating with k."""
    order = ["original", "knobs", "fair"]
    s = (k - 1) % len(order)
    return order[s:] + order[:s]


def configs(sets: dict) -> list[tuple[int, dict]]:
    """(cores, params) of every throughput configuration the piece runs (the fair port's)."""
    from serverbench.harness import load_profile, make_plan

    prof = load_profile(PROFILE, {**sets, "defaults.trials": 1})
    plan = make_plan(prof, [KNOB_LANGUAGE], ["throughput"], False)
    seen: dict[str, tuple[int, dict]] = {}
    for t in plan.tasks:
        if t.variant == "fair" and t.benchmark == "throughput":
            seen.setdefault(config_id(t.cores, t.params), (t.cores, dict(t.params)))
    return list(seen.values())


def done(path: Path) -> set[tuple[str, int]]:
    """(config_id, trial) of the original's runs already in the file (a resumed sweep)."""
    from serverbench.harness.recording.rawlog import read_lines

    return {(r["config_id"], r["trial"]) for r in read_lines(path) if r.get("status") != "failed_to_start"}


def run_rounds(piece_name: str, sweep_id: str | None = None, raw_root=None, log=print) -> Path:
    """The piece's rounds 1..trials: each round the harness runs trial k of every language
    and step (two invocations into one sweep: scala_akka24 with its knob steps, the others
    fair), and this module runs trial k of the original at every configuration. Resumable:
    what a round already holds is skipped."""
    from serverbench.harness import host_info, load_profile, run_sweep
    from serverbench.harness.planning.pieces import piece
    from serverbench.harness.recording.rawlog import append_json

    p = piece(PROFILE, piece_name)
    jar = jar_path()
    rounds = int(load_profile(PROFILE, p.sets)["defaults"]["trials"])
    others = [x for x in load_profile(PROFILE, p.sets)["languages"] if x != KNOB_LANGUAGE]
    sweep_id = sweep_id or f"{PROFILE}-{p.name}-{datetime.now(UTC).strftime('%Y%m%dT%H%M%SZ')}"
    timeout_s = float(load_profile(PROFILE, p.sets)["throughput"]["timeout_s"])
    cfgs = configs(p.sets)
    sweep_dir = None
    for k in range(1, rounds + 1):
        for block in blocks(k):
            if block == "original":
                if sweep_dir is None:  # the harness makes the folder; the first round may start here
                    sweep_dir = Path(raw_root) / sweep_id if raw_root else _raw_dir() / sweep_id
                    sweep_dir.mkdir(parents=True, exist_ok=True)
                path = sweep_dir / FILE_NAME
                have = done(path)
                host, cpus = host_info(), sorted(os.sched_getaffinity(0))
                for cores, params in cfgs:
                    if (config_id(cores, params), k) in have:
                        continue
                    rec = run(sweep_id, k, cores, params, host, cpus, timeout_s, jar)
                    append_json(path, rec)
                    log(f"round {k}: original c{cores} pairs={params['pairs']}: {rec['status']}")
                continue
            over = {**p.sets, "defaults.trials": k}
            langs = [KNOB_LANGUAGE] if block == "knobs" else others
            if block == "knobs":
                over["throughput.steps"] = "knobs"
            sweep_dir = run_sweep(
                PROFILE,
                sweep_id=sweep_id,
                overrides=over,
                languages=langs,
                benchmarks=["throughput"],
                raw_root=raw_root,
                progress=False,
            )
            log(f"round {k}: {block} block done ({', '.join(langs)})")
    return sweep_dir if sweep_dir is not None else _raw_dir() / sweep_id


def _raw_dir() -> Path:
    from serverbench import paths

    return paths.raw_dir()
