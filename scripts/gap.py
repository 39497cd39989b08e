#!/usr/bin/env python3
"""Runs one piece of the gap profile: the harness's rounds and the authors' original
programs interleaved round by round (serverbench.originals.rounds, docs/gap.md), then writes
the sweep's attribution table and prints it.

    python scripts/gap.py --piece pilot               # the pipeline end to end: 10 s runs, 3 rounds
    python scripts/gap.py --piece throughput-1core    # a measurement: 60 s runs, 5 rounds
    python scripts/gap.py --piece pingping --sweep-id gap-pingping-...   # resume
    python scripts/gap.py --table-only --sweep-id gap-pingping-...   # its table again, from its raw logs
    SERVERBENCH_DATA=/tmp/x python scripts/gap.py --piece throughput-flags \
        --set throughput.duration_s=5.0 --set defaults.trials=1   # a smoke run, outside data/
"""

# ruff: noqa: E402 (numpy's kernels are chosen before its import, below)
from __future__ import annotations

import argparse
import sys

import serverbench

serverbench.use_portable_numpy_kernels()  # before numpy's import, as `python -m serverbench`

import pandas as pd

from serverbench.analysis.reading import gap_tables
from serverbench.errors import UsageError
from serverbench.harness.cli import refuse_dirty
from serverbench.harness.planning.profiles import ProfileError, parse_set
from serverbench.originals import attribution, rounds
from serverbench.originals.programs import OriginalError
from serverbench.rawdata import records


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--piece", help="a piece of src/python/serverbench/profiles/gap.toml")
    ap.add_argument("--sweep-id", default=None, help="resume this sweep (default: gap-<piece>-<UTC time>)")
    ap.add_argument("--allow-dirty", action="store_true", help="record into data/raw from an uncommitted tree")
    ap.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a setting on top of the piece's (as `run --set`): a trial of the pipeline, not a "
        "measurement; its sweep is gap-pilot-<piece>-<time>, which the tables leave out",
    )
    ap.add_argument(
        "--table-only",
        action="store_true",
        help="run nothing: write the sweep's (--sweep-id) attribution table again from its raw logs",
    )
    args = ap.parse_args(argv)
    if args.table_only:
        if args.piece or args.allow_dirty or args.set:
            # it runs nothing, so a piece would be silently ignored: refuse, as for any bad flag
            ap.error("--table-only runs nothing: it takes --sweep-id only, not --piece, --set or --allow-dirty")
        return _table_only(args.sweep_id)
    if not args.piece:
        ap.error("--piece is required (or --table-only --sweep-id ID)")
    try:
        refuse_dirty(None, args.allow_dirty)  # as `serverbench run`: the manifest's commit must say what ran
        sweep_dir = rounds.run_rounds(
            args.piece, args.sweep_id, log=lambda m: print(m, flush=True), overrides=parse_set(args.set)
        )
    except (ProfileError, UsageError, OriginalError) as e:
        print(f"gap: {e}", file=sys.stderr)
        return 2
    return _write(sweep_dir)


def _table_only(sweep_id: str | None) -> int:
    """The attribution table of a recorded sweep, from its raw logs (after a change of the
    attribution code: the committed table must be what the code makes of the raw logs)."""
    from serverbench import paths
    from serverbench.rawdata import sweepfiles

    folder = paths.raw_dir() / (sweep_id or "")
    if not sweep_id or not sweepfiles.is_sweep(folder):
        print(f"gap: --table-only needs --sweep-id of a sweep under data/raw (got {sweep_id!r})", file=sys.stderr)
        return 2
    return _write(folder)


def _write(sweep_dir) -> int:
    """Write and print the sweep's attribution table; 2 with the file and line named when a
    raw log line is corrupt (the raw logs stay as they are: mend the line, then --table-only)."""
    try:
        out = attribution.write(sweep_dir)
    except records.RawLogError as e:
        print(
            f"gap: {e}; the table was not written (--table-only --sweep-id {sweep_dir.name} once mended)",
            file=sys.stderr,
        )
        return 2
    print(out)
    print(gap_tables.markdown(pd.read_csv(out)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
