"""The machine a sweep runs on: host facts, memory, load and CPU steal, git, runtime
versions, and the manifest that records them once per sweep (or shard)."""

from __future__ import annotations

import json
import os
import platform
import socket
import subprocess
import sys
from datetime import UTC, datetime
from functools import lru_cache
from pathlib import Path

from serverbench import __version__, contract, paths
from serverbench.harness.running import fingerprint, host, limits
from serverbench.harness.running.host import mem_available  # noqa: F401  (re-exported: callers use environment.mem_available)
from serverbench.rawdata.columns import Col

CLK_TCK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


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
    mem = host.mem_total()
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


# --- contention: load average and CPU steal around a run ------------------------------------
def load_avg_1m() -> float | None:
    """The 1-minute load average (/proc/loadavg), None when unreadable."""
    try:
        return float(Path("/proc/loadavg").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def cpu_stat_lines(cpus: list[int] | None = None) -> list[list[int]] | None:
    """The tick counters (user nice system idle iowait irq softirq steal ...) of the given
    CPUs' lines of /proc/stat (the aggregate 'cpu' line when cpus is None); None when
    unreadable or none found."""
    want = None if cpus is None else {f"cpu{c}" for c in cpus}
    out = []
    try:
        with open("/proc/stat", encoding="ascii") as f:
            for line in f:
                if not line.startswith("cpu"):
                    break
                name, *vals = line.split()
                if (want is None and name != "cpu") or (want is not None and name not in want):
                    continue
                out.append([int(v) for v in vals])
    except (OSError, ValueError):
        return None
    return out or None


def cpu_ticks(cpus: list[int] | None = None) -> tuple[int, int] | None:
    """(steal ticks, all ticks) summed over the given CPUs' lines of /proc/stat (the
    aggregate 'cpu' line when cpus is None); None when unreadable."""
    lines = cpu_stat_lines(cpus)
    if lines is None:
        return None
    # guest is already counted in user, so the total is the first eight fields
    return sum(n[7] if len(n) > 7 else 0 for n in lines), sum(sum(n[:8]) for n in lines)


def contention_before(cpus: list[int]) -> dict:
    return {"load": load_avg_1m(), "ticks": cpu_ticks(cpus)}


def contention_fields(before: dict, cpus: list[int]) -> dict:
    """The raw record's contention fields for a run that started at `before`:
    load_avg_1m_before / load_avg_1m_after (/proc/loadavg), cpu_steal_s (CPU seconds
    stolen by the hypervisor from the run's pinned CPUs during it) and steal_share (that
    over all CPU time of those CPUs during the run, 0..1). None when /proc is unreadable."""
    after = cpu_ticks(cpus)
    steal_s = share = None
    if before.get("ticks") and after:
        d_steal = after[0] - before["ticks"][0]
        d_total = after[1] - before["ticks"][1]
        steal_s = max(0, d_steal) / CLK_TCK
        share = (max(0, d_steal) / d_total) if d_total > 0 else 0.0
    return {
        "load_avg_1m_before": before.get("load"),
        "load_avg_1m_after": load_avg_1m(),
        "cpu_steal_s": steal_s,
        "steal_share": share,
    }


# --- git and runtime versions ---------------------------------------------------------------
# What the pipeline itself writes: a change there says nothing about the code that ran, so
# a second ./run_all.sh in one clone (which re-renders paper/) is not refused as dirty.
PIPELINE_OUTPUTS = ("paper", "data/processed", "data/raw")


def git_info(root: Path | None = None) -> dict:
    """The checkout's commit, and whether a tracked file that decides what runs (anything
    but PIPELINE_OUTPUTS) differs from it; None for both outside a git checkout."""
    root = root or paths.code_root()
    out = {"commit": None, "dirty": None}
    try:
        out[Col.commit] = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=20, check=True
        ).stdout.strip()
        st = subprocess.run(
            [
                "git",
                "-C",
                str(root),
                "status",
                "--porcelain",
                "--untracked-files=no",
                "--",
                ".",
                *(f":(exclude){p}" for p in PIPELINE_OUTPUTS),
            ],
            capture_output=True,
            text=True,
            timeout=20,
            check=True,
        ).stdout
        out[Col.dirty] = bool(st.strip())
    except (OSError, subprocess.SubprocessError):
        pass
    return out


def runtime_versions(launcher, languages: list) -> dict:
    """Each language's `--version` object (run side by side), or {"error": ...}."""
    procs, out = {}, {}
    for lang in languages:
        argv, env = launcher.version_command(lang)
        try:
            procs[lang] = subprocess.Popen(
                argv,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                env=env,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )
        except OSError as e:
            out[lang] = {"error": str(e)}
    for lang, p in procs.items():
        try:
            stdout, stderr = p.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            host.killpg(p.pid)
            p.communicate()
            out[lang] = {"error": "--version did not answer within 60 s"}
            continue
        line = stdout.strip().splitlines()[-1] if stdout.strip() else ""
        try:
            out[lang] = json.loads(line)
        except json.JSONDecodeError:
            out[lang] = {"error": f"exit {p.returncode}; stdout {stdout[-200:]!r}; stderr {stderr[-300:]!r}"}
    return {lang: out[lang] for lang in languages if lang in out}


def utc(ts: float | None = None) -> str:
    t = datetime.now(UTC) if ts is None else datetime.fromtimestamp(ts, UTC)
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def manifest(run, launcher, versions: dict, prof) -> dict:
    """The manifest of a sweep (or of one shard of it): what ran where, written once. prof:
    the resolved profile with the sweep's seed."""
    plan = run.plan
    return {
        "schema_version": 1,
        "sweep_id": run.sweep_id,
        "created_utc": utc(),
        "profile": {"name": prof.name, "source": prof.source, "argument": str(run.profile_arg)},
        "resolved_profile": prof.as_dict(),
        "overrides": run.overrides or {},
        "seed": prof.seed,
        "order": "round-robin: trial k of every language of a configuration before trial k+1, the language that "
        "goes first rotating with k; configurations in a seeded random order (random.Random(seed)) "
        "within each round; each session's order is in its sessions file",
        "shard": run.shard.as_dict() if run.shard else None,
        "host": host_info(),
        "machine": fingerprint.machine(),  # fingerprint + calibration: "same machine" only when they match
        "allowed_cpus": launcher.allowed_cpus,
        "runtime_versions": versions,
        "git": git_info(),
        "serverbench_version": __version__,
        "python": sys.version.split()[0],
        "memory_enforcement": {
            "mode": launcher.enforcement,
            "mechanism": limits.mechanism(launcher.enforcement, launcher.cgroup_parent),  # cgroup1 | cgroup2 | ...
            "how": run.enforcement_how,
        },
        "mem_available_bytes": mem_available(),
        "not_runnable": plan.not_runnable,
        "languages": plan.languages,
        "benchmarks": plan.benchmarks,
        "commands_overridden": dict(launcher.commands),
        "contract_languages": list(contract.languages()),
        "sysctl": _sysctl(plan),
    }


def _sysctl(plan) -> dict | None:
    """The socket-related system settings (read only), when the plan has socket runs."""
    if not any(t.family == "socket" for t in plan.tasks):
        return None
    return host.sysctl_snapshot()
