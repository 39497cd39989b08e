"""P(verdict)'s simulated re-runs (analysis/resample.py, analysis/reliability.py): a copy
behaves like an independent re-run of the sweep, not like this sweep drawn again."""

import numpy as np
import pandas as pd
import pytest

from serverbench.analysis import reliability, resample


def _cell_frame(values_a, values_b):
    """One configuration, two languages, one row per round."""
    rows = [
        {"language": lang, "processes": 100_000, "trial": k + 1, "value": v}
        for lang, vs in (("erlang", values_a), ("go", values_b))
        for k, v in enumerate(vs)
    ]
    return pd.DataFrame(rows)


def _log_ratio_sd(frame, spread, copies=4000, seed=3, processes=None):
    """sd and mean over copies of the Erlang/Go mean log ratio (of one configuration)."""
    r = resample.Rounds(frame)
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(copies):
        d = r.redraw(rng, spread)
        if processes is not None:
            d = d[d["processes"] == processes]
        m = d.groupby("language")["value"].apply(lambda v: np.log(v).mean())
        out.append(m["erlang"] - m["go"])
    return float(np.std(out)), float(np.mean(out))


@pytest.mark.slow
def test_a_copy_moves_by_both_sweeps_between_effects_and_both_sampling_errors():
    """A re-run's log ratio differs from this sweep's by two between-sweep effects (2 s^2)
    and two sampling errors: the redrawn rounds give the re-run's (sd_d^2 / n, d the
    per-round log ratios, whose pairing the copy keeps), the factor this sweep's own
    (se_a^2 + se_b^2); both scaled by the uncertain sd, E[g^2] = (n-1)/(n-3). With s = 0.05,
    a cell log sd of 0.1 and 8 rounds: ~0.097. Drawing the sweep again with only the
    between-sweep effect (the rule until 25 Nov 2026) gives ~0.074."""
    rng = np.random.default_rng(11)
    n, sd, s = 8, 0.1, 0.05
    a = np.exp(np.log(0.22) + rng.normal(0, sd, n))
    b = np.exp(np.log(0.155) + rng.normal(0, sd, n))
    frame = _cell_frame(a, b)
    got, centre = _log_ratio_sd(frame, s)
    la, lb = np.log(a), np.log(b)
    se2 = la.var(ddof=1) / n + lb.var(ddof=1) / n
    rerun2 = (la - lb).var(ddof=1) / n
    want = np.sqrt(2 * s**2 + (n - 1) / (n - 3) * (se2 + rerun2))
    assert got == pytest.approx(want, rel=0.08), (got, want)
    assert got > np.sqrt(s**2 + (la - lb).var(ddof=0) / n) * 1.25  # clearly wider than this sweep drawn again
    assert centre == pytest.approx(la.mean() - lb.mean(), abs=0.01)  # centred on this sweep


def test_a_copy_is_smoothed_not_repeats_of_the_sweeps_values():
    """A plain bootstrap of 5 rounds repeats ~3.2 of the sweep's values and never goes
    beyond its range; a smoothed copy holds 5 new values, sometimes outside it, and keeps
    the configuration's covariance between languages (a round slow for one is slow for the
    other: the per-round log ratios vary far less than each side)."""
    shared = np.array([0.0, 0.3, -0.2, 0.1, -0.15])
    a = np.exp(np.log(0.2) + shared + np.array([0.01, -0.02, 0.0, 0.02, -0.01]))
    b = np.exp(np.log(0.1) + shared)
    r = resample.Rounds(_cell_frame(a, b))
    rng = np.random.default_rng(4)
    outside, d_sd, side_sd = 0, [], []
    for _ in range(400):
        c = r.redraw(rng, 0.0)
        va = c[c["language"] == "erlang"].sort_values("trial")["value"].to_numpy()
        vb = c[c["language"] == "go"].sort_values("trial")["value"].to_numpy()
        assert len(np.unique(va)) == 5
        outside += bool(va.min() < a.min() or va.max() > a.max())
        d_sd.append(np.std(np.log(va) - np.log(vb)))
        side_sd.append(np.std(np.log(va)))
    assert outside > 40  # a plain bootstrap: 0
    assert np.median(d_sd) < 0.25 * np.median(side_sd)


