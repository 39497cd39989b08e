"""The second, minimal implementation of the protocol (analysis/auditing/crosscheck.py, written from
the protocol's text) against the committed tables and against the package's own verdicts
at the paper's scale, and its Holm step-down at a scale on small synthetic sweeps."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from serverbench import paths
from serverbench.analysis.auditing import crosscheck as cc


def _sweeps():
    root = paths.processed_dir()
    return [p for p in sorted(root.iterdir()) if p.is_dir() and not cc._read(p / "claims_evidence.csv").empty]


def test_every_sweep_agrees_with_the_committed_tables():
    bad, coverage, silent = [], {}, []
    for folder in _sweeps():
        found, comps = cc.mismatches(folder)
        bad += found
        for k, n in comps["source"].value_counts().items():
            coverage[k] = coverage.get(k, 0) + int(n)
        # a row whose derivation was not identified where runs.csv exists must be one the table
        # cannot tell apart or IM2's difference of RSS: never a comparison the parser missed
        if (folder / "runs.csv").is_file():
            ev = cc._read(folder / "claims_evidence.csv")
            twice = ev.duplicated(["claim", "comparison", "config"], keep=False)
            given = comps[(comps["source"] == "given") & ~twice & ~comps["comparison"].str.contains("per idle client")]
            silent += [f"{folder.name} {r.claim} {r.comparison} [{r.config}]" for r in given.itertuples()]
    print(f"rows by source: {coverage}")
    assert coverage.get("recomputed", 0) > 2000
    assert silent == [], "no per-round derivation identified for:\n" + "\n".join(silent)
    assert bad == [], f"{len(bad)} disagreement(s):\n" + "\n".join(bad)


@pytest.mark.parametrize("version", [3, 4])
def test_the_paper_scale_equals_the_packages_own(version):
    """Protocol 3's rule (each comparison's own sweeps) and protocol 4's (a benchmark's pool),
    both shown in the report."""
    from serverbench.analysis.reporting import paperscale

    theirs = paperscale.at_scale(version=version)
    comps, claims = cc.scale_verdicts(version=version)
    mine = dict(zip(claims["claim"], claims["verdict"]))
    bad = []
    for c in theirs:
        if c.verdict != mine.get(c.id):
            bad.append(f"{c.id}: package {c.verdict} vs text {mine.get(c.id)}")
        rows = comps[comps["claim"] == c.id]
        if len(rows) != len(c.comparisons):
            bad.append(f"{c.id}: package {len(c.comparisons)} comparisons vs text {len(rows)}")
        for x in c.comparisons:
            r = rows[(rows["piece"] == x.piece) & (rows["comparison"] == x.comparison) & (rows["config"] == x.config)]
            if r.empty:
                bad.append(f"{c.id} {x.piece} {x.comparison} [{x.config}]: not in the text's table")
                continue
            r = r.iloc[0]
            got = (x.n, x.result) + tuple(round(v, 6) if math.isfinite(v) else None for v in (x.ratio, x.lo, x.hi))
            want = (r["n_sweeps"], r["result"]) + tuple(
                round(v, 6) if math.isfinite(v) else None for v in (r["ratio"], r["lo"], r["hi"])
            )
            if got[:2] != want[:2] or any(
                (a is None) != (b is None) or (a is not None and not math.isclose(a, b, rel_tol=1e-5))
                for a, b in zip(got[2:], want[2:])
            ):
                bad.append(f"{c.id} {x.piece} {x.comparison} [{x.config}]: package {got} vs text {want}")
    others = {k: v for k, v in mine.items() if k not in {c.id for c in theirs}}
    assert all(v.startswith("not testable") for v in others.values()), others
    assert bad == [], f"protocol {version}'s rule at a scale:\n" + "\n".join(bad)


# --- the step-down at a scale, on synthetic sweeps -------------------------------------------


def _write(root, piece: str, i: int, rows: list[tuple[str, str, float]], verdict: str = "inconclusive"):
    """One sweep of `piece` holding C1's comparisons: (comparison, config, ratio); its own result
    'no' when the ratio is above 1 (it only matters for a comparison made in one sweep)."""
    folder = root / f"paper-{piece}-2099010{i}T000000Z"
    folder.mkdir()
    pd.DataFrame({"id": ["C1"], "verdict": [verdict], "protocol": [3]}).to_csv(folder / "claims.csv", index=False)
    ev = pd.DataFrame(rows, columns=["comparison", "config", "ratio"]).assign(claim="C1")
    ev["ci_lo"], ev["ci_hi"] = ev["ratio"] * 0.99, ev["ratio"] * 1.01
    ev["result"] = ["no" if r > 1 else "yes" for r in ev["ratio"]]
    ev.to_csv(folder / "claims_evidence.csv", index=False)


def _scale(tmp_path, sweeps):
    for i, rows in enumerate(sweeps, 1):
        _write(tmp_path, "pingping", i, rows)
    comps, claims = cc.scale_verdicts(tmp_path, version=3)
    return comps.set_index("config"), claims.set_index("claim").loc["C1", "verdict"]


GO = "Go/Scala/Akka time"
ERL = "Erlang/Scala/Akka time"


def test_two_sweeps_no_at_90_percent_but_not_after_holm(tmp_path):
    # Erlang/Akka: logs 0.45 and 0.55, t(0.95, 1) = 6.31: the 90 % interval [1.20, 2.26] lies in
    # 'lower''s no region (>= 1), the 95 % one (k = 2, t = 12.7) [0.87, 3.12] does not
    e = math.exp
    comps, verdict = _scale(
        tmp_path, [[(GO, "5 kB", 0.5), (ERL, "10 kB", e(0.45))], [(GO, "5 kB", 0.52), (ERL, "10 kB", e(0.55))]]
    )
    erl = comps.loc["10 kB"]
    assert erl["n_sweeps"] == 2 and erl["lo"] > 1  # the plain 90 % interval is in the no region
    assert erl["result"] == "unclear" and erl["holm"] == pytest.approx(0.95)
    assert comps.loc["5 kB", "result"] == "yes" and verdict == "inconclusive"


def test_three_sweeps_and_the_step_down(tmp_path):
    # B (logs 0.2, 0.4, 0.6): 90 % [1.07, 1.81] in the no region, Holm at k = 3 or 2 not (t(2) 5.64,
    # 4.30); C (logs 1.00, 1.01, 1.02) is 'no' at k = 3, so B is asked again at k = 2: still not.
    e = math.exp
    logs = ((0.2, 1.0), (0.4, 1.01), (0.6, 1.02))
    three = [[(ERL, "B", e(v)), (ERL, "C", e(w)), (GO, "A", 0.5 + v / 10)] for v, w in logs]
    comps, verdict = _scale(tmp_path, three)
    assert comps.loc["B", "lo"] > 1 and comps.loc["B", "result"] == "unclear"
    assert comps.loc["B", "holm"] == pytest.approx(0.95)
    assert comps.loc["C", "result"] == "no" and comps.loc["C", "holm"] == pytest.approx(1 - 0.1 / 3)
    assert verdict == "contradicted"  # C's 'no' alone


def test_the_step_down_frees_a_no_once_k_falls(tmp_path):
    # B and C alone: C is 'no' at k = 2, so B is asked again at k = 1 (the plain 90 %): 'no'
    e = math.exp
    three = [[(ERL, "B", e(v)), (ERL, "C", e(w))] for v, w in ((0.2, 1.0), (0.4, 1.01), (0.6, 1.02))]
    comps, verdict = _scale(tmp_path, three)
    assert comps.loc["B", "result"] == "no" and comps.loc["B", "holm"] == pytest.approx(0.9)
    assert verdict == "contradicted"


def test_a_one_sweep_no_counts_as_already_rejected(tmp_path):
    # D made in one sweep with its own 'no': k for B starts at 1, so B's plain 90 % decides
    e = math.exp
    sweeps = [[(ERL, "B", e(v))] for v in (0.2, 0.4, 0.6)]
    sweeps[0].append((ERL, "D", 1.3))
    comps, verdict = _scale(tmp_path, sweeps)
    assert comps.loc["D", "n_sweeps"] == 1 and comps.loc["D", "result"] == "no"
    assert comps.loc["B", "result"] == "no" and comps.loc["B", "holm"] == pytest.approx(0.9)
    assert verdict == "contradicted"


# --- the exact interval and the regions --------------------------------------------------------


@pytest.mark.parametrize("n, achieved", [(5, 0.9375), (6, 0.9062), (8, 0.9219), (9, 0.9023)])
def test_the_signed_rank_interval_reaches_the_protocols_level(n, achieved):
    est, lo, hi, got = cc.signed_rank(list(range(n)), 0.90)
    assert round(got, 4) == achieved and lo <= est <= hi


def test_a_level_eight_rounds_cannot_reach_leaves_no_interval():
    assert cc.signed_rank(range(5), 0.95)[1:3] == (-math.inf, math.inf)  # 1 - 2 / 32 < 0.95
    assert cc.signed_rank(range(8), 1 - 0.1 / 12)[3] == pytest.approx(1 - 2 / 256)


def test_regions_as_each_version_draws_them():
    assert cc.regions("C1", GO, 1) == pytest.approx((0, 1, 0, 1.25))  # protocol 1: one factor beyond
    assert cc.regions("C1", GO, 3) == pytest.approx((0, 1, 0, 1))  # an order word: no from 1
    assert cc.regions("C5", "Scala/Akka super-linearity", 1)[2] == pytest.approx(0.8)
    assert cc.regions("C5", "Go super-linearity", 3) == pytest.approx((0, 1.25, 0, 1.5625))
    assert cc.regions("E3", "eventlet / twisted", 3) == pytest.approx((0.8, 1, 0.64, 1))
    assert cc.regions("T2", "x", 3) == pytest.approx((0.899, 1.101, 0.7192, 1.37625))  # x != 1: the gap stays
    assert cc.regions("C3", "Akka vs Go max processes", 3) is None
