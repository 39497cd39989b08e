"""The verdicts as tables: claims.csv (one row per claim) and claims_evidence.csv (one row
per comparison), as the report and data/processed/<sweep>/ hold them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from serverbench.analysis.claims.engine import Options, Verdict, check_all
from serverbench.analysis.reading import csvout
from serverbench.analysis.reading.process import Processed

# fmt: off
CLAIMS_COLUMNS = ("id", "claim", "source", "verdict", "verdict_margin_x0.5", "verdict_margin_x2", "why", "numbers",
                  "scope", "source_regime", "regime_kind", "regime", "protocol", "definition")
# fmt: on


def claims_table(verdicts: list[Verdict]) -> pd.DataFrame:
    return pd.DataFrame([v.row() for v in verdicts], columns=list(CLAIMS_COLUMNS))


def evidence_table(verdicts: list[Verdict]) -> pd.DataFrame:
    frames = [v.evidence for v in verdicts if v.evidence is not None and not v.evidence.empty]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def write_claims(
    P: Processed, out_dir=None, options: Options | None = None, verdicts: list | None = None, **chosen: Any
) -> dict:
    """claims.csv (one row per claim, its verdict) and claims_evidence.csv (every comparison),
    judged with `options` or the benchmarks' options given by name (spawn_metric=...), or the
    `verdicts` check_all already gave for them (judging the claims again costs seconds)."""
    out = Path(out_dir) if out_dir else P.folder
    v = verdicts if verdicts is not None else check_all(P, options, **chosen)
    paths = {"claims": out / "claims.csv", "claims_evidence": out / "claims_evidence.csv"}
    csvout.write(claims_table(v), paths["claims"])
    csvout.write(evidence_table(v), paths["claims_evidence"])
    return paths
