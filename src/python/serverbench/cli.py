"""`python -m serverbench`: one command line over the package.

Thin by design (as benchstat's main): parse, dispatch, map errors to exit codes.
Sub-commands live beside the code they drive; each such module has
`register(subparsers)` adding parsers whose `func(args, stdout, stderr) -> int` runs it.
Exit codes: 0 success, 1 the work failed, 2 bad input (usage, unknown names, bad files).
"""

from __future__ import annotations

import argparse
import json
import sys

from serverbench import __version__, protocol
from serverbench.errors import UsageError
from serverbench.rawdata import records, sweepfiles


def command_modules() -> tuple:
    """The modules that add sub-commands, imported (not named by string, so that the import
    graph sees them): the harness (run, ...), serve, the analysis (process, figures, claims,
    report), targets, slurm, stability. Imported when the parser is built, not at import."""
    from serverbench.analysis import cli as analysis_cli
    from serverbench.harness import cli as harness_cli
    from serverbench.harness.sockets import serve
    from serverbench.selfcheck import stability, targets
    from serverbench.slurm import cli as slurm_cli

    return (harness_cli, serve, analysis_cli, targets, slurm_cli, stability)


def _cmd_validate(args, stdout, stderr) -> int:
    from pathlib import Path

    from serverbench.rawdata import checksums

    if args.write_sums or args.seal:
        for src in args.paths:
            folders = checksums.sweep_folders(Path(src))
            if not folders:
                raise UsageError(f"{src}: not a sweep folder (no manifest.json) nor a folder of sweeps")
            for folder in folders:
                if args.seal:
                    try:
                        for log in sweepfiles.seal(folder):
                            print(f"sealed {log}", file=stdout)
                    except (OSError, ValueError) as e:
                        raise UsageError(str(e)) from None
                print(f"wrote {checksums.write_sums(folder)}", file=stdout)
        return 0
    total_bad = 0
    for src in args.paths:
        for problem in (p for folder in checksums.sweep_folders(Path(src)) for p in checksums.check_sums(folder)):
            print(problem, file=stderr)
            total_bad += 1
        try:
            recs, skipped = records.load_records([src], skip_bad=True)
        except FileNotFoundError as e:
            raise UsageError(str(e)) from None
        for f, line, reason in skipped:
            print(f"{f}:{line}: {reason}", file=stderr)
        total_bad += len(skipped)
        print(f"{src}: {len(recs)} valid line(s), {len(skipped)} bad", file=stdout)
    return 1 if total_bad else 0


def _cmd_validate_native(args, stdout, stderr) -> int:
    """Check native records (one JSON object a line) read from files or stdin."""
    streams = [open(p, encoding="utf-8") for p in args.paths] if args.paths else [sys.stdin]
    bad = 0
    for s in streams:
        for no, line in enumerate(s, start=1):
            if not line.strip():
                continue
            try:
                err = records.native_errors(json.loads(line))
            except json.JSONDecodeError as e:
                err = f"not valid JSON ({e.msg})"
            if err:
                bad += 1
                print(f"{getattr(s, 'name', '<stdin>')}:{no}: {err}", file=stderr)
    return 1 if bad else 0


def _cmd_docs(args, stdout, stderr) -> int:
    from serverbench.docsgen import generate

    return generate.main(check=args.check, stdout=stdout)


def _cmd_protocol_freeze(args, stdout, stderr) -> int:
    import datetime

    now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    print(f"froze protocol {protocol.freeze(now)} at {now}", file=stdout)
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m serverbench",
        description="Reproduce Valkov, Chechina & Trinder (SAC 2018): run sweeps of the native "
        "Erlang, Go and Scala/Akka benchmarks, keep raw logs, derive tables, figures and the claims report.",
    )
    p.add_argument("--version", action="version", version=f"serverbench {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    v = sub.add_parser(
        "validate",
        help="check raw logs (files or sweep folders) against the raw-record schema and their SHA256SUMS",
        description="Exit 1 when a line is not a valid raw record or a file of a sweep folder does not match "
        "the folder's SHA256SUMS (a changed byte, a missing or an unlisted file).",
    )
    v.add_argument("paths", nargs="+", help="runs.jsonl files, sweep folders or data/raw")
    v.add_argument(
        "--write-sums",
        action="store_true",
        help="write each sweep folder's SHA256SUMS (every file but hidden ones) instead of checking; "
        "for a complete sweep about to be committed",
    )
    v.add_argument(
        "--seal",
        action="store_true",
        help="seal each sweep folder: compress its raw logs losslessly to runs*.jsonl.gz (read as before; the "
        "harness appends no more to them), then write its SHA256SUMS; for a finished sweep whose log "
        "would pass the 5 MiB a tracked file may take",
    )
    v.set_defaults(func=_cmd_validate)

    vn = sub.add_parser("validate-native", help="check native records (one JSON object a line) from files or stdin")
    vn.add_argument("paths", nargs="*")
    vn.set_defaults(func=_cmd_validate_native)

    d = sub.add_parser(
        "docs",
        help="regenerate the generated blocks of the README and docs/ (flags, profiles, defaults, findings, "
        "the instructor guide) from the spec, the profiles and the committed sweeps",
    )
    d.add_argument("--check", action="store_true", help="change nothing; exit 1 if the committed docs differ")
    d.set_defaults(func=_cmd_docs)

    f = sub.add_parser(
        "protocol-freeze",
        help="freeze the protocol draft (spec/protocol-draft.json and its human text beside "
        "docs/protocol.md) as the newest protocol version, now",
        description="The newest version's files move to their archived names byte for byte; the draft gets "
        "the freeze time and both hashes are recorded in spec/protocol-versions.json. Run it before the "
        "version's first data; commit the result at once.",
    )
    f.set_defaults(func=_cmd_protocol_freeze)

    for module in command_modules():
        module.register(sub)
    return p


def run(argv, stdout=sys.stdout, stderr=sys.stderr) -> int:
    try:
        parser = build_parser()  # its modules read the protocol as they are imported
    except protocol.ProtocolError as e:
        print(f"error: {e}", file=stderr)
        return 2
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:  # argparse already printed its message
        return 0 if e.code in (0, None) else 2
    try:
        return int(args.func(args, stdout, stderr) or 0)
    except UsageError as e:
        print(f"error: {e}", file=stderr)
        return 2
    except (records.RawLogError, sweepfiles.InterruptedSeal) as e:
        print(f"error: {e}", file=stderr)
        return 2
    except protocol.ProtocolError as e:  # a changed spec without a new version, or a bad SERVERBENCH_PROTOCOL
        print(f"error: {e}", file=stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=stderr)
        return 130


def main(argv=None) -> int:
    return run(sys.argv[1:] if argv is None else argv)
