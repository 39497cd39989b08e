"""A sweep: a profile expanded into runs, executed in a seeded random order, every
result appended to data/raw/<sweep-id>/runs.jsonl; resumable; several invocations
(with different benchmark subsets) may share one sweep id."""

from __future__ import annotations

import fcntl
import json
import math
import os
import platform
import random
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time
from collections import Counter
from dataclasses import dataclass
from datetime import datetime, timezone
from functools import lru_cache
from pathlib import Path

from serverbench import __version__, contract, paths, records
from serverbench.harness import launch
from serverbench.harness.launch import Launcher, RunSpec
from serverbench.harness.profiles import (
    BENCHMARKS, ProfileError, config_id, estimate_run_s, grid, heap_mb, load_profile, machine_cpus,
    process_limit, resolve_cores,
)

SWEEP_ID_RE = r"^[A-Za-z0-9][A-Za-z0-9._-]*$"
SESSIONS_NAME = "sessions.jsonl"
MANIFEST_NAME = "manifest.json"
MEMAVAILABLE_FRACTION = 0.75
SEARCH_NAME = "max_processes"


# ---------------------------------------------------------------------------------------
@lru_cache(maxsize=1)
def host_info() -> dict:
    """The raw record's 'host' object for this machine."""
    cpu_model = platform.processor() or "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu_model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = 0
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                mem = int(line.split()[1]) * 1024
    except OSError:
        pass
    if not mem:
        mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    osname = platform.system()
    try:
        for line in Path("/etc/os-release").read_text().splitlines():
            if line.startswith("PRETTY_NAME="):
                osname = line.split("=", 1)[1].strip().strip('"')
    except OSError:
        pass
    return {
        "hostname": socket.gethostname(),
        "cpu_model": cpu_model,
        "logical_cpus": os.cpu_count() or 1,
        "memory_bytes": int(mem),
        "os": osname,
        "kernel": platform.release(),
    }


def mem_available() -> int:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return host_info()["memory_bytes"]


def git_info() -> dict:
    root = Path(__file__).resolve().parents[4]
    out = {"commit": None, "dirty": None, "root": str(root)}
    try:
        out["commit"] = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True,
                                       text=True, timeout=20, check=True).stdout.strip()
        st = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
                            capture_output=True, text=True, timeout=20, check=True).stdout
        out["dirty"] = bool(st.strip())
    except (OSError, subprocess.SubprocessError):
        pass
    return out


