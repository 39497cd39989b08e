"""P(verdict)'s simulated re-runs (analysis/reliability.py): a copy behaves like an
independent re-run of the sweep, not like this sweep drawn again."""

import numpy as np
import pandas as pd
import pytest

from serverbench.analysis import reliability


def _cell_frame(values_a, values_b):
    """One configuration, two languages, one row per round."""
    rows = [{"language": lang, "processes": 100_000, "trial": k + 1, "value": v}
            for lang, vs in (("erlang", values_a), ("go", values_b)) for k, v in enumerate(vs)]
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
