"""A sweep: a profile's plan run task by task (round-robin across languages), every
result appended to data/raw/<sweep-id>/runs.jsonl (runs.<i>.jsonl for shard i);
resumable; several invocations (benchmark subsets, shards) may share one sweep id.

Pipeline: planning.profiles (file -> the resolved Profile) -> planning.plan (Tasks,
Searches, order) -> recording.checks (before anything runs) -> recording.shards (which
groups this invocation runs) -> running.launch (one run per task, by its family: FAMILIES
adds the socket family to the Launcher's own) and running.searching (a search's steps) ->
recording.rawlog (append, resume), with running.environment (host, manifest, load and
steal). This module only orchestrates: files, progress, interrupts."""

from __future__ import annotations

import os
import re
import shutil
import signal
import statistics
import sys
import threading
import time
from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from serverbench import contract, paths
from serverbench.harness.planning.plan import Plan, make_plan, schedule
from serverbench.harness.planning.profiles import ProfileError, load_profile, sweep_seed
from serverbench.harness.planning.search import Search
from serverbench.harness.recording import checks, rawlog, shards
from serverbench.harness.recording.rawlog import read_lines
from serverbench.harness.recording.shards import Shard, parse_shard
from serverbench.harness.running import cgroups, environment, fingerprint, limits
from serverbench.harness.running.environment import host_info, utc
from serverbench.harness.running.launch import Launcher
from serverbench.harness.running.replicated import grid_rule, run_attempts, run_replicated
from serverbench.harness.running.searching import run_search
from serverbench.harness.sockets.run import SOCKET
from serverbench.rawdata import records, sweepfiles
from serverbench.rawdata.columns import Col

SWEEP_ID_RE = r"^[A-Za-z0-9][A-Za-z0-9._-]*$"
# The benchmark families beyond the Launcher's own "process" (spec/cli.json benchmarks.<id>.family)
FAMILIES = {"socket": SOCKET}

__all__ = ["run_sweep", "latest_sweep", "last_session", "read_lines", "host_info", "make_plan"]


@dataclass
class SweepRun:
    """One invocation of the harness on one sweep (or one shard of it)."""

    sweep_id: str
    sweep_dir: Path
    plan: Plan  # this invocation's share of the plan
    profile_arg: str
    overrides: dict
    oversubscribe: bool
    shard: Shard | None
    enforcement_how: str
    progress: bool

    @property
    def files(self) -> rawlog.SweepFiles:
        return rawlog.names(self.shard.index if self.shard else None)


def run_sweep(
    profile="quick",
    *,
    sweep_id=None,
    overrides=None,
    languages=None,
    benchmarks=None,
    raw_root=None,
    oversubscribe=False,
    progress=True,
    commands=None,
    shard=None,
) -> Path:
    """Run (or resume) a sweep, or one shard of it ('i/N' or a Shard); return its folder.

    Raises ProfileError for bad input before anything is written, KeyboardInterrupt
    after a clean stop on Ctrl-C or SIGTERM (what finished is written, the interrupted
    run is not)."""
    shard = parse_shard(shard) if isinstance(shard, (str, type(None))) else shard
    prof = load_profile(profile, overrides)
    commands = {k: list(v) for k, v in (commands or {}).items()}
    for lang in commands:
        if lang not in contract.languages():
            raise ProfileError(f"commands: unknown language {lang!r}")
        if not commands[lang]:
            raise ProfileError(f"commands: empty command for {lang!r}")
    plan = make_plan(prof, languages, benchmarks, oversubscribe)
    wants = {t.memory_enforcement for t in plan.tasks} | {s.settings[Col.memory_enforcement] for s in plan.searches}
    try:
        mode, cg_parent, how = limits.detect_enforcement("cgroup" if "cgroup" in wants else "auto")
    except RuntimeError as e:
        raise ProfileError(str(e)) from None
    checks.check_plan(plan, commands, mode)
    limits.check_budgets(plan, commands, mode, cg_parent)
    if sweep_id is None:
        sweep_id = f"{prof[Col.name]}-{datetime.now(UTC).strftime('%Y%m%dT%H%M%SZ')}"
    if not re.match(SWEEP_ID_RE, sweep_id):
        raise ProfileError(f"sweep id {sweep_id!r} must match {SWEEP_ID_RE}")
    sweep_dir = (Path(raw_root) if raw_root is not None else paths.raw_dir()) / sweep_id
    rawlog.refuse_sealed(sweep_dir)  # writes nothing
    lay = shards.check(sweep_dir, plan, shard)  # refuses another sweep's plan; writes nothing
    elsewhere = fingerprint.other_machine(sweep_dir)  # refuses another machine's sweep; writes nothing
    if elsewhere:
        raise ProfileError(elsewhere)
    if shard is not None:
        plan = shards.shard_plan(plan, lay, shard)
    run = SweepRun(sweep_id, sweep_dir, plan, str(profile), overrides or {}, oversubscribe, shard, how, progress)
    sweep_dir.mkdir(parents=True, exist_ok=True)
    lockf = rawlog.lock(run.sweep_dir / run.files.lock)
    try:
        if lay is not None and not rawlog.write_once(sweep_dir / shards.LAYOUT_NAME, lay):
            shards.check(sweep_dir, make_plan(prof, languages, benchmarks, oversubscribe), shard)  # lost a race
        launcher = Launcher(
            sweep_id=sweep_id,
            host=host_info(),
            allowed_cpus=sorted(os.sched_getaffinity(0)),
            commands=commands,
            enforcement=mode,
            cgroup_parent=cg_parent,
            watchdog_interval_s=prof.defaults[Col.watchdog_interval_s],
            families=FAMILIES,
        )
        cgroups.cleanup_stale(cg_parent)
        _execute(run, launcher)
    finally:
        lockf.close()
    return sweep_dir


