"""Do verdicts replicate? (issue 26; docs/statistics.md, "How sure is a verdict?")

`python -m serverbench replication SWEEP SWEEP ...` takes repeated sweeps of one profile
(processed folders, processing raw ones first) and reports what the issue's acceptance
asks of them:

* the verdict table: one row per claim, one column per sweep;
* flips: pairs of sweeps in which a claim is supported in one and contradicted in the other
  (the failure decision regions exist to prevent);
* robust claims that still changed: a claim whose P(verdict) labelled it robust (reliability.label) in
  a sweep, yet whose verdict is not the same in every sweep that judged it;
* the Brier score of each sweep's stated probabilities (claims_reliability.csv) against
  the verdict frequencies observed over all the sweeps, and their mean (target <= 0.1).
"""

from __future__ import annotations

import json
from itertools import combinations
from pathlib import Path

import pandas as pd

from serverbench.analysis import reliability
from serverbench.analysis.claims import engine

BRIER_TARGET = 0.1


def verdict_table(folders: list[Path]) -> pd.DataFrame:
    """Claims x sweeps: each processed folder's claims.csv verdicts (the sweep's name heads
    its column)."""
    cols = {}
    for f in folders:
        t = pd.read_csv(Path(f) / "claims.csv")
        cols[Path(f).name] = t.set_index("id")["verdict"]
    return pd.DataFrame(cols)


def flips(table: pd.DataFrame) -> list[tuple[str, str, str]]:
    """(claim, sweep a, sweep b) for every pair in which the claim is supported in one and
    contradicted in the other."""
    out = []
    both = {engine.SUPPORTED, engine.CONTRADICTED}
    for cid, row in table.iterrows():
        for a, b in combinations(table.columns, 2):
            if {row[a], row[b]} == both:
                out.append((str(cid), a, b))
    return out


def robust_but_changed(table: pd.DataFrame, folders: list[Path]) -> list[str]:
    """Claims labelled robust in some sweep whose verdict differs between the sweeps."""
    changed = {cid for cid, row in table.iterrows() if row.dropna().nunique() > 1}
    out = set()
    for f in folders:
        rel = _reliability(f)
        if rel.empty:
            continue
        robust = set(rel.loc[rel["reliability"] == reliability.ROBUST, "id"])
        out |= robust & changed
    return sorted(out)


def brier_scores(table: pd.DataFrame, folders: list[Path]) -> pd.Series:
    """Per sweep: the Brier score of its stated P(verdict) against the frequencies observed
    over every sweep (NaN where the sweep has no claims_reliability.csv)."""
    out = {}
    for f in folders:
        rel = _reliability(f)
        out[Path(f).name] = reliability.brier(rel, table) if not rel.empty else float("nan")
    return pd.Series(out, name="brier")


def _reliability(folder: Path) -> pd.DataFrame:
    p = Path(folder) / reliability.FILE
    return pd.read_csv(p) if p.exists() else pd.DataFrame()


def machines(folders: list[Path]) -> dict[str, tuple[str | None, str | None]]:
    """Per sweep: (kind of machine, fingerprint) from its sweep.json's manifest; the
    replication criteria are about sweeps on one machine, so the summary names them."""
    from serverbench.analysis.claims import decision

    out = {}
    for f in folders:
        try:
            info = json.loads((Path(f) / "sweep.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            info = {}
        man = info.get("manifest") or {}
        out[Path(f).name] = (decision.machine_kind(info.get("host")), (man.get("machine") or {}).get("fingerprint"))
    return out


def summary(folders: list[Path]) -> tuple[pd.DataFrame, list[str]]:
    """(the verdict table, the lines to print) for processed sweep folders."""
    table = verdict_table(folders)
    fl = flips(table)
    rb = robust_but_changed(table, folders)
    br = brier_scores(table, folders)
    n = len(table.columns)
    where = sorted({f"{k or 'unknown machine'} (fingerprint {fp or 'none'})" for k, fp in machines(folders).values()})
    lines = [
        f"{len(table)} claims x {n} sweeps; {n * (n - 1) // 2} pairs of sweeps.",
        f"machines: {'; '.join(where)}"
        + (" -- more than one: differences may be the machines'" if len(where) > 1 else ""),
        f"supported <-> contradicted flips: {len(fl)}"
        + (": " + "; ".join(f"{c} ({a} vs {b})" for c, a, b in fl) if fl else ""),
        f"claims labelled robust that changed verdict: {len(rb)}" + (": " + ", ".join(rb) if rb else ""),
        "Brier score of the stated P(verdict) against the observed frequencies: "
        + ", ".join(f"{k} {v:.3f}" for k, v in br.items())
        + (f"; mean {br.mean():.3f} (target <= {BRIER_TARGET:g})" if br.notna().any() else ""),
    ]
    return table, lines