def _utc(ts: float | None = None) -> str:
    return datetime.fromtimestamp(ts if ts is not None else time.time(), timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


# ---------------------------------------------------------------------------------------
@dataclass
class Search:
    language: str
    variant: str
    cores: int
    start: int
    factor: float
    max_steps: int
    refine_steps: int
    budget: int
    timeout_s: float
    heap_fraction: float
    default_process_limit: int
    memory_enforcement: str

    @property
    def key(self) -> str:
        return f"{SEARCH_NAME}/{self.language}/{self.variant}/c{self.cores}/budget_bytes={self.budget}"

    def spec(self, n: int, step: int) -> RunSpec:
        params = {"processes": n}
        return RunSpec(
            benchmark="spawn", language=self.language, variant=self.variant, params=params, cores=self.cores,
            config_id=config_id("spawn_max", self.language, self.variant, self.cores, params, self.budget),
            timeout_s=self.timeout_s, memory_budget_bytes=self.budget, heap_mb=heap_mb(self.budget, self.heap_fraction),
            process_limit=process_limit("spawn", params, self.default_process_limit),
            search={"name": SEARCH_NAME, "step": step, "budget_bytes": self.budget},
            memory_enforcement=self.memory_enforcement,
        )

    def estimated_steps(self) -> int:
        # expect failure near budget / ~1 KiB per process, for a progress estimate only
        guess = max(1, math.ceil(math.log(max(2.0, self.budget / 1024 / self.start)) / math.log(self.factor)) + 1)
        return min(self.max_steps, guess) + self.refine_steps


@dataclass
class Plan:
    profile: dict
    configs: list  # (RunSpec, trials, warmup)
    searches: list
    not_runnable: list
    languages: list
    benchmarks: list

    def run_count(self) -> int:
        n = sum(t + (1 if w else 0) for _, t, w in self.configs)
        return n + sum(s.estimated_steps() for s in self.searches)

    def estimate_s(self) -> float:
        total = 0.0
        for spec, t, w in self.configs:
            total += (t + (1 if w else 0)) * min(spec.timeout_s,
                                                 estimate_run_s(spec.benchmark, spec.language, spec.params))
        for s in self.searches:
            n, steps = s.start, s.estimated_steps()
            for _ in range(steps):
                est = estimate_run_s("spawn_max", s.language, {"processes": n})
                total += min(s.timeout_s, est)
                if est >= s.timeout_s:  # a timeout ends the search (one bisection step after it)
                    total += s.timeout_s * 0.7 if s.refine_steps else 0
                    break
                n = int(n * s.factor)
        return total


def _as_list(v, what):
    if v is None:
        return None
    if isinstance(v, str):
        v = [x.strip() for x in v.split(",") if x.strip()]
    v = list(v)
    if not v:
        raise ProfileError(f"no {what} given")
    return v


def make_plan(prof: dict, languages=None, benchmarks=None, oversubscribe=False, machine=None) -> Plan:
    machine = machine or machine_cpus()
    languages = _as_list(languages, "languages")
    benchmarks = _as_list(benchmarks, "benchmarks")
    for lang in languages or []:
        if lang not in contract.LANGUAGES:
            raise ProfileError(f"unknown language {lang!r}; known: {', '.join(contract.LANGUAGES)}")
    for b in benchmarks or []:
        if b not in BENCHMARKS:
            raise ProfileError(f"unknown benchmark {b!r}; known: {', '.join(BENCHMARKS)}")
    variant = prof["variant"]
    configs, searches, not_runnable = [], [], []
    used_langs, used_benches = [], []
    for bench in BENCHMARKS:
        b = prof[bench]
        if benchmarks is not None:
            if bench not in benchmarks:
                continue
            if "languages" not in b:  # no table in the profile at all
                raise ProfileError(f"profile {prof['name']!r} has no [{bench}] table")
        elif not b.get("enabled"):
            continue
        langs = [lang for lang in b["languages"] if languages is None or lang in languages]
        cores, skipped = resolve_cores(b["cores"], machine, oversubscribe, b["skip_unavailable_cores"], f"{bench}.cores")
        for c in skipped:
            not_runnable.append({"benchmark": bench, "cores": c,
                                 "reason": f"this machine lets the harness use {machine} CPU(s)"})
        if langs and cores:
            used_benches.append(bench)
        for lang in langs:
            if lang not in used_langs:
                used_langs.append(lang)
            for c in cores:
                if bench == "spawn_max":
                    searches.append(Search(lang, variant, c, b["start"], b["factor"], b["max_steps"],
                                           b["refine_steps"], b["budget_bytes"], b["timeout_s"], b["heap_fraction"],
                                           b["process_limit"], b["memory_enforcement"]))
                    continue
                for params in grid(bench, b):
                    params = {**contract.param_defaults(bench), **params}
                    spec = RunSpec(
                        benchmark=bench, language=lang, variant=variant, params=params, cores=c,
                        config_id=config_id(bench, lang, variant, c, params),
                        timeout_s=b["timeout_s"], memory_budget_bytes=b["memory_budget_bytes"],
                        heap_mb=heap_mb(b["memory_budget_bytes"], b["heap_fraction"]),
                        process_limit=process_limit(bench, params, b["process_limit"]),
                        memory_enforcement=b["memory_enforcement"],
                    )
                    configs.append((spec, b["trials"], b["warmup"]))
    return Plan(prof, configs, searches, not_runnable, used_langs, used_benches)


def check_plan(plan: Plan, commands: dict, enforcement: str) -> None:
    """Bad input gets a clear error before anything runs."""
    if not plan.configs and not plan.searches:
        raise ProfileError("nothing to run: no benchmark/language/core count selected is runnable here"
                           + (f" (not runnable: {plan.not_runnable})" if plan.not_runnable else ""))
    for lang in plan.languages:
        if lang in commands:
            argv0 = commands[lang][0]
            if not (shutil.which(argv0) or os.path.exists(argv0)):
                raise ProfileError(f"{lang}: command {argv0!r} not found")
            continue
        exe = contract.executable(lang)
        if not exe.exists():
            build = contract.language(lang).get("build", "scripts/build.sh")
            raise ProfileError(f"{lang}: executable {exe} is missing; build it with `{build}`")
        first = contract.language(lang)["command"][0]
        if first != "{exe}" and not shutil.which(first):
            raise ProfileError(f"{lang}: {first!r} is not on PATH (needed to run {exe})")
    avail = mem_available()
    limit = int(avail * MEMAVAILABLE_FRACTION)
    budgets = [(s.config_id, s.memory_budget_bytes) for s, _, _ in plan.configs] + \
              [(s.key, s.budget) for s in plan.searches]
    for where, budget in budgets:
        if budget and budget > limit:
            raise ProfileError(
                f"{where}: memory budget {budget} bytes ({budget / 2**30:.2f} GiB) is above "
                f"{MEMAVAILABLE_FRACTION:.0%} of MemAvailable ({avail / 2**30:.2f} GiB); lower it "
                "(e.g. --set spawn_max.budget_bytes=\"2GiB\") so that the machine itself cannot run out of memory")
    wants_cgroup = [s.config_id for s, _, _ in plan.configs if s.memory_enforcement == "cgroup"] + \
                   [s.key for s in plan.searches if s.memory_enforcement == "cgroup"]
    if wants_cgroup and enforcement != "cgroup":
        raise ProfileError(f"memory_enforcement = 'cgroup' asked but not possible on this machine ({enforcement})")


# ---------------------------------------------------------------------------------------
class RawLog:
    """The append-only runs.jsonl of one sweep: each line validated, written whole, fsync'd."""

    def __init__(self, path: Path):
        self.path = path
        self.repaired_torn_line = None
        existing = path.exists() and path.stat().st_size > 0
        self.fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        if existing:
            with open(path, "rb") as f:
                f.seek(-1, os.SEEK_END)
                if f.read(1) != b"\n":
                    # A harness killed mid-write left a line without its end; end it so the
                    # next line is not glued to it (the loader reports it as bad).
                    self.repaired_torn_line = sum(1 for _ in open(path, "rb"))
                    self._write_bytes(b"\n")

    def _write_bytes(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            n = os.write(self.fd, view)
            view = view[n:]
        os.fsync(self.fd)

    def append(self, rec: dict) -> dict:
        err = records.raw_errors(rec)
        if err:
            # A harness bug must not write a bad line: keep the run as 'invalid' without its
            # native part, and if even that is not valid, stop.
            fallback = dict(rec, metrics=None, validation=None, runtime=None,
                            status="invalid" if rec.get("status") == "ok" else rec.get("status"),
                            status_reason=f"harness could not form a valid record ({err}); "
                                          f"was: {rec.get('status_reason')}")
            if records.raw_errors(fallback):
                raise RuntimeError(f"harness bug: record would not validate: {err}")
            rec = fallback
        line = json.dumps(rec, ensure_ascii=False, allow_nan=False, separators=(",", ":")) + "\n"
        self._write_bytes(line.encode("utf-8"))
        return rec

    def close(self):
        os.close(self.fd)


def read_lines(path: Path, bad: list | None = None) -> list[dict]:
    """The parsable lines of a JSON Lines file; the numbers of the others go to `bad`."""
    out = []
    if not path.exists():
        return out
    with open(path, "rb") as f:
        for no, raw in enumerate(f, start=1):
            try:
                if not raw.endswith(b"\n"):
                    raise ValueError("no newline")
                rec = json.loads(raw)
                if not isinstance(rec, dict):
                    raise ValueError("not an object")
                out.append(rec)
            except (ValueError, UnicodeDecodeError):  # JSONDecodeError is a ValueError
                if bad is not None and raw.strip():
                    bad.append(no)
    return out


def _append_json(path: Path, obj: dict) -> None:
    data = (json.dumps(obj, ensure_ascii=False, separators=(",", ":"), default=str) + "\n").encode()
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)


def _write_manifest_once(path: Path, manifest: dict) -> bool:
    if path.exists():
        return False
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(manifest, f, indent=2, default=str)
        f.write("\n")
        f.flush()
        os.fsync(f.fileno())
    try:
        os.link(tmp, path)  # fails if another invocation wrote it first: never overwrite
        return True
    except FileExistsError:
        return False
    finally:
        os.unlink(tmp)


def runtime_versions(launcher: Launcher, languages: list, variant: str) -> dict:
    """Each language's `--version` object (run side by side), or {"error": ...}."""
    procs, out = {}, {}
    for lang in languages:
        lang_spec = contract.language(lang)
        subst = {"exe": str(contract.executable(lang)), "cores": "1", "heap_mb": "256", "process_limit": "1048576"}
        prefix = launcher.commands.get(lang, lang_spec["command"])
        argv = [launch._fill(x, subst) for x in prefix] + ["--version"]
        env = {k: v for k, v in os.environ.items() if k not in launch.STRIPPED_ENV}
        env.update({k: launch._fill(v, subst) for k, v in lang_spec.get("env", {}).items()})
        try:
            procs[lang] = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                                           stdin=subprocess.DEVNULL, start_new_session=True)
        except OSError as e:
            out[lang] = {"error": str(e)}
    for lang, p in procs.items():
        try:
            stdout, stderr = p.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            launch._killpg(p.pid)
            p.communicate()
            out[lang] = {"error": "--version did not answer within 60 s"}
            continue
        line = stdout.strip().splitlines()[-1] if stdout.strip() else ""
        try:
            out[lang] = json.loads(line)
        except json.JSONDecodeError:
            out[lang] = {"error": f"exit {p.returncode}; stdout {stdout[-200:]!r}; stderr {stderr[-300:]!r}"}
    return {lang: out[lang] for lang in languages if lang in out}


