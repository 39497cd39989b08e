"""Between-sweep spread: how much the claims' deciding ratios move between sweeps of one
profile on one machine beyond what each sweep's own intervals allow (docs/statistics.md,
"Decision regions"). `python -m serverbench spread SWEEP SWEEP [...]` writes
data/processed/between-sweep-spread/spread.csv, which sets the decision regions' gap
(claims.decision) and the between-sweep draw of the verdict probabilities (reliability.py).

Method of moments, per benchmark table: for every deciding comparison (claim, comparison,
configuration) present in two sweeps a and b, d = log ratio_a - log ratio_b has variance
2 s^2 + se_a^2 + se_b^2, s the between-sweep sd of one sweep's log ratio and se the
sampling sd each sweep's interval states (half its log width over the normal quantile of
its level). So s^2 = (mean d^2 - mean(se_a^2 + se_b^2)) / 2, floored at 0; every pair of
sweeps contributes. Only sweeps whose machine fingerprints match may be pooled (the
command refuses others unless --any-machine).
"""

from __future__ import annotations

import itertools
import json
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import norm

KEY = ["claim", "comparison", "config"]


def _evidence(processed: Path) -> pd.DataFrame:
    e = pd.read_csv(processed / "claims_evidence.csv")
    e = e[e["result"].isin(["yes", "no", "unclear"])]
    e = e[(e["ratio"] > 0) & (e["ci_lo"] > 0) & (e["ci_hi"] > 0) & (e["ci_level"] > 0)]
    z = norm.ppf(0.5 + e["ci_level"].clip(upper=0.9999) / 2)
    e = e.assign(log_ratio=np.log(e["ratio"]), se=(np.log(e["ci_hi"]) - np.log(e["ci_lo"])) / (2 * z))
    return e[[*KEY, "log_ratio", "se"]].drop_duplicates(KEY)


def spread_table(processed: list[Path], table_of_claim: dict[str, str]) -> pd.DataFrame:
    """One row per benchmark table: spread_log (s), the comparisons and sweep pairs used."""
    ev = [_evidence(p) for p in processed]
    rows = []
    for a, b in itertools.combinations(range(len(ev)), 2):
        m = ev[a].merge(ev[b], on=KEY, suffixes=("_a", "_b"))
        m["table"] = m["claim"].map(table_of_claim)
        m["d2"] = (m["log_ratio_a"] - m["log_ratio_b"]) ** 2
        m["se2"] = m["se_a"] ** 2 + m["se_b"] ** 2
        rows.append(m.dropna(subset=["table"]))
    if not rows:
        return pd.DataFrame(columns=["table", "spread_log", "n_differences", "sampling_sd_log", "raw_sd_log"])
    allm = pd.concat(rows, ignore_index=True)
    out = []
    for table, g in allm.groupby("table"):
        between = max(float((g["d2"] - g["se2"]).mean()) / 2.0, 0.0)
        out.append(
            {
                "table": table,
                "spread_log": round(float(np.sqrt(between)), 4),
                "n_differences": len(g),
                "sampling_sd_log": round(float(np.sqrt(g["se2"].mean() / 2.0)), 4),
                "raw_sd_log": round(float(np.sqrt(g["d2"].mean() / 2.0)), 4),
            }
        )
    return pd.DataFrame(out)


