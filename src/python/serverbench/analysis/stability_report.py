"""Report section "Stability of the verdicts": when the reported sweep is one repeat of a
`python -m serverbench stability` run (`<prefix>-r1`, `-r2`, ... side by side under the
same raw folder), every repeat's verdicts are recomputed from its own raw log and shown
claim by claim, with whether they agree (docs/statistics.md, "Stability")."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd

from serverbench import paths
from serverbench.analysis import registry

REPEAT = re.compile(r"^(?P<prefix>.+)-r(?P<k>\d+)$")


def repeats_of(sweep_dir: Path) -> list[Path]:
    """The raw folders of every repeat of the stability run `sweep_dir` belongs to, in
    repeat order; [] when it is not a repeat or has no sibling with a raw log."""
    m = REPEAT.match(sweep_dir.name)
    if not m:
        return []
    found = []
    for d in sweep_dir.parent.glob(f"{glob_escape(m['prefix'])}-r*"):
        mm = REPEAT.match(d.name)
        if mm and mm["prefix"] == m["prefix"] and d.is_dir() and any(d.glob("runs*.jsonl")):
            found.append((int(mm["k"]), d))
    return [d for _, d in sorted(found)] if len(found) >= 2 else []


def glob_escape(s: str) -> str:
    return re.sub(r"([*?\[])", r"[\1]", s)


def agreement_table(dirs: list[Path], spawn_metric: str = "all_ready_s") -> pd.DataFrame:
    """One row per claim: its verdict in each repeat and whether they all agree."""
    from serverbench.analysis import verdicts_for_sweep

    verdicts = [verdicts_for_sweep(d, spawn_metric) for d in dirs]
    ids = list(dict.fromkeys(k for v in verdicts for k in v))
    rows = []
    for cid in ids:
        vs = [v.get(cid, "(missing)") for v in verdicts]
        rows.append(
            {"claim": cid, **{d.name: v for d, v in zip(dirs, vs)}, "agree": "yes" if len(set(vs)) == 1 else "NO"}
        )
    return pd.DataFrame(rows)


def _sweep_dir(P) -> Path:
    d = Path(str(P.info.get("sweep_dir") or ""))
    return d if d.is_absolute() else paths.repo_root() / d


@registry.report_section("Stability of the verdicts", order=95)
def stability(P) -> list:
    dirs = repeats_of(_sweep_dir(P))
    if not dirs:
        return [
            "This sweep is not one repeat of a stability run, so there is nothing to compare here. "
            "`python -m serverbench stability --profile quick --repeats 2` runs the claim-deciding "
            "configurations as independent sweeps (`<prefix>-r1`, `-r2`, ...); reporting any one of "
            "them shows every repeat's verdicts side by side. docs/statistics.md gives the last "
            "measured result."
        ]
    T = agreement_table(dirs)
    n = int((T["agree"] == "yes").sum())
    return [
        f"This sweep is one of {len(dirs)} independent repeats of a stability run "
        f"({', '.join(d.name for d in dirs)}: the same profile, each with its own seed and run "
        f"order). Each repeat's verdicts are recomputed here from its own raw log. "
        f"**{n} of {len(T)} claims get the same verdict in every repeat.** A borderline claim "
        "should come out *inconclusive* every time rather than flip.",
        T,
    ]
