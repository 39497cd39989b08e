"""The sbatch scripts of a sharded sweep, as text. No paths of this machine appear in
them: a job starts in the directory it was submitted from ($SLURM_SUBMIT_DIR, the
repository root) and every path is relative to it."""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Resources:
    """What one array task asks the scheduler for."""

    cpus: int
    mem_mb: int
    time: str  # sbatch --time, e.g. "04:00:00"
    partition: str | None = None
    account: str | None = None


@dataclass(frozen=True)
class SweepJob:
    sweep_id: str
    profile: str
    shards: int
    raw_rel: str  # the sweep folder relative to the repository root, e.g. data/raw/<id>
    sets: tuple[str, ...] = field(default_factory=tuple)  # --set KEY=VALUE overrides
    allow_dirty: bool = False  # `run --allow-dirty`: record although tracked files differ from the commit
    no_pdf: bool = False  # the render job writes report.html only (a compute node often has no chromium)


def array_spec(shards: list[int]) -> str:
    """sbatch --array value for these shard indices, ranges folded: [0,1,2,5] -> 0-2,5."""
    if not shards:
        raise ValueError("no shard to submit")
    xs = sorted(set(shards))
    parts, start, prev = [], xs[0], xs[0]
    for x in xs[1:] + [None]:
        if x is not None and x == prev + 1:
            prev = x
            continue
        parts.append(str(start) if start == prev else f"{start}-{prev}")
        if x is not None:
            start = prev = x
    return ",".join(parts)


def _header(lines: list[str], res: Resources) -> None:
    if res.partition:
        lines.append(f"#SBATCH --partition={res.partition}")
    if res.account:
        lines.append(f"#SBATCH --account={res.account}")
    lines.append(f"#SBATCH --time={res.time}")


def shards_script(job: SweepJob, res: Resources, shards: list[int]) -> str:
    """One array task per shard; each runs `serverbench run --shard i/N` on a whole node."""
    out_pattern = f"{job.raw_rel}/slurm/shard-%a.job-%A.out"
    args = ["--profile", job.profile, "--sweep-id", job.sweep_id]
    for s in job.sets:
        args += ["--set", s]
    if job.allow_dirty:
        args.append("--allow-dirty")
    cmd = (
        '"$PY" -m serverbench run '
        + " ".join(shlex.quote(a) for a in args)
        + f' --shard "${{SLURM_ARRAY_TASK_ID}}/{job.shards}" --no-progress'
    )
    lines = [
        "#!/bin/bash",
        f"# serverbench sweep {job.sweep_id}: profile {job.profile}, {job.shards} shard(s), one array task each.",
        "# Written by `python -m serverbench slurm submit`; resubmit unfinished shards with",
        f"#   python -m serverbench slurm submit --sweep-id {job.sweep_id}",
        f"#SBATCH --job-name=serverbench-{job.sweep_id}",
        f"#SBATCH --array={array_spec(shards)}",
        "#SBATCH --nodes=1",
        "#SBATCH --ntasks=1",
        # A whole node: nothing else runs beside a benchmark.
        "#SBATCH --exclusive",
        f"#SBATCH --cpus-per-task={res.cpus}",
        f"#SBATCH --mem={res.mem_mb}M",
        f"#SBATCH --output={out_pattern}",
    ]
    _header(lines, res)
    lines += [
        "set -euo pipefail",
        'cd "${SLURM_SUBMIT_DIR:?not started by sbatch}"',
        'PY="${SERVERBENCH_PYTHON:-${SERVERBENCH_CODE:-.}/.venv/bin/python}"',
        "# The shard's runs append to runs.<i>.jsonl; a resubmitted shard skips what it completed.",
        f"exec {cmd}",
        "",
    ]
    return "\n".join(lines)


def render_script(job: SweepJob, res: Resources) -> str:
    """The dependent job: process the whole sweep, draw the figures, render the report."""
    lines = [
        "#!/bin/bash",
        f"# serverbench sweep {job.sweep_id}: tables, figures and report once every shard has ended.",
        f"#SBATCH --job-name=serverbench-{job.sweep_id}-render",
        "#SBATCH --nodes=1",
        "#SBATCH --ntasks=1",
        "#SBATCH --cpus-per-task=1",
        "#SBATCH --mem=4096M",
        f"#SBATCH --output={job.raw_rel}/slurm/render.job-%j.out",
    ]
    _header(lines, res)
    lines += [
        "set -euo pipefail",
        'cd "${SLURM_SUBMIT_DIR:?not started by sbatch}"',
        "# SERVERBENCH_CODE: where the package's code is, when the data lives elsewhere (SERVERBENCH_ROOT).",
        f'exec "${{SERVERBENCH_CODE:-.}}/run_all.sh" --no-run'
        f" --profile {shlex.quote(job.profile)} --sweep-id {shlex.quote(job.sweep_id)}"
        + (" --no-pdf" if job.no_pdf else ""),
        "",
    ]
    return "\n".join(lines)