def _manifest(sweep_dir: Path) -> dict:
    try:
        m = json.loads((sweep_dir / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return m if isinstance(m, dict) else {}


def machine_kind_of(sweep_dir: Path) -> str | None:
    """The kind of machine a raw sweep's manifest records (claims.decision.machine_kind)."""
    from serverbench.analysis.claims import decision

    return decision.machine_kind(_manifest(sweep_dir).get("host"))


def fingerprint_of(sweep_dir: Path) -> str | None:
    """The machine fingerprint a sweep's manifest records (None for older sweeps)."""
    fp = (_manifest(sweep_dir).get("machine") or {}).get("fingerprint")
    return str(fp) if fp else None


def _recorded(out_dir: Path) -> tuple[pd.DataFrame | None, dict]:
    """The spread table and provenance already in out_dir, checked before anything is
    measured: what they hold for other kinds of machine must survive, so a file that cannot
    be read, or a table whose rows name no machine, stops the command instead of being
    overwritten."""
    table, prov_file = out_dir / "spread.csv", out_dir / "provenance.json"
    old = None
    if table.exists():
        try:
            old = pd.read_csv(table)
        except (OSError, ValueError) as e:
            raise ValueError(f"{table} cannot be read ({e}); move it away to measure anew") from None
        if "machine" not in old.columns:
            raise ValueError(
                f"{table} has no machine column (written before spreads were kept per kind of machine): "
                "add one naming the kind it was measured on, or move it away"
            )
    prov: dict = {}
    if prov_file.exists():
        try:
            prov = json.loads(prov_file.read_text(encoding="utf-8"))
        except (OSError, ValueError) as e:
            raise ValueError(f"{prov_file} cannot be read ({e}); move it away to measure anew") from None
        if not isinstance(prov, dict) or not isinstance(prov.get("machines", {}), dict):
            raise ValueError(f"{prov_file} has no 'machines' object; move it away to measure anew")
    return old, prov


def measure(sweep_dirs: list[Path], out_dir: Path) -> Path:
    """Process each raw sweep (into a temporary folder), measure, and write this kind of
    machine's rows of spread.csv (other kinds' rows kept) and its entry in provenance.json
    (the sweeps, their fingerprints, the command)."""
    from serverbench.analysis import process
    from serverbench.analysis.claims import all_claims, write_claims
    from serverbench.analysis.process import Processed

    kinds = {s.name: machine_kind_of(s) for s in sweep_dirs}
    if None in kinds.values() or len(set(kinds.values())) != 1:
        raise ValueError(
            "a spread holds for one kind of machine; these sweeps ran on "
            + ", ".join(f"{k}: {v or 'unknown'}" for k, v in kinds.items())
        )
    kind = next(iter(kinds.values()))
    old, prov = _recorded(out_dir)
    tables = {c.id: c.needs.table for c in all_claims()}
    with tempfile.TemporaryDirectory(prefix="serverbench-spread-") as tmp:
        done = []
        for i, s in enumerate(sweep_dirs):
            dest = Path(tmp) / f"{i}-{s.name}"
            process.process_sweep(s, dest)
            write_claims(Processed(dest), dest, spreads={})
            done.append(dest)
        t = spread_table(done, tables)
    out_dir.mkdir(parents=True, exist_ok=True)
    target = out_dir / "spread.csv"
    t.insert(0, "machine", kind)
    if old is not None:
        t = pd.concat([old[old["machine"] != kind], t], ignore_index=True)
    t.sort_values(["machine", "table"]).to_csv(target, index=False)
    machines = dict(prov.get("machines", {}))
    machines[kind] = {
        "sweeps": {s.name: {"fingerprint": fingerprint_of(s)} for s in sweep_dirs},
        "command": "python -m serverbench spread " + " ".join(s.name for s in sweep_dirs),
    }
    prov = {
        "what": "between-sweep sd of the claims' deciding log ratios, per kind of machine and benchmark "
        "table (analysis/spread.py)",
        "machines": dict(sorted(machines.items())),
    }
    (out_dir / "provenance.json").write_text(json.dumps(prov, indent=2) + "\n", encoding="utf-8")
    return target


# --- stage 1's wall time between sweeps ------------------------------------------------
# A re-run's second stage gets a budget only if its stage 1 ends early enough before the
# profile's deadline (harness.second_stage.budget_s); how far stage 1's time moves between
# sweeps sets the chance of that (analysis.rerun).
STAGE1_FILE = "stage1.csv"
DEFAULT_STAGE1_LOG_SD = 0.1  # where none was measured: above the 0.065 of 15 Intel sweeps (conservative)
# floor on a measured one: an hour's sweeps on one VM (AMD: 0.007 over six) miss how its speed drifts
# over a day (Intel: 0.031 and 0.033 within an hour, 0.065 over the day)
MIN_STAGE1_LOG_SD = 0.03


def _profile_of(sweep_dir: Path) -> str | None:
    p = _manifest(sweep_dir).get("profile")
    return p.get("name") if isinstance(p, dict) else p


def stage1_row(sweep_dirs: list[Path]) -> dict:
    """The sd of log(stage 1's wall time) over sweeps of one profile on one kind of
    machine (sweeps without a stage-1 time are left out; at least two must have one)."""
    from serverbench.analysis.sweepinfo import read_sessions, stage1_seconds

    kinds = {machine_kind_of(s) for s in sweep_dirs}
    profiles = {_profile_of(s) for s in sweep_dirs}
    if None in kinds or len(kinds) != 1 or None in profiles or len(profiles) != 1:
        raise ValueError(
            "stage 1's time is compared within one profile on one kind of machine; these sweeps are "
            + ", ".join(
                f"{s.name}: {_profile_of(s) or 'unknown'} on {machine_kind_of(s) or 'unknown'}" for s in sweep_dirs
            )
        )
    times = {s.name: stage1_seconds(read_sessions(s)) for s in sweep_dirs}
    have = {k: v for k, v in times.items() if v}
    if len(have) < 2:
        raise ValueError(f"fewer than two of these sweeps record stage 1's time (sessions.jsonl): {sorted(times)}")
    logs = np.log(list(have.values()))
    return {
        "machine": next(iter(kinds)),
        "profile": next(iter(profiles)),
        "n_sweeps": len(have),
        "stage1_log_sd": round(float(np.std(logs, ddof=1)), 4),
        "mean_stage1_s": round(float(np.mean(list(have.values()))), 1),
        "sweeps": " ".join(sorted(have)),
    }


def _read_stage1(f: Path) -> pd.DataFrame | None:
    """stage1.csv, or None when absent; a file that cannot be read as one raises ValueError
    naming it (it holds other machines' measurements: never overwritten unread)."""
    if not f.exists():
        return None
    try:
        t = pd.read_csv(f)
    except (OSError, ValueError) as e:
        raise ValueError(f"{f} cannot be read ({e}); move it away to measure anew") from None
    missing = {"machine", "profile", "stage1_log_sd"} - set(t.columns)
    if missing:
        raise ValueError(f"{f} lacks column(s) {', '.join(sorted(missing))}; move it away to measure anew")
    return t


def measure_stage1(sweep_dirs: list[Path], out_dir: Path) -> Path:
    """Write this (machine, profile)'s row of stage1.csv, other rows kept."""
    target = out_dir / STAGE1_FILE
    old = _read_stage1(target)  # checked before anything is measured
    row = stage1_row(sweep_dirs)
    t = pd.DataFrame([row])
    if old is not None:
        keep = ~((old["machine"] == row["machine"]) & (old["profile"] == row["profile"]))
        t = pd.concat([old[keep], t], ignore_index=True)
    out_dir.mkdir(parents=True, exist_ok=True)
    t.sort_values(["machine", "profile"]).to_csv(target, index=False)
    return target


def stage1_log_sd(machine: str | None, profile: str | None, processed_dir: Path | None = None) -> tuple[float, bool]:
    """(sd, measured?): the committed sd of log stage-1 time for this kind of machine and
    profile (floored at MIN_STAGE1_LOG_SD), else DEFAULT_STAGE1_LOG_SD."""
    from serverbench.analysis.claims import decision

    t = _read_stage1(decision.spread_path(processed_dir).parent / STAGE1_FILE)
    if machine and profile and t is not None:
        t = t[(t["machine"] == machine) & (t["profile"] == profile)]
        if len(t) and pd.notna(t["stage1_log_sd"].iloc[0]):
            return max(float(t["stage1_log_sd"].iloc[0]), MIN_STAGE1_LOG_SD), True
    return DEFAULT_STAGE1_LOG_SD, False
