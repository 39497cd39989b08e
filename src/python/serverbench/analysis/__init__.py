"""Raw logs -> processed tables, statistics, the paper's claims, figures and the report.

The analysis is in wings, each importing only the wings listed before it (a test of the
import graph checks the order):

- statistics/  medians, intervals, the paired ratio of every verdict
- reading/     raw logs -> processed tables; the registry the benchmark packages plug into
- claims/      the claims engine and protocol; the sources' own numbers; replication
- plotting/    the paper's figures, their style, the forest plot
- auditing/    language or original code? (the audit)
- explorer/    sweeps side by side (explore notebook, labs)
- reporting/   the report, its sections, the notebooks' entry, the rendering pipeline

cli.py holds the analysis' sub-commands.
"""
