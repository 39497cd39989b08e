"""The authors' original programs (bbstk/server-languages-benchmarks at 5fcfefc) as sides
of a sweep, and the attribution of the gap between ours and the paper's values to program,
quirks, runtime release and what is left (docs/gap.md).

The originals are built outside the repository by scripts/originals-build.sh and never
committed. They are not languages of spec/cli.json: each takes its own arguments and prints
a line of text, not a native record.

- programs.py: which originals there are, how each is started and what its line says;
- runner.py: one run of an original, pinned and capped like the harness's runs, as a
  raw-log line in the sweep folder's original.jsonl;
- rounds.py: a piece of the `gap` profile, the harness's runs and the originals' interleaved
  round by round;
- attribution.py: the factor table of a sweep (data/processed/<sweep>/attribution.csv).

They sit beside the benchmarks (layer 7): they run the harness and read the analysis.
"""
