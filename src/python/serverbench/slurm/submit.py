"""Submit a sharded sweep to SLURM, resubmit its unfinished shards, report its progress.

The sweep folder holds everything: slurm/submissions.jsonl (append-only: what was
submitted when, with which job ids), the sbatch scripts of each submission, and the job
logs. A shard's progress is read from its raw file, not from the scheduler, so a shard
that was cancelled, timed out or lost its node shows as unfinished and is resubmitted."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path

from serverbench import paths
from serverbench.harness.cli import refuse_dirty
from serverbench.harness.planning import profiles
from serverbench.harness.recording.shards import ShardProgress  # noqa: F401  (re-exported: slurm status shows it)
from serverbench.rawdata.columns import Col
from serverbench.slurm import batch, scheduler

SUBMISSIONS = "submissions.jsonl"
MIB = 1024 * 1024
# Memory a node needs beyond the largest run's budget: the harness, the OS, page cache.
HEADROOM_MB = 2048
TIME_RE = re.compile(r"^(\d+-)?\d{1,2}(:\d{2}){0,2}$")


class SubmitError(ValueError):
    """Bad input: nothing was submitted and nothing written."""


def slurm_dir(sweep_dir: Path) -> Path:
    return sweep_dir / "slurm"


def submissions(sweep_dir: Path) -> list[dict]:
    f = slurm_dir(sweep_dir) / SUBMISSIONS
    if not f.exists():
        return []
    return [json.loads(line) for line in f.read_text(encoding="utf-8").splitlines() if line.strip()]


def needed_resources(prof: Mapping) -> tuple[int, int]:
    """(largest core count asked for, or 0 for "max"; memory in MiB a node needs)."""
    cores, budget = 0, 0
    for table in prof.values():
        if not isinstance(table, dict):
            continue
        for c in table.get(Col.cores) or []:
            if isinstance(c, int):
                cores = max(cores, c)
        for key in ("memory_budget_bytes", "budget_bytes"):
            v = table.get(key)
            if isinstance(v, int):
                budget = max(budget, v)
    return cores, -(-budget // MIB) + HEADROOM_MB


def _check_time(t: str) -> str:
    if not TIME_RE.match(t):
        raise SubmitError(f"--time {t!r} is not a SLURM time (minutes, HH:MM:SS or D-HH:MM:SS)")
    return t


def plan_resources(
    prof: Mapping, partition: str | None, cores_per_node: int | None, time: str, check_cluster: bool
) -> batch.Resources:
    """What one shard asks for, checked against the partition's nodes when there is a cluster."""
    want_cores, mem_mb = needed_resources(prof)
    _check_time(time)
    if cores_per_node is not None and cores_per_node < 1:
        raise SubmitError(f"--cores-per-node must be at least 1, got {cores_per_node}")
    if check_cluster:
        names, default = scheduler.partitions()
        partition = partition or default
        if partition is None:
            raise SubmitError(f"this cluster has no default partition: pass --partition ({', '.join(names)})")
        nodes = scheduler.partition_nodes(partition)
        if not nodes:
            raise SubmitError(f"partition {partition!r} has no nodes")
        node_cpus = min(n.cpus for n in nodes)
        node_mem = min(n.mem_mb for n in nodes)
        if cores_per_node is None:
            cores_per_node = node_cpus
        elif cores_per_node > node_cpus:
            raise SubmitError(
                f"--cores-per-node {cores_per_node}: partition {partition!r} has nodes with {node_cpus} CPUs"
            )
        if mem_mb > node_mem:
            raise SubmitError(
                f"the profile needs {mem_mb} MiB per node (largest memory budget + {HEADROOM_MB} MiB); "
                f"partition {partition!r} has nodes with {node_mem} MiB"
            )
    elif cores_per_node is None:
        raise SubmitError("--dry-run needs --cores-per-node (there is no cluster to ask)")
    if want_cores > cores_per_node:
        # Not an error: the harness records core counts above the node's as not runnable
        # (skip_unavailable_cores) or refuses them, in the shard's log, where they belong.
        pass
    return batch.Resources(cpus=cores_per_node, mem_mb=mem_mb, time=time, partition=partition)


def new_sweep_id(profile_name: str) -> str:
    return f"{profile_name}-{datetime.now(UTC).strftime('%Y%m%dT%H%M%SZ')}"


def _relative(p: Path) -> str:
    try:
        return str(p.resolve().relative_to(paths.repo_root()))
    except ValueError:
        raise SubmitError(f"the sweep folder {p} must be inside the repository (jobs start there)") from None


@dataclass(frozen=True)
class Submission:
    sweep_dir: Path
    job: batch.SweepJob
    resources: batch.Resources
    shards: list[int]
    shards_text: str
    render_text: str