def _separation_predictions(delta, sweeps=200, copies=40, seed=5):
    """Two 5-round cells of one language (log sd 0.1, means 0.1 * delta apart); the event
    'every value of one is below every value of the other' (how C11 excludes a pair count
    from a peak set: a 5 x 5 rank interval at 98.75 %). Returns the true probability and
    each sweep's P from its copies."""
    rng = np.random.default_rng(seed)
    n = 5

    def frame(a, b):
        rows = [
            {"language": "scala_akka", "pairs": p, "trial": k + 1, "value": v}
            for p, vs in ((2, a), (64, b))
            for k, v in enumerate(vs)
        ]
        return pd.DataFrame(rows)

    def separated(d):
        return d.loc[d["pairs"] == 64, "value"].max() < d.loc[d["pairs"] == 2, "value"].min()

    truth = float(np.mean(rng.normal(delta, 1, (20000, n)).min(1) > rng.normal(0, 1, (20000, n)).max(1)))
    preds = []
    for _ in range(sweeps):
        r = resample.Rounds(frame(np.exp(0.1 * rng.normal(delta, 1, n)), np.exp(0.1 * rng.normal(0, 1, n))))
        preds.append(np.mean([separated(r.redraw(rng, 0.0)) for _ in range(copies)]))
    return truth, np.array(preds)


@pytest.mark.slow
def test_the_probability_of_separating_two_samples_is_not_overconfident():
    """Issue 26's Intel sweeps: C11 (a pair count excluded from Akka's peak set) was called
    robust at P(contradicted) 0.95 and was contradicted in 3 of 5. With a normal truth
    separating two 5-round samples in ~38 % of sweeps, a plain bootstrap of rounds says
    P >= 0.9 in ~22 % of sweeps (mean P ~0.57); the smoothed, rescaled redraw must be
    right on average and rarely sure."""
    truth, preds = _separation_predictions(delta=2.0)
    assert 0.3 < truth < 0.45
    assert abs(preds.mean() - truth) < 0.08, (preds.mean(), truth)
    assert np.mean(preds >= reliability.ROBUST_P) < 0.07, np.mean(preds >= reliability.ROBUST_P)


def _table(sds, n=5, seed=8):
    """A table of configurations (processes = 1, 2, ...), two languages each, with these
    per-round log sds."""
    rng = np.random.default_rng(seed)
    rows = []
    for c, sd in enumerate(sds):
        for lang, mu in (("erlang", 0.0), ("go", -0.5)):
            z = rng.normal(0, 1, n)
            z = (z - z.mean()) / z.std(ddof=1)  # exactly this sd in the sample
            rows += [
                {"language": lang, "processes": c + 1, "trial": k + 1, "value": float(np.exp(mu + sd * z[k]))}
                for k in range(n)
            ]
    return pd.DataFrame(rows)


def _ratio_sd_of(frame, processes):
    return _log_ratio_sd(frame, 0.0, copies=2000, seed=2, processes=processes)[0]


@pytest.mark.slow
def test_a_calm_configuration_in_a_noisy_table_is_not_taken_for_calm():
    """Issue 26, C2: Go's 5 kB ping-ping ran at 0.060-0.064 s in one sweep and 0.044-0.075 s
    in the next; copies that took the calm sweep's sd for the truth called C2 robust at P
    1.00 and a re-run found it inconclusive. A cell's spread is moderated towards its
    language's typical one in the table (PRIOR_DF degrees of freedom): alone, or among
    configurations as calm, its copies keep its own spread; among noisy ones they widen
    towards theirs."""
    calm, noisy = 0.02, 0.2
    alone = _ratio_sd_of(_table([calm]), 1)
    among_calm = _ratio_sd_of(_table([calm] * 6), 1)
    among_noisy = _ratio_sd_of(_table([calm] + [noisy] * 5), 1)
    assert np.isnan(resample.Rounds(_table([calm] * (resample.MIN_CONFIGS - 1))).prior_var).all()
    assert among_calm == pytest.approx(alone, rel=0.35)
    # the posterior sd mixes PRIOR_DF of the table's variance with n - 1 of its own
    assert among_noisy > 3 * alone
    assert among_noisy < _ratio_sd_of(_table([noisy] * 6), 1)