# ---------------------------------------------------------------------------------------
def _lock(sweep_dir: Path):
    f = open(sweep_dir / ".lock", "a+")
    try:
        fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        f.close()
        raise ProfileError(f"sweep {sweep_dir.name!r} is being run by another harness right now") from None
    return f


def _done_set(lines: list) -> set:
    return {(r.get("config_id"), r.get("trial"), bool(r.get("warmup"))) for r in lines if r.get("status") == "ok"}


def _order(plan: Plan, done: set, seed: int) -> list:
    """Pending tasks in a seeded random order; a warm-up goes just before its config's first trial."""
    tasks = []
    for spec, trials, warm in plan.configs:
        pending = [t for t in range(1, trials + 1) if (spec.config_id, t, False) not in done]
        for t in pending:
            tasks.append(("run", spec, t, False))
    for s in plan.searches:
        tasks.append(("search", s, None, None))
    tasks.sort(key=lambda x: (x[1].config_id if x[0] == "run" else x[1].key, x[2] or 0))
    random.Random(seed).shuffle(tasks)
    warm_for = {spec.config_id: spec for spec, _, warm in plan.configs
                if warm and (spec.config_id, 0, True) not in done}
    out, seen = [], set()
    for task in tasks:
        if task[0] == "run" and task[1].config_id in warm_for and task[1].config_id not in seen:
            seen.add(task[1].config_id)
            out.append(("run", task[1], 0, True))
        out.append(task)
    return out


