"""The package checking itself over the harness and the analysis: are the claims' verdicts
stable across sweeps (stability), and do the native programs meet their speed and memory
targets (targets)."""