@pytest.mark.slow
def test_a_cell_with_one_round_moves_by_the_between_sweep_effect_only():
    frame = _cell_frame([0.5], [0.25])
    got, _ = _log_ratio_sd(frame, 0.05)
    assert got == pytest.approx(0.05 * np.sqrt(2), rel=0.06)  # two cells, s each
    assert resample.Rounds(frame).cell_se.tolist() == [0.0, 0.0]


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


QUICK_STAGE = {"enabled": True, "budget_fraction": 0.08, "deadline_s": 760.0, "rounds": 3}
C4_COST_S = 3 * 3 * (1.0 + 0.15)  # 3 rounds of C4's 3 languages, 1 s wall each, plus the harness's overhead


def _with_stage(P, stage1_s, settings=QUICK_STAGE, ran=None, shard=None):
    """P as a sweep of a profile with this second stage whose stage 1 took stage1_s."""
    P.info["manifest"] = {"resolved_profile": {"second_stage": dict(settings)}, "shard": shard}
    P.info["stage1_s"], P.info["second_stage"] = stage1_s, ran
    return P


def _verdicts(view):
    """The claims' verdicts on a view, as reliability.py ranks them (C4b's candidate, P(decide)
    ~0.006, is not worth a round: C4 is the only claim a re-run's stage can reach)."""
    from serverbench.analysis.claims import engine

    return engine.check_all(view)


def _left(c4, P):
    """What a re-run's second stage may still decide of C4 (rerun.left_undecided)."""
    from serverbench.analysis import rerun

    return rerun.left_undecided([c4], P, rerun.reach(P, _verdicts))


@pytest.fixture
def c4_sweep(tmp_path, quiet_machine, monkeypatch):
    from serverbench.analysis import spread
    from serverbench.analysis.claims import engine

    monkeypatch.setattr(spread, "stage1_log_sd", lambda *a, **k: (0.0645, True))  # Intel's, measured
    P = _c4_five_rounds(tmp_path)
    c4 = next(v for v in engine.check_all(P) if v.id == "C4")
    assert c4.verdict == engine.INCONCLUSIVE
    return P, c4


def test_an_inconclusive_claim_a_re_runs_second_stage_could_decide_is_not_robust(c4_sweep):
    """The copies redraw rounds; they do not re-run the second stage. A claim left
    inconclusive with an undecided comparison this sweep's second stage did not extend
    gives P(decide) of that comparison, times the share of claims a re-run's stage would
    reach, to the side it would decide (issue 26's first five sweeps: C5 "robust
    inconclusive" in the one sweep whose second stage passed it over)."""
    from serverbench.analysis import second_stage

    P, c4 = c4_sweep
    assert _left(c4, P) == {}  # the profile has no second stage
    before = reliability.probabilities(P, B=20, ids=["C4"]).iloc[0]

    # stage 1 well inside the deadline, a budget that affords C4's configuration: a
    # re-run's stage reaches C4, the only claim with candidates, whatever its stage-1 time
    _with_stage(P, 300.0)
    p_yes, p_no = _left(c4, P)["C4"]
    assert p_yes == 0.0 and 0.02 < p_no < 0.5  # Erlang/Go ~1.42: only a "no" is in reach
    full = second_stage.candidates([c4], P.runs, 3)[0]
    assert p_no == pytest.approx(full.p_no)
    after = reliability.probabilities(P, B=20, ids=["C4"]).iloc[0]
    assert after["p_inconclusive"] == pytest.approx(before["p_inconclusive"] * (1 - p_no), abs=1e-4)
    moved = before["p_inconclusive"] * p_no
    assert after["p_contradicted"] == pytest.approx(before["p_contradicted"] + moved, abs=1e-4)
    assert after["p_supported"] == before["p_supported"]

    # had the second stage extended that comparison, a re-run would have too: no change
    runs = P.runs.copy()
    runs["stage"] = np.where(runs["language"].isin(["erlang", "go"]), 2, 1)
    P.runs = runs
    assert _left(c4, P) == {}