def prepare(
    profile: str | None,
    sweep_id: str | None,
    shards: int | None,
    partition: str | None,
    time: str,
    cores_per_node: int | None,
    sets: list[str],
    dry_run: bool,
    progress_fn,
    raw_root: Path | None = None,
    allow_dirty: bool = False,
    no_pdf: bool = False,
) -> Submission:
    """Everything a submission needs, checked; writes nothing.

    progress_fn(sweep_dir, job) -> list[ShardProgress] (the harness's view of each shard).
    allow_dirty: each shard runs with `run --allow-dirty` (asked for at each submission, a
    resubmission included: whether the tree may differ from its commit is decided now).
    no_pdf: the render job writes report.html only (kept by a resubmission)."""
    root = Path(raw_root) if raw_root else paths.raw_dir()
    earlier = submissions(root / sweep_id) if sweep_id else []
    if earlier:
        first = earlier[0]
        if profile is not None and profile != first[Col.profile]:
            raise SubmitError(f"sweep {sweep_id!r} was submitted with profile {first[Col.profile]!r}, not {profile!r}")
        if shards is not None and shards != first["shards"]:
            raise SubmitError(f"sweep {sweep_id!r} has {first['shards']} shards; --shards {shards} would re-split it")
        if sets and list(sets) != first["sets"]:
            raise SubmitError(f"sweep {sweep_id!r} was submitted with --set {first['sets']}; overrides cannot change")
        profile, shards, sets = first[Col.profile], first["shards"], first["sets"]
        no_pdf = no_pdf or bool(first.get("no_pdf"))  # the sweep's render job stays as first asked
    profile = profile or "quick"
    shards = 2 if shards is None else shards
    if shards < 1:
        raise SubmitError(f"--shards must be at least 1, got {shards}")
    try:
        prof = profiles.load_profile(profile, profiles.parse_set(sets))
    except profiles.ProfileError as e:
        raise SubmitError(str(e)) from None
    if not dry_run:
        scheduler.require_clients()
        refuse_dirty(raw_root, allow_dirty)  # as `run` would in each shard (exit 2), before submitting
    res = plan_resources(prof, partition, cores_per_node, time, check_cluster=not dry_run)
    sweep_id = sweep_id or new_sweep_id(prof.name)
    sweep_dir = root / sweep_id
    job = batch.SweepJob(
        sweep_id=sweep_id,
        profile=profile,
        shards=shards,
        raw_rel=_relative(sweep_dir),
        sets=tuple(sets),
        allow_dirty=allow_dirty,
        no_pdf=no_pdf,
    )
    todo = list(range(shards))
    if earlier:
        todo = [p.shard for p in progress_fn(sweep_dir, job) if not p.finished]
        active = active_shards(earlier)
        busy = sorted(set(todo) & set(active))
        if busy:
            raise SubmitError(
                f"shard(s) {', '.join(map(str, busy))} of {sweep_id!r} are still queued or running "
                f"(job {', '.join(sorted({active[s] for s in busy}))}); wait for them or scancel them"
            )
    return Submission(
        sweep_dir, job, res, todo, batch.shards_script(job, res, todo) if todo else "", batch.render_script(job, res)
    )


def active_shards(earlier: list[dict]) -> dict[int, str]:
    """{shard: job id} for shards whose array task is still pending or running."""
    jobs = [s["array_job_id"] for s in earlier if s.get("array_job_id")]
    states = scheduler.queue_states(jobs)
    active = {}
    for s in earlier:
        jid = s.get("array_job_id")
        for shard in s["submitted_shards"]:
            if f"{jid}_{shard}" in states:
                active[shard] = jid
        pending = [k for k in states if k.startswith(f"{jid}_[")]  # a pending array not yet split
        if pending:
            for shard in s["submitted_shards"]:
                active.setdefault(shard, jid)
    return active


def submit(sub: Submission) -> dict:
    """Write the scripts, submit the array and the dependent render job, log the submission."""
    d = slurm_dir(sub.sweep_dir)
    d.mkdir(parents=True, exist_ok=True)
    k = len(submissions(sub.sweep_dir))
    shards_file = d / f"submit-{k}.shards.sbatch"
    render_file = d / f"submit-{k}.render.sbatch"
    shards_file.write_text(sub.shards_text, encoding="utf-8")
    render_file.write_text(sub.render_text, encoding="utf-8")
    root = str(paths.repo_root())
    array_id = scheduler.sbatch(_relative(shards_file), cwd=root)
    render_id = scheduler.sbatch(_relative(render_file), cwd=root, dependency=f"afterany:{array_id}")
    entry = {
        "submitted_utc": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "sweep_id": sub.job.sweep_id,
        "profile": sub.job.profile,
        "shards": sub.job.shards,
        "sets": list(sub.job.sets),
        "allow_dirty": sub.job.allow_dirty,
        "no_pdf": sub.job.no_pdf,
        "submitted_shards": sub.shards,
        "resources": asdict(sub.resources),
        "array_job_id": array_id,
        "render_job_id": render_id,
        "scripts": [shards_file.name, render_file.name],
    }
    with open(d / SUBMISSIONS, "a", encoding="utf-8") as f:
        f.write(json.dumps(entry, sort_keys=True) + "\n")
    return entry
