"""Sub-commands of the analysis: process, figures, claims, notebooks, spread, replication, golden, docs."""

from __future__ import annotations

from pathlib import Path

from serverbench import paths


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
    from serverbench.analysis import process

    p = Path(args.sweep)
    if (p / "summary.csv").exists():
        return process.Processed(p)
    sweep = _sweep_dir(args.sweep)
    written = process.process_sweep(sweep, getattr(args, "out", None))
    return process.Processed(written["runs"].parent)


def _claim_errors(claims_csv: Path, stderr) -> int:
    """1 (and a message) if any claim's verdict is `error` in claims.csv, else 0: a check
    that could not be computed fails the command, and so run_all.sh."""
    import pandas as pd

    if not Path(claims_csv).exists():
        return 0
    t = pd.read_csv(claims_csv)
    bad = t[t["verdict"] == "error"]
    for r in bad.itertuples():
        print(f"error: claim {r.id} could not be computed: {r.why}", file=stderr)
    return 1 if len(bad) else 0


def _copies(text: str) -> int:
    import argparse

    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--copies must be a whole number, not {text!r}") from None
    if not 0 <= n <= 10000:
        raise argparse.ArgumentTypeError(f"--copies must be between 0 and 10000, not {n}")
    return n


def _cmd_process(args, stdout, stderr) -> int:
    from serverbench.analysis import claims, process

    sweep = _sweep_dir(args.sweep)
    try:
        written = process.process_sweep(sweep, args.out, skip_bad=args.skip_bad)
    except (FileNotFoundError, ValueError) as e:
        raise _usage(str(e)) from None
    P = process.Processed(written["runs"].parent)
    written.update(claims.write_claims(P, spawn_metric=args.spawn_metric))
    if args.copies > 0:
        from serverbench.analysis import reliability

        written["claims_reliability"] = reliability.write(P, spawn_metric=args.spawn_metric, copies=args.copies)
    for name, p in written.items():
        print(f"{name}: {p}", file=stdout)
    return _claim_errors(written["claims"], stderr)


def _cmd_figures(args, stdout, stderr) -> int:
    from serverbench.analysis import figures

    P = _processed(args)
    out = figures.draw_all(P, args.out_figures, show_reference=not args.no_reference, spawn_metric=args.spawn_metric)
    for key, d in out.items():
        for ext, p in d.items():
            print(f"{key} {ext}: {p}", file=stdout)
    return 0


def _cmd_claims(args, stdout, stderr) -> int:
    from serverbench.analysis import claims

    P = _processed(args)
    V = claims.check_all(P, spawn_metric=args.spawn_metric)
    claims.write_claims(P, spawn_metric=args.spawn_metric)
    w = max(len(v.id) for v in V)
    for v in V:
        print(f"{v.id:<{w}}  {v.verdict:<18} {v.claim}", file=stdout)
        print(f"{'':<{w}}  {'':<18} {v.summary}", file=stdout)
    print(f"tables: {P.folder / 'claims.csv'}, {P.folder / 'claims_evidence.csv'}", file=stdout)
    return _claim_errors(P.folder / "claims.csv", stderr)