def run_sweep(profile="quick", *, sweep_id=None, overrides=None, languages=None, benchmarks=None, raw_root=None,
              oversubscribe=False, progress=True, commands=None) -> Path:
    """Run (or resume) a sweep; return its folder data/raw/<sweep-id>/.

    Raises ProfileError for bad input before anything runs, KeyboardInterrupt after a
    clean stop (what finished is written, the interrupted run is not)."""
    prof = load_profile(profile, overrides)
    commands = {k: list(v) for k, v in (commands or {}).items()}
    for lang in commands:
        if lang not in contract.LANGUAGES:
            raise ProfileError(f"commands: unknown language {lang!r}")
        if not commands[lang]:
            raise ProfileError(f"commands: empty command for {lang!r}")
    plan = make_plan(prof, languages, benchmarks, oversubscribe)
    wants = {s.memory_enforcement for s, _, _ in plan.configs} | {s.memory_enforcement for s in plan.searches}
    requested = "cgroup" if "cgroup" in wants else "auto"
    try:
        mode, cg_parent, how = launch.detect_enforcement(requested)
    except RuntimeError as e:
        raise ProfileError(str(e)) from None
    check_plan(plan, commands, mode)

    if sweep_id is None:
        sweep_id = f"{prof['name']}-{datetime.now(timezone.utc).strftime('%Y%m%dT%H%M%SZ')}"
    if not re.match(SWEEP_ID_RE, sweep_id):
        raise ProfileError(f"sweep id {sweep_id!r} must match {SWEEP_ID_RE}")
    root = Path(raw_root) if raw_root is not None else paths.raw_dir()
    sweep_dir = root / sweep_id
    sweep_dir.mkdir(parents=True, exist_ok=True)
    lockf = _lock(sweep_dir)
    try:
        return _run_locked(prof, plan, sweep_dir, sweep_id, commands, mode, cg_parent, how, overrides,
                           oversubscribe, progress, profile)
    finally:
        lockf.close()


