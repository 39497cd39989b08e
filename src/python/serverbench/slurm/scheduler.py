"""The only code that talks to SLURM: its command-line clients, run as subprocesses.
Every failure becomes a SlurmError whose message names what to do."""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass

CLIENT_TIMEOUT_S = 30.0
INSTALL_HINT = (
    "install the Debian package slurm-client (on a cluster it is on the login nodes), "
    "or start a local one-node cluster: scripts/slurm-local.sh start"
)


class SlurmError(RuntimeError):
    """The scheduler is missing, refused, or answered something unusable."""


@dataclass(frozen=True)
class Node:
    cpus: int
    mem_mb: int


def _run(args: list[str], cwd: str | None = None) -> str:
    if shutil.which(args[0]) is None:
        raise SlurmError(f"{args[0]} not found: {INSTALL_HINT}")
    try:
        p = subprocess.run(args, capture_output=True, text=True, timeout=CLIENT_TIMEOUT_S, check=False, cwd=cwd)
    except subprocess.TimeoutExpired:
        raise SlurmError(f"{args[0]} did not answer within {CLIENT_TIMEOUT_S:.0f} s (is slurmctld up?)") from None
    if p.returncode != 0:
        msg = (p.stderr.strip() or p.stdout.strip() or f"exit {p.returncode}").splitlines()[-1]
        raise SlurmError(f"{args[0]} failed: {msg}")
    return p.stdout


def require_clients() -> None:
    for c in ("sbatch", "squeue", "sinfo"):
        if shutil.which(c) is None:
            raise SlurmError(f"{c} not found: {INSTALL_HINT}")


def partitions() -> tuple[list[str], str | None]:
    """(every partition, the default one or None)."""
    names, default = [], None
    for line in _run(["sinfo", "-h", "-o", "%P"]).split():
        name = line.rstrip("*")
        if line.endswith("*"):
            default = name
        if name not in names:
            names.append(name)
    return names, default


def partition_nodes(partition: str) -> list[Node]:
    names, _ = partitions()
    if partition not in names:
        raise SlurmError(f"partition {partition!r} does not exist (this cluster has: {', '.join(names) or 'none'})")
    nodes = []
    for line in _run(["sinfo", "-h", "-N", "-p", partition, "-o", "%c %m"]).splitlines():
        cpus, mem = line.split()
        nodes.append(Node(int(cpus), int(mem.rstrip("+"))))
    return nodes


def sbatch(script: str, *, cwd: str, dependency: str | None = None) -> str:
    """Submit a script file (relative to cwd, where the job will start); return the job id."""
    args = ["sbatch", "--parsable"]
    if dependency:
        args.append(f"--dependency={dependency}")
    out = _run(args + [script], cwd=cwd).strip()
    job = out.split(";")[0]  # --parsable prints "id" or "id;cluster"
    if not job.isdigit():
        raise SlurmError(f"sbatch printed no job id: {out!r}")
    return job


def queue_states(job_ids: list[str]) -> dict[str, str]:
    """{"<job>" or "<job>_<task>": state} for the jobs still known to squeue."""
    if not job_ids:
        return {}
    try:
        out = _run(["squeue", "-h", "-r", "-j", ",".join(job_ids), "-o", "%i %T"])
    except SlurmError as e:
        if "Invalid job id" in str(e):  # every job has left the queue
            return {}
        raise
    states = {}
    for line in out.splitlines():
        if line.strip():
            jid, state = line.split()
            states[jid] = state
    return states
