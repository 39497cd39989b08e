#!/usr/bin/env python3
"""Runs one piece of the gap profile: the harness's rounds and the authors' original
programs interleaved round by round (serverbench.originals.rounds, docs/gap.md), then writes
the sweep's attribution table and prints it.

    python scripts/gap.py --piece pilot               # the pipeline end to end: 10 s runs, 3 rounds
    python scripts/gap.py --piece throughput-1core    # a measurement: 60 s runs, 5 rounds
    python scripts/gap.py --piece pingping --sweep-id gap-pingping-...   # resume
"""

from __future__ import annotations

import argparse
import sys

import pandas as pd

from serverbench.analysis.reading import gap_tables
from serverbench.errors import UsageError
from serverbench.harness.cli import refuse_dirty
from serverbench.harness.planning.profiles import ProfileError
from serverbench.originals import attribution, rounds
from serverbench.originals.programs import OriginalError


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--piece", required=True, help="a piece of src/python/serverbench/profiles/gap.toml")
    ap.add_argument("--sweep-id", default=None, help="resume this sweep (default: gap-<piece>-<UTC time>)")
    ap.add_argument("--allow-dirty", action="store_true", help="record into data/raw from an uncommitted tree")
    args = ap.parse_args(argv)
    try:
        refuse_dirty(None, args.allow_dirty)  # as `serverbench run`: the manifest's commit must say what ran
        sweep_dir = rounds.run_rounds(args.piece, args.sweep_id, log=lambda m: print(m, flush=True))
    except (ProfileError, UsageError, OriginalError) as e:
        print(f"gap: {e}", file=sys.stderr)
        return 2
    out = attribution.write(sweep_dir)
    print(out)
    print(gap_tables.markdown(pd.read_csv(out)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