def _run_locked(prof, plan, sweep_dir, sweep_id, commands, mode, cg_parent, how, overrides, oversubscribe,
                progress, profile_arg) -> Path:
    launch.cleanup_stale_cgroups(cg_parent)
    host = host_info()
    launcher = Launcher(sweep_id=sweep_id, host=host, allowed_cpus=sorted(os.sched_getaffinity(0)),
                        commands=commands, enforcement=mode, cgroup_parent=cg_parent,
                        watchdog_interval_s=prof["defaults"]["watchdog_interval_s"])
    versions = runtime_versions(launcher, plan.languages, prof["variant"])
    git = git_info()
    manifest = {
        "schema_version": 1,
        "sweep_id": sweep_id,
        "created_utc": _utc(),
        "profile": {"name": prof["name"], "source": prof["source"], "argument": str(profile_arg)},
        "resolved_profile": prof,
        "overrides": overrides or {},
        "seed": prof["seed"],
        "order": "seeded random shuffle of pending runs per session (random.Random(seed)); each session's "
                 "order is in sessions.jsonl",
        "host": host,
        "allowed_cpus": launcher.allowed_cpus,
        "runtime_versions": versions,
        "git": git,
        "serverbench_version": __version__,
        "python": sys.version.split()[0],
        "memory_enforcement": {"mode": mode, "how": how},
        "not_runnable": plan.not_runnable,
        "languages": plan.languages,
        "benchmarks": plan.benchmarks,
        "commands_overridden": {k: v for k, v in commands.items()},
    }
    _write_manifest_once(sweep_dir / MANIFEST_NAME, manifest)

    records.raw_errors({}), records.native_errors({})  # build the validators before the first timed run
    runs_path = sweep_dir / records.RAW_LOG_NAME
    sessions_path = sweep_dir / SESSIONS_NAME
    log = RawLog(runs_path)
    bad_lines: list[int] = []
    lines = read_lines(runs_path, bad_lines)
    if bad_lines:
        # Kept as they are (the log is append-only); their runs just do not count as done.
        print(f"warning: {runs_path}: {len(bad_lines)} unreadable line(s) (line {', '.join(map(str, bad_lines[:5]))}"
              f"{' ...' if len(bad_lines) > 5 else ''}) left untouched; runs they recorded are not counted as done "
              f"(python -m serverbench validate {sweep_dir} shows why)", file=sys.stderr)
    done = _done_set(lines)
    search_seen: dict[str, list] = {}
    for r in lines:
        if isinstance(r.get("search"), dict) and r["search"].get("name") == SEARCH_NAME:
            search_seen.setdefault(r["config_id"], []).append(r)
    tasks = _order(plan, done, prof["seed"])
    session_no = sum(1 for s in read_lines(sessions_path) if s.get("event") == "start") + 1
    t_start = time.time()
    _append_json(sessions_path, {
        "event": "start", "session": session_no, "started_utc": _utc(t_start), "pid": os.getpid(),
        "argv": sys.argv, "profile": prof["name"], "resolved_profile": prof, "overrides": overrides or {},
        "languages": plan.languages, "benchmarks": plan.benchmarks, "oversubscribe": oversubscribe,
        "seed": prof["seed"], "memory_enforcement": {"mode": mode, "how": how}, "runtime_versions": versions,
        "git": git, "not_runnable": plan.not_runnable, "already_ok": len(done),
        "repaired_torn_line": log.repaired_torn_line,
        "order": [[t[1].config_id, t[2], t[3]] if t[0] == "run" else [t[1].key, None, None] for t in tasks],
    })

    stats = Counter()
    overheads: list[float] = []
    interrupted = False
    bar = _progress(progress, sum(1 if t[0] == "run" else t[1].estimated_steps() for t in tasks))

    def execute(spec: RunSpec, trial: int, warmup: bool) -> dict:
        t0 = time.perf_counter()
        rec, _ = launcher.run_one(spec, trial, warmup)
        rec = log.append(rec)
        total = time.perf_counter() - t0
        if rec.get("wall_s") is not None and rec["status"] != "failed_to_start":
            overheads.append(total - rec["wall_s"])
        stats[rec["status"]] += 1
        if bar is not None:
            bar.update(1)
            bar.set_postfix_str(_postfix(stats, rec), refresh=False)
        return rec

    old_term = None
    if threading.current_thread() is threading.main_thread():
        old_term = signal.signal(signal.SIGTERM, _raise_interrupt)
    try:
        for task in tasks:
            if task[0] == "run":
                execute(task[1], task[2], task[3])
            else:
                _run_search(task[1], search_seen, execute, bar)
    except KeyboardInterrupt:
        interrupted = True
        raise
    finally:
        if old_term is not None:
            signal.signal(signal.SIGTERM, old_term)
        if bar is not None:
            bar.close()
        log.close()
        _append_json(sessions_path, {
            "event": "end", "session": session_no, "finished_utc": _utc(), "elapsed_s": time.time() - t_start,
            "interrupted": interrupted, "runs": sum(stats.values()), "status_counts": dict(stats),
            "harness_overhead_s": _summary(overheads),
            "affinity_checked": launcher.affinity_checked, "affinity_mismatch": launcher.affinity_mismatch,
        })
        shutil.rmtree(launcher.tmpdir, ignore_errors=True)
    return sweep_dir


