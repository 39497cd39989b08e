"""The power check (analysis/power.py): would this sweep's trials have recovered the
source's own effect? An inconclusive claim that would not is "underpowered here"."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from serverbench.analysis import power


def _row(claim, comparison, ratio, lo, hi, level=0.968, yes_lo=0.0, yes_hi=0.87, result="unclear"):
    return dict(
        claim=claim,
        comparison=comparison,
        config="x",
        ratio=ratio,
        ci_lo=lo,
        ci_hi=hi,
        ci_level=level,
        yes_lo=yes_lo,
        yes_hi=yes_hi,
        result=result,
    )


SOURCE = pd.DataFrame(
    [
        _row("C1", "Go/Scala/Akka time", 0.5, 0.5, 0.5, level=0.0),
        _row("C1", "Go/Scala/Akka time", 0.6, 0.6, 0.6, level=0.0),  # median of the source's configs: 0.548
        _row("C2", "Erlang/Go time", 1.0, 1.0, 1.0, level=0.0),
    ]
)


def test_a_precise_sweep_recovers_the_source_and_a_noisy_one_does_not():
    precise = pd.DataFrame([_row("C1", "Go/Scala/Akka time", 0.7, 0.62, 0.79)])  # se ~0.06 in log
    noisy = pd.DataFrame([_row("C1", "Go/Scala/Akka time", 0.7, 0.25, 1.9)])  # se ~0.5
    p_precise = power.powers(precise, SOURCE).set_index("id").loc["C1", "power"]
    p_noisy = power.powers(noisy, SOURCE).set_index("id").loc["C1", "power"]
    assert p_precise > 0.95 and p_noisy < 0.3
    # the simulation agrees with the normal formula: P(est + z se <= log 0.87), est ~ N(log 0.548, se^2)
    se = (np.log(1.9) - np.log(0.25)) / (2 * 2.1444)
    from scipy.stats import norm

    expected = norm.cdf((np.log(0.87) - np.log(np.sqrt(0.5 * 0.6)) - 2.1444 * se) / se)
    assert p_noisy == pytest.approx(expected, abs=0.03)


def test_too_few_trials_can_never_decide_and_no_source_number_gives_no_power():
    few = pd.DataFrame([_row("C1", "Go/Scala/Akka time", 0.5, 0.4, 0.6, level=0.9)])  # below 95 %
    assert power.powers(few, SOURCE).set_index("id").loc["C1", "power"] == 0.0
    other = pd.DataFrame([_row("C9", "something else", 0.5, 0.4, 0.6)])
    assert np.isnan(power.powers(other, SOURCE).set_index("id").loc["C9", "power"])
    # rows shown for context only ('-') are not simulated; a qualifier in brackets still matches
    ctx = pd.DataFrame(
        [
            _row("C1", "Go/Scala/Akka time (heap growing)", 0.7, 0.62, 0.79),
            _row("C1", "Go/Scala/Akka time", 0.7, 0.1, 9.0, result="-"),
        ]
    )
    assert power.powers(ctx, SOURCE).set_index("id").loc["C1", "power"] > 0.95


def test_every_deciding_comparison_must_recover_its_effect():
    two = pd.DataFrame(
        [
            _row("C1", "Go/Scala/Akka time", 0.7, 0.62, 0.79),
            _row("C1", "Go/Scala/Akka time", 0.7, 0.25, 1.9),
        ]
    )
    both = power.powers(two, SOURCE).set_index("id").loc["C1", "power"]
    assert both < 0.3


def test_inconclusive_and_underpowered_is_labelled_so():
    ct = pd.DataFrame(
        {"id": ["C1", "C2", "C3", "C4"], "verdict": ["inconclusive", "inconclusive", "supported", "inconclusive"]}
    )
    pw = pd.DataFrame({"id": ["C1", "C2", "C3"], "power": [0.2, 0.95, 0.1]})
    t = power.label_underpowered(ct, pw).set_index("id")
    assert t.loc["C1", "verdict"] == power.UNDERPOWERED
    assert t.loc["C2", "verdict"] == "inconclusive"  # could have seen it: the effect is not there at that size
    assert t.loc["C3", "verdict"] == "supported"
    assert t.loc["C4", "verdict"] == "inconclusive" and np.isnan(t.loc["C4", "power"])


@pytest.mark.slow
def test_the_sources_effects_come_from_their_own_numbers():
    ev = power.source_evidence_all()
    eff = power.source_effects(ev)
    t1 = eff[(eff["claim"] == "T1") & (eff["key"] == "go/go")]
    assert len(t1) == 1 and np.exp(t1["log_effect"].iloc[0]) == pytest.approx(9.887 / 1.742, rel=1e-3)
    assert {"C1", "T1b"} <= set(eff["claim"])


def test_a_similarity_claim_is_simulated_on_its_equivalence_interval():
    # C2 "very similar": yes when the 90 % interval lies inside [0.67, 1.5]; the source's ratio is 1.0
    r = _row("C2", "Erlang/Go time", 1.1, 0.70, 1.70, yes_lo=0.667, yes_hi=1.5)
    narrow = pd.DataFrame([{**r, "ci_yes_lo": 0.95, "ci_yes_hi": 1.27, "ci_yes_level": 0.9048}])
    assert power.powers(narrow, SOURCE).set_index("id").loc["C2", "power"] > 0.9
    wide = pd.DataFrame([{**r, "ci_yes_lo": 0.6, "ci_yes_hi": 2.0, "ci_yes_level": 0.9048}])
    assert power.powers(wide, SOURCE).set_index("id").loc["C2", "power"] < 0.5


def test_a_source_that_does_not_meet_its_own_claim_gives_no_power():
    # the yes region says < 0.87; a source whose own ratio is 1.2 has no effect to recover
    src = pd.DataFrame([_row("C4", "Erlang/Go all_ready_s", 1.2, 1.2, 1.2, level=0.0)])
    ours = pd.DataFrame([_row("C4", "Erlang/Go all_ready_s", 0.7, 0.62, 0.79)])
    assert np.isnan(power.powers(ours, src).set_index("id").loc["C4", "power"])
