"""P(verdict)'s simulated re-runs (analysis/reliability.py): a copy behaves like an
independent re-run of the sweep, not like this sweep drawn again."""

import numpy as np
import pandas as pd
import pytest

from serverbench.analysis import reliability


def _cell_frame(values_a, values_b):
    """One configuration, two languages, one row per round."""
    rows = [
        {"language": lang, "processes": 100_000, "trial": k + 1, "value": v}
        for lang, vs in (("erlang", values_a), ("go", values_b))
        for k, v in enumerate(vs)
    ]
    return pd.DataFrame(rows)


def _log_ratio_sd(frame, spread, copies=4000, seed=3):
    r = reliability.Rounds(frame)
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(copies):
        d = r.redraw(rng, spread)
        m = d.groupby("language")["value"].apply(lambda v: np.log(v).mean())
        out.append(m["erlang"] - m["go"])
    return float(np.std(out)), float(np.mean(out))


def test_a_copy_moves_by_both_sweeps_between_effects_and_both_sampling_errors():
    """A re-run's log ratio differs from this sweep's by two between-sweep effects (2 s^2)
    and two sampling errors: the redrawn rounds give the re-run's, the factor this sweep's
    own. With s = 0.05 and a cell log sd of 0.1 over 5 rounds, a copy's log ratio of means
    has sd sqrt(2 s^2 + se^2 + bootstrap) (0.101 here); drawing the sweep again with only
    the between-sweep effect (the rule until 25 Nov 2026) gives 0.074."""
    rng = np.random.default_rng(11)
    n, sd, s = 5, 0.1, 0.05
    a = np.exp(np.log(0.22) + rng.normal(0, sd, n))
    b = np.exp(np.log(0.155) + rng.normal(0, sd, n))
    frame = _cell_frame(a, b)
    got, centre = _log_ratio_sd(frame, s)
    la, lb = np.log(a), np.log(b)
    se2 = la.var(ddof=1) / n + lb.var(ddof=1) / n
    boot2 = la.var(ddof=0) / n + lb.var(ddof=0) / n  # the rounds' bootstrap
    want = np.sqrt(2 * s**2 + se2 + boot2)
    assert got == pytest.approx(want, rel=0.06), (got, want)
    assert got > np.sqrt(s**2 + boot2) * 1.25  # clearly wider than this sweep drawn again
    assert centre == pytest.approx(la.mean() - lb.mean(), abs=0.01)  # centred on this sweep


def test_a_cell_with_one_round_moves_by_the_between_sweep_effect_only():
    frame = _cell_frame([0.5], [0.25])
    got, _ = _log_ratio_sd(frame, 0.05)
    assert got == pytest.approx(0.05 * np.sqrt(2), rel=0.06)  # two cells, s each
    assert reliability.Rounds(frame).cell_se.tolist() == [0.0, 0.0]


def test_identical_rounds_and_no_spread_give_identical_copies():
    frame = _cell_frame([0.2] * 5, [0.1] * 5)
    got, centre = _log_ratio_sd(frame, 0.0, copies=50)
    assert got == pytest.approx(0.0, abs=1e-12) and centre == pytest.approx(np.log(2.0))


def _c4_five_rounds(tmp_path):
    """C4 at 5 rounds, its Erlang/Go comparison undecided (unpaired, a shared slow round)."""
    from serverbench.analysis import synthetic as S

    slow = [1.0, 1.45, 1.0, 1.3, 1.0]
    times = {
        ("erlang", 100_000): [0.22 * f for f in slow],
        ("go", 100_000): [0.155 * f for f in slow],
        ("scala_akka", 100_000): [0.8 * f for f in slow],
    }
    return S.processed_from(S.spawn_runs(times), tmp_path)


def test_an_inconclusive_claim_a_re_runs_second_stage_could_decide_is_not_robust(tmp_path, quiet_machine):
    """The copies redraw rounds; they do not re-run the second stage. A claim left
    inconclusive with an undecided comparison this sweep's second stage did not extend
    gives P(decide) of that comparison to the side it would decide (issue 26's first five
    sweeps: C5 "robust inconclusive" in the one sweep whose second stage passed it over)."""
    from serverbench.analysis import second_stage
    from serverbench.analysis.claims import engine

    P = _c4_five_rounds(tmp_path)
    verdict = engine.check_all(P)
    c4 = next(v for v in verdict if v.id == "C4")
    assert c4.verdict == engine.INCONCLUSIVE
    assert second_stage.left_undecided([c4], P) == {}  # no second stage in this sweep
    before = reliability.probabilities(P, B=20, ids=["C4"]).iloc[0]

    P.info["second_stage"] = {"rounds": 3, "chosen": []}
    p_yes, p_no = second_stage.left_undecided([c4], P)["C4"]
    assert p_yes == 0.0 and 0.05 < p_no < 1.0  # Erlang/Go ~1.42: only a "no" is in reach
    after = reliability.probabilities(P, B=20, ids=["C4"]).iloc[0]
    assert after["p_inconclusive"] == pytest.approx(before["p_inconclusive"] * (1 - p_no), abs=1e-4)
    moved = before["p_inconclusive"] * p_no
    assert after["p_contradicted"] == pytest.approx(before["p_contradicted"] + moved, abs=1e-4)
    assert after["p_supported"] == before["p_supported"]

    # had the second stage extended that comparison, a re-run would have too: no change
    runs = P.runs.copy()
    runs["stage"] = np.where(runs["language"].isin(["erlang", "go"]), 2, 1)
    P.runs = runs
    assert second_stage.left_undecided([c4], P) == {}


def test_the_label_is_about_the_verdict_the_sweep_reports():
    assert reliability.label(0.95, 0.95) == reliability.ROBUST
    assert reliability.label(0.94, 0.06) == reliability.BORDERLINE  # an unusual verdict, a sure modal one
    assert reliability.label(0.85, 0.85) == reliability.NEITHER
    assert reliability.label(0.5, 0.5) == reliability.BORDERLINE