def test_a_stage_with_no_budget_here_may_have_one_in_a_re_run(c4_sweep):
    """Issue 26's 15:14-16:28 Intel sweeps: stage 1 ended 8 and 28 s past the 760 s
    deadline in two of them, their stages had no budget, and C5 and C6 were labelled robust
    inconclusive at P 1.00; the other three sweeps' stage 1 ended in time and their stages
    decided C5 or C6. Stage 1's time varies between sweeps (log sd 0.0645 there), so a
    sweep just past the deadline is one whose re-run has a fair chance of a budget."""
    from serverbench.analysis import second_stage

    P, c4 = c4_sweep
    full = second_stage.candidates([c4], P.runs, 3)[0].p_no

    def moved(stage1_s):
        _with_stage(P, stage1_s)
        return _left(c4, P).get("C4", (0.0, 0.0))[1]

    near = [moved(t) for t in (600.0, 700.0, 740.0, 768.0, 788.0, 830.0)]
    assert near == sorted(near, reverse=True)  # the later stage 1 ends, the less a re-run's stage reaches
    assert 0.1 * full < near[3] < 0.5 * full and 0.05 * full < near[4] < near[3]  # the C5/C6 sweeps
    assert near[0] == pytest.approx(full)  # 2.4 sd inside the deadline: every re-run has a budget
    assert moved(1500.0) == 0.0  # twice the deadline: no re-run gets a budget
    _with_stage(P, 788.0)
    row = reliability.probabilities(P, B=20, ids=["C4"]).iloc[0]
    assert row["reliability"] != reliability.ROBUST or row["modal_verdict"] != "inconclusive"

    # a sharded sweep has no second stage, nor would a re-run in shards
    _with_stage(P, 300.0, shard="1/2")
    assert _left(c4, P) == {}


@pytest.mark.slow
def test_a_claim_the_stage_decided_is_decided_only_when_a_re_run_s_stage_reaches_it(tmp_path, quiet_machine):
    """The mirror case (issue 26, 17:43 sweep): the second stage gave C5 and C6 three more
    rounds and they were decided, and the copies, redrawing all eight rounds, called them
    robust contradicted; a re-run whose stage 1 ends past the deadline decides on five and
    leaves them inconclusive. So an extended claim's P mixes the copies of the whole sweep
    (with the re-run's reach) and those of its stage-1 view (with the rest)."""
    from serverbench.analysis import rerun, spread
    from serverbench.analysis import synthetic as S
    from serverbench.analysis.claims import engine

    slow = [1.0, 1.45, 1.0, 1.3, 1.0, 1.0, 1.02, 0.99]
    times = {
        ("erlang", 100_000): [0.22 * f for f in slow],
        ("go", 100_000): [0.155 * f for f in slow],
        ("scala_akka", 100_000): [0.8 * f for f in slow],
    }
    P = S.processed_from(S.spawn_runs(times), tmp_path)
    runs = P.runs.copy()
    runs["stage"] = np.where(runs["trial"] >= 5, 2, 1)
    P.runs = runs
    c4 = next(v for v in engine.check_all(P) if v.id == "C4")
    assert c4.verdict == engine.CONTRADICTED  # eight rounds decide it
    assert next(v for v in engine.check_all(rerun.stage_one(P)) if v.id == "C4").verdict == engine.INCONCLUSIVE
    assert rerun.extended_claims([c4], P) == {"C4"}

    def p_contradicted(stage1_s, sd):
        _with_stage(P, stage1_s, ran={"rounds": 3})
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(spread, "stage1_log_sd", lambda *a, **k: (sd, True))
            return reliability.probabilities(P, B=20, ids=["C4"]).iloc[0], rerun.reach(P, _verdicts)

    whole, share = p_contradicted(300.0, 0.0645)  # every re-run's stage reaches C4
    assert share == 1.0
    late, share_late = p_contradicted(788.0, 0.0645)
    assert 0.05 < share_late < 0.3
    view = rerun.stage_one(P)
    view.info = {**P.info, "manifest": {}}  # its copies alone, nothing moved for a re-run's stage
    first = reliability.probabilities(view, B=20, ids=["C4"]).iloc[0]
    for col in reliability.COLUMNS:
        assert late[col] == pytest.approx(share_late * whole[col] + (1 - share_late) * first[col], abs=1e-4)
    assert late["p_contradicted"] < whole["p_contradicted"]
    assert late["reliability"] != reliability.ROBUST


