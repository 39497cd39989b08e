"""Lab 4's optional part ("If you have time"), first half: timing an asynchronous spawn, and
the paper variant (`--variant paper`), which shows what the original programs *reported*
against the work they really did. The TCP 1-byte buffer, the other half, is lab4_tcp.py.

The paper variant is used when this checkout builds it (spec/cli.json); otherwise the lab
says so and the core part's fair runs stand alone. lab4.py re-exports everything here, so
the notebook calls `lab.paper_vs_fair(...)` as it calls the core functions."""

from __future__ import annotations

import pandas as pd

from serverbench import contract, paths
from serverbench.analysis.explorer import explore
from serverbench.rawdata.columns import Col
from serverbench.teaching import common
from serverbench.teaching.common import LabData
from serverbench.teaching.lab4_tcp import _run_extra

# lab 4's throughput run: the core part's batch counter and the paper variant share it
PAIRS = 16
REPORT_EVERY = 10_000
# committed: an audit sweep whose throughput slice ran the paper variant (8 pairs, 1 s, batches of
# REPORT_EVERY), studied when lab 4 makes no paper-variant runs of its own
RECORDED_PAPER = "audit-20261123T145602Z"


# --- asynchronous spawn ----------------------------------------------------------------------
def spawn_timing() -> pd.DataFrame:
    """spawn_call_s (the loop returned) vs all_ready_s (every process ran), committed sample."""
    s = common.sample_sweep()
    if s is None:
        return pd.DataFrame()
    d = s.ok()
    d = d[d[Col.table] == "spawn"]
    d = d[d[Col.processes].isin([1000, 10_000, 100_000])].astype({"processes": int})
    t = d.groupby(["language", "processes"])[["spawn_call_s", "all_ready_s"]].median()
    t["ready/call"] = t[Col.all_ready_s] / t[Col.spawn_call_s]
    return t.round(4)


# --- the paper variant: only where this checkout has it ---------------------------------------
def paper_available() -> str | None:
    """None if the paper variant is built, else why not."""
    if Col.paper in contract.implemented_variants():
        return None
    return "the paper variant is not built in this checkout yet (spec/cli.json implemented_variants)"


def paper_vs_fair(data: LabData, run: bool = True):
    """Throughput with the original programs' quirks (variant paper) next to the fair runs:
    what each program reported against what it really did."""
    why = paper_available()
    if why:
        return common.md(
            f"**Not available yet:** {why}. The batch-counter and spawn-timing pitfalls above are "
            "shown on the fair runs instead."
        )
    if not run or data.source != "ran":
        recorded = recorded_paper()
        if recorded is None:
            return common.md(
                "**Skipped:** this lab is studying an existing sweep (run=False or raw_folder), so no "
                f"paper-variant runs were made, and the recorded ones (sweep {RECORDED_PAPER}) are not in "
                "this checkout."
            )
        # studying an existing sweep: no paper-variant runs were made, so show the recorded ones
        data.extra[Col.paper] = recorded
        return paper_table(recorded.runs[recorded.runs[Col.table] == "throughput"]).assign(sweep=RECORDED_PAPER)
    langs = [x for x in data.languages if x in contract.languages() and Col.paper in contract.variants(x)]
    if not langs:
        return common.md(f"**Not available yet:** none of {', '.join(data.languages)} implements the paper variant.")
    try:
        s = _run_extra(
            "paper",
            ["throughput", "spawn"],
            {
                "variant": "paper",
                "throughput.trials": 1,
                "throughput.pairs": [PAIRS],
                "throughput.duration_s": 0.3,
                "throughput.report_every": REPORT_EVERY,
                "throughput.cores": ["max"],
                "spawn.trials": 1,
                "spawn.processes": [20_000],
            },
            langs,
        )
    except Exception as e:  # an optional demo: say why and go on
        return common.md(f"**The paper-variant runs could not be made:** {e}")
    data.extra[Col.paper] = s
    return paper_table(pd.concat([data.ok("throughput"), s.runs[s.runs[Col.table] == "throughput"]], ignore_index=True))


def recorded_paper() -> explore.SweepView | None:
    """The committed paper-variant throughput runs (sweep RECORDED_PAPER), None if this checkout
    does not have them: what lab 4 and the instructor guide study when lab 4 made none."""
    try:
        s = explore.load_sweep(paths.repo_root() / "data" / "raw" / RECORDED_PAPER)
    except explore.SweepInputError:
        return None
    r = s.runs
    keep = (r[Col.table] == "throughput") & (r[Col.variant] == "paper") & (r[Col.status] == "ok")
    if Col.reported_exchanges not in r or not keep.any():
        return None
    return explore.SweepView(s.folder, r[keep], s.manifest)


def paper_table(d: pd.DataFrame) -> pd.DataFrame:
    nan = pd.Series(float("nan"), index=d.index)
    true = d[Col.true_exchanges].fillna(d[Col.exchanges]) if Col.true_exchanges in d else d[Col.exchanges]
    reported = d[Col.reported_exchanges] if Col.reported_exchanges in d else nan
    reported = reported.where(d[Col.variant] != "fair", d[Col.exchanges])
    printed = d[Col.reported_printed] if Col.reported_printed in d else pd.Series(True, index=d.index)
    out = pd.DataFrame(
        {
            "language": d[Col.language],
            "variant": d[Col.variant],
            "status": d[Col.status],
            "exchanges really done": true,
            "exchanges the program reported": reported,
            "printed a result": printed.where(d[Col.variant] != "fair", True),
        }
    )
    out["reported / done"] = (out["exchanges the program reported"] / out["exchanges really done"]).round(3)
    return out.sort_values(["language", "variant"]).reset_index(drop=True)


def paper_spawn(data: LabData):
    s = data.extra.get(Col.paper)
    if s is None:
        return common.md("*(No paper-variant spawn runs: see the cell above.)*")
    d = s.runs[(s.runs[Col.table] == "spawn")]
    cols = [
        c for c in ("language", "processes", "status", "reported_elapsed_s", "spawn_call_s", "all_ready_s") if c in d
    ]
    return d[cols].astype({"processes": "Int64"}).reset_index(drop=True)


def _paper_fraction(data, lang="go"):
    s = data.extra.get(Col.paper)
    if s is None or Col.reported_exchanges not in s.runs:
        return None
    t = paper_table(s.runs[s.runs[Col.table] == "throughput"])
    t = t[t[Col.language] == lang]
    return float(t["reported / done"].fillna(0).median()) if len(t) else None
