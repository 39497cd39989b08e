#!/usr/bin/env python3
"""Runs one piece of the akka-gap profile: the harness's rounds and the authors' original
Akka throughput program interleaved round by round (serverbench.benchmarks.throughput.original,
docs/akka-gap.md), then writes the attribution table.

    python scripts/akka_gap.py --piece pilot            # both core counts, 10 s runs, 3 rounds
    python scripts/akka_gap.py --piece 1core            # the measurement: 60 s runs, 5 rounds
    python scripts/akka_gap.py --piece 1core --sweep-id akka-gap-1core-...   # resume
"""

from __future__ import annotations

import argparse
import sys

from serverbench.benchmarks.throughput import gap
from serverbench.benchmarks.throughput import original as akka_original
from serverbench.errors import UsageError
from serverbench.harness.cli import refuse_dirty
from serverbench.harness.planning.profiles import ProfileError


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--piece", required=True, help="a piece of src/python/serverbench/profiles/akka-gap.toml")
    ap.add_argument("--sweep-id", default=None, help="resume this sweep (default: akka-gap-<piece>-<UTC time>)")
    ap.add_argument("--allow-dirty", action="store_true", help="record into data/raw from an uncommitted tree")
    args = ap.parse_args(argv)
    try:
        refuse_dirty(None, args.allow_dirty)  # as `serverbench run`: the manifest's commit must say what ran
        sweep_dir = akka_original.run_rounds(args.piece, args.sweep_id, log=lambda m: print(m, flush=True))
    except (ProfileError, UsageError, akka_original.OriginalError) as e:
        print(f"akka_gap: {e}", file=sys.stderr)
        return 2
    out = gap.write(sweep_dir)
    print(out)
    print(gap.markdown(gap.read(out)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