def _execute(run: SweepRun, launcher: Launcher) -> None:
    plan = run.plan
    # the seed: given, else the manifest's, else fresh; a new profile value, the plan's unchanged
    prof = plan.profile.with_seed(sweep_seed(plan.profile, run.sweep_dir))
    versions = environment.runtime_versions(launcher, plan.languages)
    man = environment.manifest(run, launcher, versions, prof)
    rawlog.write_once(run.sweep_dir / rawlog.MANIFEST_NAME, man)
    if run.shard is not None:
        rawlog.write_once(run.sweep_dir / run.files.manifest, man)
    records.raw_errors({}), records.native_errors({})  # build the validators before the first timed run
    runs_path, sessions_path = run.sweep_dir / run.files.runs, run.sweep_dir / run.files.sessions
    log = rawlog.RawLog(runs_path)
    bad_lines: list[int] = []
    lines = read_lines(runs_path, bad_lines)
    if bad_lines:
        # Kept as they are (the log is append-only); their runs just do not count as done.
        print(
            f"warning: {runs_path}: {len(bad_lines)} unreadable line(s) (line {', '.join(map(str, bad_lines[:5]))}"
            f"{' ...' if len(bad_lines) > 5 else ''}) left untouched; runs they recorded are not counted as done "
            f"(python -m serverbench validate {run.sweep_dir} shows why)",
            file=sys.stderr,
        )
    done = rawlog.done_keys(lines)
    # a grid run's last attempt in the log, for a benchmark whose grid runs follow its own re-run rule
    grid_last = {(r.get(Col.config_id), r.get(Col.trial), bool(r.get(Col.warmup))): r for r in lines if _grid_marked(r)}
    seen = rawlog.search_steps(lines)
    work = schedule(plan, done, prof.seed)
    session_no = sum(1 for s in read_lines(sessions_path) if s.get("event") == "start") + 1
    t_start = time.time()
    rawlog.append_json(
        sessions_path,
        {
            "event": "start",
            "session": session_no,
            "started_utc": utc(t_start),
            "pid": os.getpid(),
            "argv": sys.argv,
            "profile": prof.name,
            "resolved_profile": prof.as_dict(),
            "overrides": run.overrides,
            "languages": plan.languages,
            "benchmarks": plan.benchmarks,
            "oversubscribe": run.oversubscribe,
            "shard": run.shard.as_dict() if run.shard else None,
            "seed": prof.seed,
            "memory_enforcement": {
                "mode": launcher.enforcement,
                "mechanism": limits.mechanism(launcher.enforcement, launcher.cgroup_parent),
                "how": run.enforcement_how,
            },
            "runtime_versions": versions,
            "git": man[Col.git],
            "not_runnable": plan.not_runnable,
            "already_ok": len(done),
            "repaired_torn_line": log.repaired_torn_line,
            "order": [[w.key, None, None] if isinstance(w, Search) else [w.config_id, w.trial, w.warmup] for w in work],
        },
    )
    stats: Counter = Counter()
    overheads: list[float] = []
    searches: list[dict] = []
    bar = _progress(run.progress, sum(_runs_of(w) for w in work))

    def execute(task, finish=None) -> dict:
        if task.search is not None and Col.attempt in task.search:
            return once(task, finish)  # a replicated search's attempt: its runner re-runs by its own rule
        if task.search is None and (rule := grid_rule(task.benchmark)) is not None:
            before = grid_last.get(task.key)  # the benchmark's own rule (IM's: protocol 5's im.search.reruns)
            if (before or {}).get(Col.search, {}).get("final"):
                return before  # decided by its rule in an earlier session: its last attempt is the run's
            return run_attempts(lambda fin: once(task, fin), rule, before)
        rec = once(task, finish)
        if rec.get(Col.status) == "ok" and rec.get(Col.interfered) and prof.rerun_interfered:
            rec = once(task, finish, rerun=True)  # once more; the later ok attempt is the one selected
        return rec

    def once(task, finish=None, rerun: bool = False) -> dict:
        t0 = time.perf_counter()
        rec, _ = launcher.run(task)
        if rerun:
            rec[Col.rerun_of_interfered] = True
        if finish is not None:  # a search step's verdict (running.searching.judged)
            finish(rec)
        rec = log.append(rec)
        if rec.get(Col.wall_s) is not None and rec[Col.status] != "failed_to_start":
            overheads.append(time.perf_counter() - t0 - rec[Col.wall_s])
        stats[rec[Col.status]] += 1
        if bar is not None:
            bar.update(1)
            bar.set_postfix_str(_postfix(stats, rec), refresh=False)
        return rec

    interrupted = False
    old_term = None
    if threading.current_thread() is threading.main_thread():
        old_term = signal.signal(signal.SIGTERM, _raise_interrupt)
    try:
        for w in work:
            if isinstance(w, Search):
                tick = (lambda: bar.update(1)) if bar is not None else None
                runner = run_replicated if w.kind else run_search
                searches.append(runner(w, seen, execute, tick))
                _fix_total(bar, w, searches[-1][Col.steps] + len(searches[-1][Col.stage]))
            else:
                execute(w)
    except KeyboardInterrupt:
        interrupted = True
        raise
    finally:
        if old_term is not None:
            signal.signal(signal.SIGTERM, old_term)
        if bar is not None:
            bar.close()
        log.close()
        rawlog.append_json(
            sessions_path,
            {
                "event": "end",
                "session": session_no,
                "finished_utc": utc(),
                "elapsed_s": time.time() - t_start,
                "interrupted": interrupted,
                "runs": sum(stats.values()),
                "status_counts": dict(stats),
                "harness_overhead_s": _summary(overheads),
                "searches": searches,
                "affinity_checked": launcher.affinity_checked,
                "affinity_mismatch": launcher.affinity_mismatch,
            },
        )
        shutil.rmtree(launcher.tmpdir, ignore_errors=True)


