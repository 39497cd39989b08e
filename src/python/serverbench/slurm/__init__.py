"""Sweeps on a SLURM cluster: one job-array task per shard, then a dependent job that
processes the sweep and renders the figures and report.

- batch.py      renders the two sbatch scripts (pure text; what a reader inspects)
- scheduler.py  the only code that calls sbatch, squeue, sinfo (plain CLI, no daemon API)
- submit.py     submit / resubmit / status over a sweep folder
- cli.py        `python -m serverbench slurm submit|status`

Plain sbatch scripts rather than submitit: every task is a command line of this package
(`python -m serverbench run --shard i/N`), not a pickled Python function, and the scripts
stay in the sweep folder where a user can read, edit and resubmit them by hand.
"""
