"""Sub-commands of the analysis: process, figures, claims, notebooks, replication, golden, docs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from serverbench import catalog, paths
from serverbench.rawdata.columns import Col


def _usage(msg):
    from serverbench.errors import UsageError

    return UsageError(msg)


def _sweep_dir(arg: str) -> Path:
    p = Path(arg)
    if p.is_dir():
        return p
    q = paths.raw_dir() / arg
    if q.is_dir():
        return q
    raise _usage(f"no sweep folder {arg!r} (neither a folder nor a sweep id under {paths.raw_dir()})")


def _processed(args):
    """Processed tables for a sweep id / raw folder / processed folder (processing if needed)."""
    from serverbench.analysis.reading import process

    p = Path(args.sweep)
    if (p / "summary.csv").exists():
        return process.Processed(p)
    sweep = _sweep_dir(args.sweep)
    written = process.process_sweep(sweep, getattr(args, "out", None))
    return process.Processed(written[Col.runs].parent)


def _claim_errors(claims_csv: Path, stderr) -> int:
    """1 (and a message) if any claim's verdict is `error` in claims.csv, else 0: a check
    that could not be computed fails the command, and so run_all.sh."""
    import pandas as pd

    if not Path(claims_csv).exists():
        return 0
    t = pd.read_csv(claims_csv)
    bad = t[t[Col.verdict] == "error"]
    for r in bad.itertuples():
        print(f"error: claim {r.id} could not be computed: {r.why}", file=stderr)
    return 1 if len(bad) else 0


def _cmd_process(args, stdout, stderr) -> int:
    from serverbench.analysis import claims
    from serverbench.analysis.reading import process

    sweep = _sweep_dir(args.sweep)
    try:
        written = process.process_sweep(sweep, args.out, skip_bad=args.skip_bad)
    except (FileNotFoundError, ValueError) as e:
        raise _usage(str(e)) from None
    P = process.Processed(written[Col.runs].parent)
    written.update(claims.write_claims(P, options=claims.Options.of(**_chosen(args))))
    for name, p in written.items():
        print(f"{name}: {p}", file=stdout)
    return _claim_errors(written["claims"], stderr)


def _cmd_figures(args, stdout, stderr) -> int:
    from serverbench.analysis.claims import Options
    from serverbench.analysis.plotting import figures
    from serverbench.analysis.reporting import sections

    P = _processed(args)
    opts = Options.of(**_chosen(args))
    out = figures.draw_all(
        P, args.out_figures, show_reference=not args.no_reference, options=opts, reg=sections.analysis()
    )
    for key, d in out.items():
        for ext, p in d.items():
            print(f"{key} {ext}: {p}", file=stdout)
    return 0


def _cmd_claims(args, stdout, stderr) -> int:
    from serverbench.analysis import claims

    P = _processed(args)
    options = claims.Options.of(**_chosen(args))
    V = claims.check_all(P, options)
    claims.write_claims(P, options=options, verdicts=V)
    w = max(len(v.id) for v in V)
    for v in V:
        print(f"{v.id:<{w}}  {v.verdict:<18} {v.claim}", file=stdout)
        print(f"{'':<{w}}  {'':<18} {v.summary}", file=stdout)
    print(f"tables: {P.folder / 'claims.csv'}, {P.folder / 'claims_evidence.csv'}", file=stdout)
    return _claim_errors(P.folder / "claims.csv", stderr)


def _cmd_notebooks(args, stdout, stderr) -> int:
    from serverbench.analysis.claims import Options
    from serverbench.analysis.reporting import pipeline

    langs = [x for x in args.languages.split(",") if x] if args.languages else None
    sweep_id = args.sweep_id
    if not args.no_run:  # the sweep first, by the one way into the harness: the `run` command's own code
        from serverbench.harness import cli as harness_cli

        sweep_id = sweep_id or pipeline.new_sweep_id(args.profile)
        run = harness_cli.RunOptions(
            profile=args.profile,
            sweep_id=sweep_id,
            languages=args.languages if langs else None,
            progress=False,
            allow_dirty=args.allow_dirty,
        )
        rc = harness_cli.run(run, stdout, stderr)
        if rc:
            return rc
    try:
        out = pipeline.run_notebooks(
            profile=args.profile,
            sweep_id=sweep_id,
            languages=langs,
            show_reference=not args.no_reference,
            out_paper=args.paper_dir,
            kernel_name=args.kernel,
            options=Options.of(**_chosen(args)),
            log=lambda m: print(m, file=stderr, flush=True),
            pdf=not args.no_pdf,
        )
    except FileNotFoundError as e:
        raise _usage(str(e)) from None
    except Exception as e:  # papermill's PapermillExecutionError names the failing cell
        print(f"error: {type(e).__name__}: {e}", file=stderr)
        return 1
    for k, v in out.items():
        if isinstance(v, list):
            for x in v:
                print(f"{k}: {x}", file=stdout)
        else:
            print(f"{k}: {v}", file=stdout)
    return _claim_errors(Path(out["processed"]) / "claims.csv", stderr)


def _cmd_replication(args, stdout, stderr) -> int:
    from serverbench.analysis.claims import replication, tables
    from serverbench.analysis.reading import process

    found = replication.sweeps(args.profile)
    if not found:
        raise _usage(f"no processed sweep of profile {args.profile!r} under {paths.processed_dir()}")
    if args.rejudge:  # every sweep judged again by the protocol in force, from its processed tables
        for f in found:
            tables.write_claims(process.Processed(f))
    out = replication.write(args.profile)
    rec = replication.load(args.profile)
    if args.profile == "quick":  # README's picture of the record (README: What we found)
        import matplotlib.pyplot as plt

        from serverbench.analysis.plotting.figures import save

        fig = replication.figure(rec)
        print(f"wrote {paths.portable(str(save(fig, 'replication')['png']))}", file=stdout)
        plt.close(fig)
        fig = replication.effects_figure(replication.effects_table(args.profile, rec=rec))
        print(f"wrote {paths.portable(str(save(fig, 'replication-effects')['png']))}", file=stdout)
        plt.close(fig)
    for sweep, why in replication.unaccounted(args.profile):
        print(f"not in the record: {sweep} ({why})", file=stdout)
    for line in replication.summary_lines(rec):
        print(line, file=stdout)
    print(replication.counts(rec).to_string(index=False), file=stdout)
    print(f"wrote {out.relative_to(paths.repo_root()) if out.is_relative_to(paths.repo_root()) else out}", file=stdout)
    return 0


def _cmd_dimension(args, stdout, stderr) -> int:
    from serverbench.analysis.reporting import dimension

    try:
        written = dimension.write(args.sweep)
    except FileNotFoundError as e:
        raise _usage(str(e)) from None
    for name, path in written.items():
        print(f"{name}: {paths.portable(str(path))}", file=stdout)
    return 0


def _cmd_golden(args, stdout, stderr) -> int:
    from serverbench.analysis.claims import golden

    return golden.check(update=args.update, stdout=stdout)


def _add_options(parser) -> None:
    """A flag for each option a benchmark declares (catalog.options(): spawn's spawn_metric
    is --spawn-metric), with its default and choices."""
    for o in catalog.options():
        parser.add_argument(f"--{o.name.replace('_', '-')}", default=o.default, choices=list(o.choices), help=o.doc)


def _chosen(args) -> dict[str, Any]:
    """{option: the value the command line chose} of every benchmark's options."""
    return {o.name: getattr(args, o.name) for o in catalog.options()}