def _grid_marked(r: dict) -> bool:
    """A grid run's attempt marked by its benchmark's re-run rule (running.replicated.run_attempts)."""
    got = r.get(Col.search)
    return isinstance(got, dict) and "final" in got and not got.get(Col.name)


def _raise_interrupt(signum, frame):
    raise KeyboardInterrupt


def _summary(xs: list) -> dict:
    if not xs:
        return {"n": 0, "mean": None, "median": None, "max": None}
    return {"n": len(xs), "mean": statistics.fmean(xs), "median": statistics.median(xs), "max": max(xs)}


def _postfix(stats: Counter, rec: dict) -> str:
    bad = sum(v for k, v in stats.items() if k != "ok")
    return f"ok={stats['ok']} failed={bad} last={rec[Col.language]}/{rec[Col.benchmark]}:{rec[Col.status]}"


def _progress(enabled: bool, total: int):
    if not enabled:
        return None
    import tqdm

    tqdm.tqdm.monitor_interval = 0  # no monitor thread: children are forked with a preexec function
    return tqdm.tqdm(total=total, file=sys.stderr, unit="run", smoothing=0.1, dynamic_ncols=True, desc="serverbench")


def _runs_of(w) -> int:
    """The runs a work item is expected to make (a search: its estimate and its stage)."""
    return w.estimated_steps() + w.stage_runs() if isinstance(w, Search) else 1


def _fix_total(bar, s: Search, steps: int) -> None:
    est = _runs_of(s)
    if bar is not None and steps != est:
        bar.total = max(bar.n, bar.total + steps - est)
        bar.refresh()


# ---------------------------------------------------------------------------------------
def latest_sweep(profile=None, raw_root=None) -> Path | None:
    """The most recently created sweep folder (optionally of one profile name), or None."""
    root = Path(raw_root) if raw_root is not None else paths.raw_dir()
    if not root.is_dir():
        return None
    best = None
    for d in root.iterdir():
        man = sweepfiles.read_manifest(d)  # {} for a folder without a readable manifest
        if not man:
            continue
        if profile is not None and man.get(Col.profile, {}).get(Col.name) != profile:
            continue
        key = (man.get(Col.created_utc, ""), (d / rawlog.MANIFEST_NAME).stat().st_mtime, d.name)
        if best is None or key > best[0]:
            best = (key, d)
    return best[1] if best else None


def last_session(sweep_dir: Path, shard: int | None = None) -> dict | None:
    """The last 'end' line of a sweep's (or a shard's) sessions file."""
    ends = [s for s in read_lines(Path(sweep_dir) / rawlog.names(shard).sessions) if s.get("event") == "end"]
    return ends[-1] if ends else None
