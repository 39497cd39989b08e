"""`python -m serverbench slurm submit|status`."""

from __future__ import annotations

from pathlib import Path

from serverbench import paths
from serverbench.harness.planning.profiles import available_profiles
from serverbench.rawdata.columns import Col
from serverbench.slurm import scheduler, submit
from serverbench.slurm.scheduler import SlurmError


def register(subparsers) -> None:
    s = subparsers.add_parser("slurm", help="run a sweep on a SLURM cluster: one job-array task per shard")
    sub = s.add_subparsers(dest="slurm_command", metavar="ACTION")
    sub.required = True

    p = sub.add_parser(
        "submit",
        help="submit a sharded sweep (or resubmit a sweep's unfinished shards) and its render job",
        description="Write the sbatch scripts into data/raw/<sweep-id>/slurm/, submit one array task per shard "
        "(whole nodes, --exclusive) and a job that processes the sweep and renders the figures and "
        "report once every shard has ended (--dependency=afterany). Prints the job ids. Run it "
        "from a login node, in the repository on shared storage.",
    )
    p.add_argument(
        "--profile", default=None, help=f"{', '.join(available_profiles())} (default: quick), or a TOML file"
    )
    p.add_argument("--sweep-id", default=None, help="an earlier submission's id: resubmit its unfinished shards")
    p.add_argument("--shards", type=int, default=None, help="number of shards (array tasks), default 2")
    p.add_argument("--partition", default=None, help="SLURM partition (default: the cluster's default)")
    p.add_argument("--time", default="04:00:00", help="time limit of each shard (sbatch --time), default 04:00:00")
    p.add_argument(
        "--cores-per-node",
        type=int,
        default=None,
        help="CPUs per node to ask for (default: what the partition's nodes have)",
    )
    p.add_argument(
        "--set",
        dest="sets",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a profile value, as for `run`",
    )
    p.add_argument(
        "--allow-dirty",
        action="store_true",
        help="the shards run with `run --allow-dirty`: record although tracked files differ from the commit "
        "(refused by default, as for `run`; give it again when resubmitting)",
    )
    p.add_argument(
        "--no-pdf",
        action="store_true",
        help="the render job writes paper/report.html only (no chromium on the compute node)",
    )
    p.add_argument(
        "--dry-run",
        action="store_true",
        help="print the scripts, submit nothing, write nothing (needs --cores-per-node)",
    )
    p.set_defaults(func=_cmd_submit)

    st = sub.add_parser("status", help="per-shard progress of a sweep, from its raw files and the scheduler")
    st.add_argument("sweep_id")
    st.set_defaults(func=_cmd_status)


def _usage(msg: str):
    from serverbench.errors import UsageError

    return UsageError(msg)


def shard_progress(sweep_dir, job) -> list[submit.ShardProgress]:
    """Each shard's planned and completed runs, as the harness sees them."""
    from serverbench.harness.recording.shards import shard_progress as harness_progress

    return harness_progress(sweep_dir, job)


def _cmd_submit(args, stdout, stderr) -> int:
    try:
        sub = submit.prepare(
            args.profile,
            args.sweep_id,
            args.shards,
            args.partition,
            args.time,
            args.cores_per_node,
            args.sets,
            args.dry_run,
            shard_progress,
            allow_dirty=args.allow_dirty,
            no_pdf=args.no_pdf,
        )
    except (submit.SubmitError, SlurmError) as e:
        raise _usage(str(e)) from None
    if args.dry_run:
        print(f"# {sub.job.raw_rel}/slurm/submit-N.shards.sbatch", file=stdout)
        print(sub.shards_text, file=stdout)
        print(
            f"# {sub.job.raw_rel}/slurm/submit-N.render.sbatch (submitted with --dependency=afterany:<array>)",
            file=stdout,
        )
        print(sub.render_text, file=stdout)
        return 0
    if not sub.shards:
        print(f"{sub.job.sweep_id}: every shard is complete; nothing to submit", file=stdout)
        return 0
    try:
        entry = submit.submit(sub)
    except SlurmError as e:
        print(f"error: {e}", file=stderr)
        return 1
    print(
        f"sweep {entry[Col.sweep_id]}: shards {','.join(map(str, entry['submitted_shards']))} of {entry['shards']} "
        f"as array job {entry['array_job_id']}; render job {entry['render_job_id']} (afterany)",
        file=stdout,
    )
    print(f"array_job_id={entry['array_job_id']}", file=stdout)
    print(f"render_job_id={entry['render_job_id']}", file=stdout)
    return 0


def _cmd_status(args, stdout, stderr) -> int:
    sweep_dir = paths.raw_dir() / args.sweep_id
    earlier = submit.submissions(sweep_dir)
    if not earlier:
        raise _usage(
            f"no SLURM submission recorded for sweep {args.sweep_id!r} "
            f"(no {Path('data/raw') / args.sweep_id / 'slurm' / submit.SUBMISSIONS})"
        )
    first = earlier[0]
    from serverbench.slurm.batch import SweepJob

    job = SweepJob(first[Col.sweep_id], first[Col.profile], first["shards"], "", tuple(first["sets"]))
    progress = shard_progress(sweep_dir, job)
    try:
        active = submit.active_shards(earlier)
        states = scheduler.queue_states([s["render_job_id"] for s in earlier])
        queue_note = ""
    except SlurmError as e:
        active, states, queue_note = {}, {}, f" (scheduler not reachable: {e})"
    print(
        f"sweep {args.sweep_id}: profile {first[Col.profile]}, {first['shards']} shard(s), "
        f"{len(earlier)} submission(s){queue_note}",
        file=stdout,
    )
    for p in progress:
        where = f"job {active[p.shard]} in queue" if p.shard in active else "not in queue"
        other = ", ".join(f"{k} {v}" for k, v in sorted(p.statuses.items()) if k != "ok")
        state = "complete" if p.finished else "unfinished"
        print(
            f"  shard {p.shard}: {p.done}/{p.planned} runs done, {state}; {where}"
            + (f"; also recorded: {other}" if other else ""),
            file=stdout,
        )
    last = earlier[-1]
    print(f"  render job {last['render_job_id']}: {states.get(last['render_job_id'], 'not in queue')}", file=stdout)
    return 0