def test_a_re_runs_reach_follows_its_budget(c4_sweep):
    """rerun_reach: with no spread in stage 1's time, a step where the deadline leaves the
    cost of C4's configuration; the budget fraction caps it too; a spread smooths the step."""
    from serverbench.analysis import rerun, second_stage

    P, c4 = c4_sweep
    ranked = second_stage.candidates([c4], P.runs, 3)
    cost = rerun.run_cost(P.runs, 3)
    one = next(iter(ranked[0].config_ids))
    assert cost(set(ranked[0].config_ids)) == pytest.approx(C4_COST_S)
    assert cost({one}) == pytest.approx(C4_COST_S)  # every language of the group gets the rounds
    assert cost(set()) == 0.0

    def reach(stage1_s, sd, **settings):
        return rerun.rerun_reach(ranked, cost, {**QUICK_STAGE, **settings}, stage1_s, sd)

    edge = 760.0 - C4_COST_S
    assert reach(edge - 1, 0.0) == 1.0 and reach(edge + 1, 0.0) == 0.0
    assert reach(edge, 0.0645) == pytest.approx(0.5, abs=0.05)
    assert reach(100.0, 0.0) == 0.0  # 8 % of 100 s is less than the configuration costs
    assert reach(200.0, 0.0) == 1.0
    assert reach(900.0, 0.0, deadline_s=None) == 1.0  # no deadline: the fraction alone


def test_the_label_is_about_the_verdict_the_sweep_reports():
    assert reliability.label(1.0, 1.0) == reliability.ROBUST
    assert reliability.label(0.94, 0.06) == reliability.BORDERLINE  # an unusual verdict, a sure modal one
    assert reliability.label(0.85, 0.85) == reliability.NEITHER
    assert reliability.label(0.5, 0.5) == reliability.BORDERLINE


def test_robust_means_p_at_least_0_9_beyond_the_copies_monte_carlo_error():
    """Issue 26: C2 (contradicted in 9 of 10 Intel sweeps) and C11 were labelled robust at
    P 0.93-0.97 from 40 copies and changed verdict in another sweep. 38 of 40 copies cannot
    show P >= 0.9 at 95 %; 40 of 40 can (lower bound 0.05^(1/40) = 0.928), and so can 0.95
    of 2,000."""
    assert reliability.label(0.95, 0.95, copies=40) == reliability.NEITHER
    assert reliability.label(0.975, 0.975, copies=40) == reliability.NEITHER
    assert reliability.label(1.0, 1.0, copies=40) == reliability.ROBUST
    assert reliability.label(0.95, 0.95, copies=2000) == reliability.ROBUST
    assert reliability.label(0.91, 0.91, copies=2000) == reliability.NEITHER
    assert reliability.label(1.0, 1.0, copies=10) == reliability.NEITHER  # 0.05^(1/10) = 0.74


@pytest.mark.slow
def test_the_copies_give_the_same_probabilities_in_one_process_or_several(tmp_path, quiet_machine):
    """Copy i draws from its own stream (seed, i): splitting the copies between processes
    (the report's default on a multi-core machine) changes nothing."""
    P = _c4_five_rounds(tmp_path)
    one = reliability.probabilities(P, B=12, ids=["C4", "C4b"], workers=1)
    two = reliability.probabilities(P, B=12, ids=["C4", "C4b"], workers=2)
    three = reliability.probabilities(P, B=12, ids=["C4", "C4b"], workers=3)
    pd.testing.assert_frame_equal(one, two)
    pd.testing.assert_frame_equal(one, three)
    other_seed = reliability.probabilities(P, B=12, ids=["C4", "C4b"], workers=1, seed=7)
    assert not one[reliability.COLUMNS].equals(other_seed[reliability.COLUMNS])  # the streams are real draws