def _raise_interrupt(signum, frame):
    raise KeyboardInterrupt


def _summary(xs: list) -> dict:
    if not xs:
        return {"n": 0, "mean": None, "median": None, "max": None}
    return {"n": len(xs), "mean": statistics.fmean(xs), "median": statistics.median(xs), "max": max(xs)}


def _postfix(stats: Counter, rec: dict) -> str:
    bad = sum(v for k, v in stats.items() if k != "ok")
    return f"ok={stats['ok']} failed={bad} last={rec['language']}/{rec['benchmark']}:{rec['status']}"


def _progress(enabled: bool, total: int):
    if not enabled:
        return None
    import tqdm

    tqdm.tqdm.monitor_interval = 0  # no monitor thread: children are forked with a preexec function
    return tqdm.tqdm(total=total, file=sys.stderr, unit="run", smoothing=0.1, dynamic_ncols=True,
                     desc="serverbench")


def _run_search(s: Search, seen: dict, execute, bar) -> None:
    """Fig. 4a: raise N (x factor) under the budget until a run fails, then optionally
    bisect between the last success and the failure. Steps already in the log (any status)
    are reused, so a resumed search continues where it stopped; a recorded failure ends it."""
    step = 0
    cap = contract.benchmark_flags("spawn")["--processes"].get("max", 200_000_000)

    def attempt(n: int) -> bool:
        nonlocal step
        spec = s.spec(n, step)
        prior = seen.get(spec.config_id)
        if prior:
            ok = any(r.get("status") == "ok" for r in prior)
            if bar is not None:
                bar.update(1)
        else:
            rec = execute(spec, 1, False)
            seen.setdefault(spec.config_id, []).append(rec)
            ok = rec["status"] == "ok"
        step += 1
        return ok

    lo, hi, n = None, None, s.start
    while step < s.max_steps:
        if attempt(n):
            lo = n
            if n >= cap:
                break
            n = min(cap, max(n + 1, math.ceil(n * s.factor)))
        else:
            hi = n
            break
    if hi is not None:
        for _ in range(s.refine_steps):
            low = lo or 0
            mid = (low + hi) // 2
            if mid <= low or mid >= hi:
                break
            if attempt(mid):
                lo = mid
            else:
                hi = mid
    if bar is not None:
        est = s.estimated_steps()
        if step != est:
            bar.total = max(bar.n, bar.total + step - est)
            bar.refresh()


# ---------------------------------------------------------------------------------------
def latest_sweep(profile=None, raw_root=None) -> Path | None:
    """The most recently created sweep folder (optionally of one profile name), or None."""
    root = Path(raw_root) if raw_root is not None else paths.raw_dir()
    if not root.is_dir():
        return None
    best = None
    for d in root.iterdir():
        m = d / MANIFEST_NAME
        if not m.is_file():
            continue
        try:
            man = json.loads(m.read_text())
        except (OSError, json.JSONDecodeError):
            continue
        if profile is not None and man.get("profile", {}).get("name") != profile:
            continue
        key = (man.get("created_utc", ""), m.stat().st_mtime, d.name)
        if best is None or key > best[0]:
            best = (key, d)
    return best[1] if best else None


def last_session(sweep_dir: Path) -> dict | None:
    ends = [s for s in read_lines(Path(sweep_dir) / SESSIONS_NAME) if s.get("event") == "end"]
    return ends[-1] if ends else None