def register(subparsers) -> None:

    p = subparsers.add_parser("process", help="raw sweep -> processed tables and claims in data/processed/<sweep-id>/")
    p.add_argument("sweep", help="sweep folder, or a sweep id under data/raw")
    p.add_argument("--out", help="output folder (default data/processed/<sweep-id>)")
    p.add_argument("--skip-bad", action="store_true", help="skip (and count) corrupt raw lines instead of failing")
    _add_options(p)
    p.set_defaults(func=_cmd_process)

    f = subparsers.add_parser("figures", help="draw Figures 3-5 (PNG and PDF) from a sweep")
    f.add_argument("sweep", help="sweep folder, sweep id, or processed folder")
    f.add_argument("--out-figures", help="output folder (default paper/figures)")
    f.add_argument("--no-reference", action="store_true", help="hide the paper's own values")
    _add_options(f)
    f.set_defaults(func=_cmd_figures)

    c = subparsers.add_parser("claims", help="check the paper's conclusions on a sweep and print the verdicts")
    c.add_argument("sweep", help="sweep folder, sweep id, or processed folder")
    _add_options(c)
    c.set_defaults(func=_cmd_claims)

    n = subparsers.add_parser(
        "notebooks",
        help="run the figure notebooks and the report with papermill; render paper/report.html and .pdf",
    )
    n.add_argument("--profile", default="quick")
    n.add_argument(
        "--sweep-id",
        default=None,
        help="the sweep to run, or with --no-run to analyse (default: newest of the profile)",
    )
    n.add_argument(
        "--no-run",
        action="store_true",
        help="only analyse existing raw logs (without it: `run` first, exactly as `python -m serverbench run`)",
    )
    n.add_argument("--allow-dirty", action="store_true", help="as for `run` (without --no-run)")
    n.add_argument("--no-reference", action="store_true", help="hide the paper's own values in the figures")
    n.add_argument("--languages", default=None, help="comma-separated subset: erlang,go,scala_akka")
    n.add_argument("--paper-dir", default=None, help="output folder instead of paper/")
    n.add_argument(
        "--no-pdf", action="store_true", help="write report.html only; do not print report.pdf with chromium"
    )
    n.add_argument(
        "--kernel",
        default=None,
        help="Jupyter kernel (default: the notebooks' own, serverbench, registered by scripts/setup.sh)",
    )
    _add_options(n)
    n.set_defaults(func=_cmd_notebooks)

    r = subparsers.add_parser(
        "replication",
        help="each claim's verdicts over every committed sweep of a profile, by kind of machine "
        "(writes data/processed/replication/PROFILE.csv)",
    )
    r.add_argument("--profile", default="quick", help="the profile whose sweeps are counted (default: quick)")
    r.add_argument(
        "--rejudge",
        action="store_true",
        help="judge every sweep again by the protocol in force (claims.csv from its processed tables) first",
    )
    r.set_defaults(func=_cmd_replication)

    m = subparsers.add_parser(
        "dimension",
        help="the dimensioning tables (data/processed/SWEEP/dimension_*.csv) and figure of a `dimension` sweep",
    )
    m.add_argument("sweep", help="sweep folder, or a sweep id under data/raw")
    m.set_defaults(func=_cmd_dimension)

    g = subparsers.add_parser(
        "golden",
        help="compare the golden raw sweep's processed tables and verdicts with "
        "tests/golden/expected/ (print the diff; exit 1 if they differ)",
    )
    g.add_argument("--update", action="store_true", help="regenerate tests/golden/expected/ and print the diff")
    g.set_defaults(func=_cmd_golden)
