"""Sub-commands `run` (a sweep: the profile's plan) and `profiles`."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from serverbench import contract
from serverbench.harness.planning.profiles import ProfileError, available_profiles, load_profile, parse_set, table_names
from serverbench.rawdata.columns import Col


def register(subparsers) -> None:
    r = subparsers.add_parser(
        "run",
        help="run (or resume) a sweep of native runs into data/raw/<sweep-id>/",
        description="Run a sweep: every run a fresh, pinned, capped process; every result appended to "
        "data/raw/<sweep-id>/runs.jsonl. Starting the same --sweep-id again resumes it.",
    )
    add_run_arguments(r)
    r.set_defaults(func=_cmd_run)

    p = subparsers.add_parser("profiles", help="list the sweep profiles with run counts and estimated durations")
    p.add_argument("--oversubscribe", action="store_true")
    p.add_argument(
        "--needs",
        metavar="PROFILE",
        help="print only the languages (clients and servers, comma-separated) whose programs the "
        "profile runs on this machine: what run_all.sh has set-up build",
    )
    p.add_argument("--piece", metavar="NAME", help="with --needs: only what this piece of the profile runs")
    p.set_defaults(func=_cmd_profiles)


def add_run_arguments(r) -> None:
    """The `run` sub-command's arguments."""
    r.add_argument(
        "--profile", default="quick", help=f"{', '.join(available_profiles())} (default: quick), or a TOML file"
    )
    r.add_argument("--sweep-id", default=None, help="default: <profile>[-<piece>]-<UTC time>; an existing id resumes")
    r.add_argument(
        "--piece",
        default=None,
        help="one piece of a profile that has [pieces] (the paper's: one session on one machine each; "
        "`python -m serverbench profiles` lists them): its benchmarks and overrides, into its own sweep",
    )
    r.add_argument("--languages", default=None, help="comma-separated subset of " + ",".join(contract.languages()))
    r.add_argument("--benchmarks", default=None, help="comma-separated subset of " + ",".join(table_names()))
    r.add_argument(
        "--set",
        dest="sets",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a profile value, VALUE a TOML literal: --set pingping.repetitions=[1000,10000]",
    )
    r.add_argument(
        "--seed",
        type=int,
        default=None,
        help="seed of the run order (default: drawn afresh per sweep and recorded in its manifest; "
        "a resumed sweep keeps its recorded one); the same seed reproduces an order",
    )
    r.add_argument("--oversubscribe", action="store_true", help="allow core counts above this machine's CPUs")
    r.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    r.add_argument(
        "--allow-dirty",
        action="store_true",
        help="record into the repository's data/raw although tracked files differ from the commit "
        "(refused by default: the manifest's commit would not say what code ran)",
    )
    r.add_argument("--raw-dir", default=None, help="folder of sweeps (default data/raw)")
    r.add_argument(
        "--shard",
        default=None,
        metavar="i/N",
        help="run shard i (0..N-1) of the sweep's plan: whole comparison groups, appended to "
        "runs.<i>.jsonl; every shard of one sweep needs the same profile, --set and N",
    )


def _usage(e):
    from serverbench.errors import UsageError

    return UsageError(str(e))


@dataclass(frozen=True)
class RunOptions:
    """What one `run` is asked, typed: the command line's arguments (from_args), or a
    caller's own (`notebooks` runs its sweep with these, not with an argv it re-parses).
    Strings stay as the command line gives them (comma-separated lists, 'i/N'); run_request
    checks them."""

    profile: str = "quick"
    sweep_id: str | None = None
    piece: str | None = None
    languages: str | None = None
    benchmarks: str | None = None
    sets: tuple[str, ...] = ()  # KEY=VALUE overrides, as --set gives them
    seed: int | None = None
    oversubscribe: bool = False
    progress: bool = True
    allow_dirty: bool = False
    raw_dir: str | None = None
    shard: str | None = None

    @classmethod
    def from_args(cls, args) -> RunOptions:
        """The options of the parsed `run` arguments (add_run_arguments)."""
        return cls(
            profile=args.profile,
            sweep_id=args.sweep_id,
            piece=args.piece,
            languages=args.languages,
            benchmarks=args.benchmarks,
            sets=tuple(args.sets),
            seed=args.seed,
            oversubscribe=args.oversubscribe,
            progress=not args.no_progress,
            allow_dirty=args.allow_dirty,
            raw_dir=args.raw_dir,
            shard=args.shard,
        )


def run_request(opts: RunOptions) -> dict:
    """run_sweep's keyword arguments from a run's options (bad input: UsageError; a sweep
    into the repository's data/raw needs a clean tree)."""
    from serverbench.harness.recording.shards import parse_shard

    refuse_dirty(opts.raw_dir, opts.allow_dirty)
    try:
        overrides = parse_set(list(opts.sets))
        if opts.seed is not None:
            overrides[Col.seed] = opts.seed
        benchmarks, sweep_id = opts.benchmarks, opts.sweep_id
        if opts.piece:
            from datetime import UTC, datetime

            from serverbench.harness.planning.pieces import piece

            p = piece(opts.profile, opts.piece)
            if benchmarks:
                raise ProfileError(
                    f"--piece {p.name} sets the benchmarks ({', '.join(p.benchmarks)}): drop --benchmarks"
                )
            benchmarks = ",".join(p.benchmarks)
            overrides = {**p.sets, **overrides}
            if sweep_id is None:
                name = load_profile(opts.profile)[Col.name]
                sweep_id = f"{name}-{p.name}-{datetime.now(UTC).strftime('%Y%m%dT%H%M%SZ')}"
        return dict(
            profile=opts.profile,
            sweep_id=sweep_id,
            overrides=overrides,
            languages=opts.languages,
            benchmarks=benchmarks,
            raw_root=opts.raw_dir,
            oversubscribe=opts.oversubscribe,
            progress=opts.progress,
            shard=parse_shard(opts.shard),
        )
    except ProfileError as e:
        raise _usage(e) from None


