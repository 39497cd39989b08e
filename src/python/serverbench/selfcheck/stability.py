"""`python -m serverbench stability`: are the claims' verdicts stable?

Runs the profile's claim-deciding configurations (every enabled table) as R independent sweeps (each its own
sweep id, its own seed, its own harness session) and prints, claim by claim, the verdict
of each repeat and whether they agree. It drives the harness (the sweeps) and then the
analysis (their verdicts), so it sits above both, beside the command line."""

from __future__ import annotations

from datetime import UTC, datetime

from serverbench.harness.planning.profiles import ProfileError, parse_set
from serverbench.rawdata.columns import Col


def run_stability(
    profile: str,
    repeats: int,
    *,
    sweep_prefix=None,
    overrides=None,
    languages=None,
    raw_root=None,
    progress=True,
    commands=None,
    out=print,
) -> int:
    """Run `repeats` independent sweeps, print the agreement table; 0 when every claim
    agrees, 1 otherwise."""
    from serverbench.harness.recording.sweep import run_sweep

    if repeats < 2:
        raise ProfileError(f"--repeats must be at least 2 (independent sweeps to compare), got {repeats}")
    prefix = sweep_prefix or f"stability-{profile}-{datetime.now(UTC).strftime('%Y%m%dT%H%M%SZ')}"
    base = dict(overrides or {})
    from serverbench.harness.planning.profiles import load_profile

    seed = load_profile(profile, base)[Col.seed]
    dirs = []
    for r in range(1, repeats + 1):
        # independent: each repeat its own order; drawn per sweep unless a seed was given
        ov = base if seed is None else {**base, "seed": seed + r - 1}
        # every enabled table of the profile: each one decides some claim (C1-C12, T1-T3, ...)
        dirs.append(
            run_sweep(
                profile,
                sweep_id=f"{prefix}-r{r}",
                overrides=ov,
                languages=languages,
                raw_root=raw_root,
                progress=progress,
                commands=commands,
            )
        )
    from serverbench.analysis.claims import replication

    table = replication.by_sweep(replication.of_raw_sweeps(dirs))
    out(f"stability of the verdicts over {repeats} independent {profile} sweeps: " + ", ".join(d.name for d in dirs))
    out(table.to_string(index=False))
    n_same = int((table["agree"] == "yes").sum())
    out(f"{n_same} of {len(table)} claims agree")
    return 0 if n_same == len(table) else 1


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "stability",
        help="run R independent sweeps and print, claim by claim, whether the verdicts agree",
        description="Runs the profile's claim-deciding benchmarks as R independent sweeps (own sweep id and seed "
        "each) and compares the claims' verdicts. Exit 0 when every claim agrees, 1 when one differs, "
        "2 on bad input.",
    )
    p.add_argument("--profile", default="quick")
    p.add_argument("--repeats", type=int, default=2, help="independent sweeps (at least 2; default 2)")
    p.add_argument("--sweep-id", default=None, help="prefix of the sweep ids (<prefix>-r1, -r2, ...)")
    p.add_argument("--languages", default=None)
    p.add_argument("--set", dest="sets", action="append", default=[], metavar="KEY=VALUE")
    p.add_argument("--raw-dir", default=None)
    p.add_argument("--no-progress", action="store_true")
    p.set_defaults(func=_cmd)


def _cmd(args, stdout, stderr) -> int:
    from serverbench.errors import UsageError

    try:
        return run_stability(
            args.profile,
            args.repeats,
            sweep_prefix=args.sweep_id,
            overrides=parse_set(args.sets),
            languages=args.languages,
            raw_root=args.raw_dir,
            progress=not args.no_progress,
            out=lambda s: print(s, file=stdout, flush=True),
        )
    except ProfileError as e:
        raise UsageError(str(e)) from None
