"""Sharded sweeps: `run --shard i/N` runs a deterministic share of a sweep's plan.

A shard holds whole comparison groups (every language and trial of one configuration,
or every language's max-processes search at one core count and budget), so every ratio
is measured on one host. Groups go to shards by longest-estimated-first onto the least
loaded shard (ties: lower index), which depends only on the plan. Shard i appends to
runs.<i>.jsonl, logs sessions.<i>.jsonl and records its host in manifest.<i>.json; the
first shard to start writes shards.json (the layout: N, profile, plan fingerprint,
groups per shard) and every later shard must match it, else it is refused before
anything is written."""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from serverbench.harness.planning.plan import Plan
from serverbench.harness.planning.profiles import ProfileError
from serverbench.harness.recording import rawlog
from serverbench.rawdata import sweepfiles
from serverbench.rawdata.columns import Col

LAYOUT_NAME = "shards.json"
SHARD_RE = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*$")


@dataclass(frozen=True)
class Shard:
    index: int  # 0 <= index < count (as SLURM array task ids)
    count: int

    def as_dict(self) -> dict:
        return {"index": self.index, "count": self.count}

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


def parse_shard(text: str | None) -> Shard | None:
    """'i/N' -> Shard(i, N) with 0 <= i < N; None for None; ProfileError otherwise."""
    if text is None:
        return None
    m = SHARD_RE.match(str(text))
    if not m:
        raise ProfileError(f"--shard {text!r} must be i/N with integers, e.g. 0/4 (shards 0..N-1)")
    i, n = int(m.group(1)), int(m.group(2))
    if n < 1:
        raise ProfileError(f"--shard {text}: the number of shards must be at least 1")
    if i >= n:
        raise ProfileError(f"--shard {text}: shard index must be 0..{n - 1}")
    return Shard(i, n)


def fingerprint(plan: Plan) -> str:
    """What identifies a plan: every run's config and trial and every search (sha256)."""
    body = json.dumps(
        {
            "tasks": sorted(f"{t.config_id}#{t.trial}#{int(t.warmup)}" for t in plan.tasks),
            "searches": sorted(s.key for s in plan.searches),
        },
        separators=(",", ":"),
    )
    return hashlib.sha256(body.encode()).hexdigest()


def assign(plan: Plan, count: int) -> list[list[str]]:
    """Comparison groups per shard: longest estimated group first, onto the least loaded."""
    est = plan.group_estimates()
    load = [0.0] * count
    out: list[list[str]] = [[] for _ in range(count)]
    for g in sorted(est, key=lambda g: (-est[g], g)):
        i = min(range(count), key=lambda k: (load[k], k))
        out[i].append(g)
        load[i] += est[g]
    return out


def layout(plan: Plan, shard: Shard) -> dict:
    return {
        "shards": shard.count,
        "profile": plan.profile.name,
        "fingerprint": fingerprint(plan),
        "groups": assign(plan, shard.count),
    }


def read_layout(sweep_dir: Path) -> dict | None:
    p = Path(sweep_dir) / LAYOUT_NAME
    if not p.exists():
        return None
    try:
        return json.loads(p.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as e:
        raise ProfileError(f"{p}: unreadable shard layout ({e})") from None


def check(sweep_dir: Path, plan: Plan, shard: Shard | None) -> dict | None:
    """The layout this invocation must follow (None for an unsharded run); ProfileError,
    with nothing written, when the sweep folder belongs to another plan or split."""
    sweep_dir = Path(sweep_dir)
    have = read_layout(sweep_dir)
    sid = sweep_dir.name
    if shard is None:
        if have is not None:
            raise ProfileError(
                f"sweep {sid!r} is split into {have['shards']} shards: run it with --shard i/{have['shards']}"
            )
        return None
    want = layout(plan, shard)
    if have is None:
        if (sweep_dir / sweepfiles.RAW_LOG_NAME).exists():
            raise ProfileError(f"sweep {sid!r} was run without shards; --shard {shard} cannot join it")
        return want
    if (count := have["shards"]) != shard.count:
        raise ProfileError(f"--shard {shard}: sweep {sid!r} is split into {count} shards, not {shard.count}")
    if have[Col.profile] != want[Col.profile]:
        raise ProfileError(
            f"--shard {shard}: sweep {sid!r} was planned from profile {have[Col.profile]!r}, not {want[Col.profile]!r}"
        )
    if have[Col.fingerprint] != want[Col.fingerprint]:
        raise ProfileError(
            f"--shard {shard}: sweep {sid!r} was planned from another plan (its --set overrides, "
            '--languages/--benchmarks or the CPU count behind cores "max" differ)'
        )
    return have


def shard_plan(plan: Plan, lay: dict, shard: Shard) -> Plan:
    return plan.only(lay["groups"][shard.index])


@dataclass(frozen=True)
class ShardProgress:
    """One shard's planned and completed work (what `slurm status` shows)."""

    shard: int
    planned: int
    done: int
    statuses: dict

    @property
    def finished(self) -> bool:
        return self.done >= self.planned


def shard_progress(sweep_dir, job) -> list:
    """Each shard's planned and completed work, as a resumed shard would see it.

    job: anything with .profile, .shards and .sets (the --set KEY=VALUE strings), e.g.
    slurm.batch.SweepJob. Returns ShardProgress(shard, planned, done,
    statuses) per shard: planned = runs of the shard's plan plus one per search; done =
    those a resumed shard would skip (ok runs; searches whose outcome is in the log);
    statuses = status counts of the shard's raw file."""
    from serverbench.harness.planning.plan import make_plan
    from serverbench.harness.planning.profiles import load_profile, parse_set

    sweep_dir = Path(sweep_dir)
    prof = load_profile(job.profile, parse_set(list(job.sets)))
    plan = make_plan(prof)
    lay = read_layout(sweep_dir) or layout(plan, Shard(0, job.shards))
    out = []
    for i in range(job.shards):
        sub = shard_plan(plan, lay, Shard(i, job.shards))
        lines = rawlog.read_lines(sweep_dir / rawlog.names(i).runs)
        done = rawlog.done_keys(lines)
        seen = rawlog.search_steps(lines)
        n_done = sum(1 for t in sub.tasks if t.key in done) + sum(1 for s in sub.searches if search_done(s, seen))
        out.append(
            ShardProgress(
                shard=i,
                planned=len(sub.tasks) + len(sub.searches),
                done=n_done,
                statuses=dict(Counter(r.get(Col.status) for r in lines)),
            )
        )
    return out


class _WouldRun(Exception):
    pass


def search_done(s, seen: dict) -> bool:
    """Whether a resumed search would run nothing (its outcome is in the log)."""
    from serverbench.harness.running.searching import run_search

    def execute(task, finish=None):
        raise _WouldRun

    try:
        run_search(s, {k: list(v) for k, v in seen.items()}, execute, check_host=False)
    except _WouldRun:
        return False
    return True