def run(opts: RunOptions, stdout, stderr) -> int:
    """The `run` command on typed options (also the first half of `notebooks` without
    --no-run): UsageError for bad input, as from the command line."""
    from serverbench.harness.recording import sweep

    req = run_request(opts)
    try:
        sweep_dir = sweep.run_sweep(**req)  # looked up at call time: tests replace it
    except ProfileError as e:
        raise _usage(e) from None
    print_session(sweep_dir, req[Col.shard], stdout)
    return 0


def _cmd_run(args, stdout, stderr) -> int:
    return run(RunOptions.from_args(args), stdout, stderr)


def print_session(sweep_dir, shard, stdout) -> None:
    """What the last session of a sweep (or shard) did, and the sweep so far."""
    from serverbench.harness.recording import rawlog
    from serverbench.harness.recording.sweep import last_session, read_lines

    print(sweep_dir, file=stdout)
    index = shard.index if shard else None
    s = last_session(sweep_dir, index) or {}
    counts = s.get(Col.status_counts, {})
    total = Counter(r.get(Col.status) for r in read_lines(sweep_dir / rawlog.names(index).runs))
    oh = s.get("harness_overhead_s") or {}
    print(
        f"this session: {s.get(Col.runs, 0)} run(s) in {s.get(Col.elapsed_s, 0):.1f} s: "
        + (", ".join(f"{k} {v}" for k, v in sorted(counts.items())) or "nothing to do"),
        file=stdout,
    )
    so_far = ", ".join(f"{k} {v}" for k, v in sorted(total.items()))
    print(("shard so far: " if shard else "sweep so far: ") + so_far, file=stdout)
    if oh.get("n"):
        print(
            f"harness overhead per run: median {oh[Col.median] * 1000:.1f} ms, mean {oh['mean'] * 1000:.1f} ms, "
            f"max {oh['max'] * 1000:.1f} ms",
            file=stdout,
        )


def refuse_dirty(raw_dir, allow_dirty: bool) -> None:
    """A sweep into the repository's own data/raw (the committed data) needs a clean tree:
    otherwise the manifest's git commit does not say what code ran. Other folders (scratch,
    tests) and --allow-dirty record the state in the manifest (git.dirty) and go on."""
    from pathlib import Path

    from serverbench import paths
    from serverbench.harness.running.environment import git_info

    root = Path(raw_dir).resolve() if raw_dir else paths.raw_dir()
    if allow_dirty or root != (paths.repo_root() / "data" / "raw").resolve():
        return
    if git_info().get(Col.dirty):
        raise _usage(
            "tracked files outside paper/ and data/ differ from the commit (git status): commit them first, "
            "or pass --allow-dirty to record the sweep anyway (its manifest then says dirty: true)"
        )


def _cmd_profiles(args, stdout, stderr) -> int:
    from serverbench.harness.planning.plan import machine_cpus, make_plan

    cpus = machine_cpus()
    if args.piece and not args.needs:
        raise _usage("--piece needs --needs PROFILE")
    if args.needs:
        from serverbench.harness.planning.pieces import piece

        try:
            part = piece(args.needs, args.piece) if args.piece else None
            prof = load_profile(args.needs, part.sets if part else None)
            plan = make_plan(prof, benchmarks=list(part.benchmarks) if part else None, oversubscribe=args.oversubscribe)
        except ProfileError as e:
            raise _usage(e) from None
        print(",".join(plan.languages_needed()), file=stdout)
        return 0
    print(
        f"profiles (this machine: {cpus} CPU(s) for the harness); estimates are rough, start-up included", file=stdout
    )
    for name in available_profiles():
        try:
            prof = load_profile(name)
            plan = make_plan(prof, oversubscribe=args.oversubscribe)
        except ProfileError as e:
            print(f"  {name:8s} error: {e}", file=stdout)
            continue
        per = Counter()
        for task in plan.tasks:
            per[task.benchmark] += 1
        for srch in plan.searches:
            per[srch.declared.table] += srch.estimated_steps()
        est = plan.estimate_s()
        detail = ", ".join(f"{k} {v}" for k, v in per.items())
        print(f"  {name:8s} ~{plan.run_count()} runs (~{est / 60:.1f} min): {detail}", file=stdout)
        if prof.description:
            print(f"           {prof.description}", file=stdout)
        if plan.not_runnable:
            nr = sorted({(x[Col.benchmark], x[Col.cores]) for x in plan.not_runnable})
            print("           not runnable here: " + ", ".join(f"{b} c{c}" for b, c in nr), file=stdout)
        _print_pieces(name, args.oversubscribe, stdout)
    return 0


def _print_pieces(name: str, oversubscribe: bool, stdout) -> None:
    """A profile's pieces, each with its runs and estimate (`run --piece NAME`)."""
    from serverbench.harness.planning.pieces import pieces
    from serverbench.harness.planning.plan import make_plan

    try:
        found = pieces(name)
    except ProfileError as e:
        print(f"           pieces: error: {e}", file=stdout)
        return
    for p in found.values():
        try:
            plan = make_plan(load_profile(name, p.sets), benchmarks=list(p.benchmarks), oversubscribe=oversubscribe)
        except ProfileError as e:  # a piece for a bigger machine (im's large): say why, list the others
            print(f"           piece {p.name}: not on this machine: {e}", file=stdout)
            continue
        print(
            f"           piece {p.name}: ~{plan.run_count()} runs (~{plan.estimate_s() / 60:.0f} min)"
            f"  (run --piece {p.name})",
            file=stdout,
        )
