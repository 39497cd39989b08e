"""Does a run flagged for interference measure something different from its re-run?

The harness re-runs an ok run flagged `interfered` once and keeps the later attempt
(harness.interference). Whether steal alone (the hypervisor's, with other processes under
their limit) should trigger the re-run is a rule of protocol 2, decided on the committed
sweeps gathered before its freeze: each flagged first attempt against its own re-run (same
configuration, trial and warm-up flag, run right after it). The flag's cause is recomputed
from the first attempt's fields with the harness's own rule (interference.over_limit), so
first attempts flagged by an earlier rule (the load average) fall under "neither".

The effect is a slowdown: log(first attempt's time / its re-run's time), times read from
each benchmark's deciding metric (a rate is inverted), > 0 when the flagged attempt was
slower. Summarised per cause as a paired ratio (the verdicts' own interval method) at 95 %.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import numpy as np
import pandas as pd

from serverbench import catalog
from serverbench.analysis.statistics.paired import paired_ratio_ci
from serverbench.harness.running.interference import OTHER_CPU_LIMIT, STEAL_LIMIT, over_limit
from serverbench.rawdata.columns import Col


def _metric(benchmark: str | None) -> tuple[str | None, bool]:
    """The benchmark's headline metric and whether it is a time (its package's METRIC)."""
    try:
        m = catalog.benchmark(str(benchmark)).metric
    except ValueError:  # not a benchmark of this spec
        return None, True
    return m if m else (None, True)


COLUMNS = ["sweep", "benchmark", "cause", "first_time", "rerun_time"]
CONFIDENCE = 0.95


def cause(rec: dict) -> str:
    """Why a flagged run was flagged, by the harness's rule: 'steal' (alone), 'other' (other
    processes alone), 'both', or 'neither' (flagged by an earlier rule)."""
    steal = over_limit(rec.get(Col.cpu_steal_s), rec.get(Col.steal_share), STEAL_LIMIT)
    other = over_limit(rec.get(Col.other_cpu_s), rec.get(Col.other_cpu_share), OTHER_CPU_LIMIT)
    return {(True, False): "steal", (False, True): "other", (True, True): "both"}.get((steal, other), "neither")


def _time(rec: dict) -> float | None:
    key, is_time = _metric(rec.get(Col.benchmark))
    v = (rec.get(Col.metrics) or {}).get(key) if key else None
    if not isinstance(v, int | float) or v <= 0:
        return None
    return float(v) if is_time else 1.0 / float(v)


def raw_lines(folder: Path) -> list[dict]:
    """The folder's raw records as JSON, unvalidated: only the fields read here matter, and a
    record of an older schema still carries them."""
    from serverbench.rawdata.records import decode_line, iter_raw_lines
    from serverbench.rawdata.sweepfiles import raw_files

    out = []
    for f in raw_files(folder):
        for _, raw in iter_raw_lines(f):
            line, _reason = decode_line(raw)
            if line and line.strip():
                try:
                    out.append(json.loads(line))
                except ValueError:
                    continue  # a torn line: the harness's resume repairs it, here it is skipped
    return out


def pairs(raw_dirs) -> pd.DataFrame:
    """One row per (ok flagged first attempt, its ok re-run) in the raw sweep folders."""
    rows = []
    for d in raw_dirs:
        recs = raw_lines(Path(d))
        by = defaultdict(list)
        for r in recs:
            by[(r.get(Col.config_id), r.get(Col.trial), r.get(Col.warmup))].append(r)
        for rs in by.values():
            for a, b in zip(rs, rs[1:]):
                if not (a.get(Col.interfered) and b.get(Col.rerun_of_interfered)):
                    continue
                if a.get(Col.status) != "ok" or b.get(Col.status) != "ok":
                    continue
                ta, tb = _time(a), _time(b)
                if ta is not None and tb is not None:
                    rows.append([Path(d).name, a[Col.benchmark], cause(a), ta, tb])
    return pd.DataFrame(rows, columns=COLUMNS)


def summary(p: pd.DataFrame, by: tuple[str, ...] = ("cause",)) -> pd.DataFrame:
    """Per group: pairs, sweeps, the first attempts' slowdown against their re-runs (paired
    ratio first / re-run with its 95 % interval) and the share of first attempts slower."""
    out = []
    for key, g in p.groupby(list(by), sort=True):
        ci = paired_ratio_ci(g["first_time"].to_numpy(), g["rerun_time"].to_numpy(), CONFIDENCE)
        key = key if isinstance(key, tuple) else (key,)
        out.append(
            {
                **dict(zip(by, key)),
                "pairs": len(g),
                "sweeps": g[Col.sweep].nunique(),
                "first_over_rerun": ci.ratio,
                "lo": ci.lo,
                "hi": ci.hi,
                "share_first_slower": float(np.mean(g["first_time"] > g["rerun_time"])),
            }
        )
    return pd.DataFrame(out)


def committed_raw_dirs(raw_root: Path) -> list[Path]:
    """Every raw sweep folder under raw_root that has a manifest."""
    return [d for d in sorted(Path(raw_root).iterdir()) if (d / "manifest.json").exists()]


def main(raw_root: Path) -> str:
    """The table docs/protocol.md cites (printed by `python -m serverbench.analysis.statistics.rerun_evidence`)."""
    p = pairs(committed_raw_dirs(raw_root))
    s = summary(p)
    return (
        json.dumps(s.round(4).to_dict(orient="records"), indent=1)
        + "\n"
        + summary(p, ("cause", "benchmark")).round(3).to_string(index=False)
    )


if __name__ == "__main__":  # pragma: no cover - a one-off evidence print
    import sys

    from serverbench import paths

    print(main(Path(sys.argv[1]) if len(sys.argv) > 1 else paths.raw_dir()))
