"""serverbench: reproduce Valkov, Chechina & Trinder (SAC 2018), Figures 3-5.

Modules, by role:
  paths, contract  where things live; the native command-line contract (spec/cli.json)
  records          the two JSON Schemas (spec/), validation, the raw-log loader
  harness          sweeps of fresh, pinned, capped native runs -> data/raw/
  stats, process   medians, intervals, ratios; raw -> data/processed/
  figures, claims  Figures 3-5; the paper's conclusions as checks with verdicts
  reference        the paper's own numbers (data/reference/)
"""

__version__ = "0.1.0"