def _cmd_notebooks(args, stdout, stderr) -> int:
    from serverbench.analysis import pipeline

    langs = [x for x in args.languages.split(",") if x] if args.languages else None
    try:
        out = pipeline.run_notebooks(
            profile=args.profile,
            sweep_id=args.sweep_id,
            run=not args.no_run,
            languages=langs,
            show_reference=not args.no_reference,
            out_paper=args.paper_dir,
            kernel_name=args.kernel,
            spawn_metric=args.spawn_metric,
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


def _cmd_spread(args, stdout, stderr) -> int:
    from serverbench.analysis import spread
    from serverbench.analysis.claims import decision

    if len(args.sweeps) < 2:
        raise _usage("spread needs at least two sweeps of one profile on one machine")
    dirs = [_sweep_dir(s) for s in args.sweeps]
    prints = {d.name: spread.fingerprint_of(d) for d in dirs}
    known = {v for v in prints.values() if v}
    if len(known) > 1 and not args.any_machine:
        names = ", ".join(f"{k}={v}" for k, v in prints.items())
        raise _usage(f"the sweeps come from different machines (fingerprints {names}); pass --any-machine to pool them")
    out = Path(args.out) if args.out else paths.processed_dir() / decision.SPREAD_FOLDER
    import pandas as pd

    if not args.stage1_time:
        try:
            written = spread.measure(dirs, out)
        except ValueError as e:
            raise _usage(str(e)) from None
        print(pd.read_csv(written).to_string(index=False), file=stdout)
        print(f"spread: {written}", file=stdout)
    try:
        written = spread.measure_stage1(dirs, out)
    except ValueError as e:
        if args.stage1_time:
            raise _usage(str(e)) from None
        print(f"spread: stage 1's time not measured: {e}", file=stderr)  # older sweeps: no stage-1 sessions
        return 0
    print(pd.read_csv(written).to_string(index=False), file=stdout)
    print(f"spread: {written}", file=stdout)
    return 0


def _cmd_replication(args, stdout, stderr) -> int:
    import argparse
    import io

    from serverbench.analysis import replication
    from serverbench.analysis.reliability import DEFAULT_B

    if len(args.sweeps) < 2:
        raise _usage("replication needs at least two sweeps (processed folders, or raw sweeps to process)")
    folders = []
    for s in args.sweeps:
        given = Path(s)
        done = given if (given / "claims.csv").exists() else paths.processed_dir() / given.name
        if (done / "claims.csv").exists() and not args.reprocess:
            folders.append(done)
            continue
        # process the raw sweep as `process` does (claims and P(verdict) included)
        raw = _sweep_dir(given.name if (given / "claims.csv").exists() else s)
        out, err = io.StringIO(), io.StringIO()
        given_args = argparse.Namespace(
            sweep=str(raw), out=str(done), skip_bad=False, copies=DEFAULT_B, spawn_metric="all_ready_s"
        )
        if _cmd_process(given_args, out, err) != 0:
            print(err.getvalue(), file=stderr, end="")
            return 1
        folders.append(done)
    table, lines = replication.summary(folders)
    print(table.to_string(), file=stdout)
    for line in lines:
        print(line, file=stdout)
    if args.out:
        table.to_csv(args.out)
        print(f"table: {args.out}", file=stdout)
    return 0


def _cmd_golden(args, stdout, stderr) -> int:
    from serverbench.analysis import golden

    return golden.check(update=args.update, stdout=stdout)


def _cmd_docs(args, stdout, stderr) -> int:
    from serverbench.analysis import docsgen

    return docsgen.main(check=args.check, stdout=stdout)


def register(subparsers) -> None:
    from serverbench.analysis.reliability import DEFAULT_B

    metric_help = "spawn time: all_ready_s (default) or spawn_call_s (what the original programs timed)"

    p = subparsers.add_parser("process", help="raw sweep -> processed tables and claims in data/processed/<sweep-id>/")
    p.add_argument("sweep", help="sweep folder, or a sweep id under data/raw")
    p.add_argument("--out", help="output folder (default data/processed/<sweep-id>)")
    p.add_argument("--skip-bad", action="store_true", help="skip (and count) corrupt raw lines instead of failing")
    p.add_argument(
        "--copies",
        type=_copies,
        default=DEFAULT_B,
        help=f"re-runs simulated for each verdict's probability (claims_reliability.csv; 0: skip; default {DEFAULT_B})",
    )
    p.add_argument("--spawn-metric", default="all_ready_s", choices=["all_ready_s", "spawn_call_s"], help=metric_help)
    p.set_defaults(func=_cmd_process)

    f = subparsers.add_parser("figures", help="draw Figures 3-5 (PNG and PDF) from a sweep")
    f.add_argument("sweep", help="sweep folder, sweep id, or processed folder")
    f.add_argument("--out-figures", help="output folder (default paper/figures)")
    f.add_argument("--no-reference", action="store_true", help="hide the paper's own values")
    f.add_argument("--spawn-metric", default="all_ready_s", choices=["all_ready_s", "spawn_call_s"], help=metric_help)
    f.set_defaults(func=_cmd_figures)

    c = subparsers.add_parser("claims", help="check the paper's conclusions on a sweep and print the verdicts")
    c.add_argument("sweep", help="sweep folder, sweep id, or processed folder")
    c.add_argument("--spawn-metric", default="all_ready_s", choices=["all_ready_s", "spawn_call_s"], help=metric_help)
    c.set_defaults(func=_cmd_claims)

    n = subparsers.add_parser(
        "notebooks",
        help="run the figure notebooks and the report with papermill; render paper/report.html and .pdf",
    )
    n.add_argument("--profile", default="quick")
    n.add_argument(
        "--sweep-id", default=None, help="with --no-run: the sweep to analyse (default: newest of the profile)"
    )
    n.add_argument("--no-run", action="store_true", help="only analyse existing raw logs")
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
    n.add_argument("--spawn-metric", default="all_ready_s", choices=["all_ready_s", "spawn_call_s"], help=metric_help)
    n.set_defaults(func=_cmd_notebooks)

    s = subparsers.add_parser(
        "spread",
        help="measure the between-sweep sd of the claims' deciding ratios (sets the decision regions' gap) "
        "and of stage 1's wall time (a re-run's second-stage budget) from repeated sweeps "
        "(data/processed/between-sweep-spread/)",
    )
    s.add_argument("sweeps", nargs="+", help="two or more sweep folders or ids of one profile on one machine")
    s.add_argument("--out", default=None, help="output folder (default data/processed/between-sweep-spread)")
    s.add_argument("--any-machine", action="store_true", help="pool sweeps whose machine fingerprints differ")
    s.add_argument(
        "--stage1-time",
        action="store_true",
        help="measure only the between-sweep sd of stage 1's wall time (stage1.csv; reads the session logs, "
        "processes nothing)",
    )
    s.set_defaults(func=_cmd_spread)

    r = subparsers.add_parser(
        "replication",
        help="do verdicts replicate over repeated sweeps? the verdict table, supported<->contradicted "
        "flips, robust claims that changed, and the Brier score of each sweep's P(verdict)",
    )
    r.add_argument("sweeps", nargs="+", help="two or more processed folders, or raw sweep folders or ids")
    r.add_argument("--out", default=None, help="also write the verdict table to this CSV file")
    r.add_argument("--reprocess", action="store_true", help="process every sweep from its raw log with this code first")
    r.set_defaults(func=_cmd_replication)

    g = subparsers.add_parser(
        "golden",
        help="compare the golden raw sweep's processed tables and verdicts with "
        "tests/golden/expected/ (print the diff; exit 1 if they differ)",
    )
    g.add_argument("--update", action="store_true", help="regenerate tests/golden/expected/ and print the diff")
    g.set_defaults(func=_cmd_golden)

    d = subparsers.add_parser(
        "docs",
        help="regenerate the generated tables in docs/ (flags, profiles, defaults) "
        "from spec/cli.json and the profile files",
    )
    d.add_argument("--check", action="store_true", help="change nothing; exit 1 if the committed docs differ")
    d.set_defaults(func=_cmd_docs)
