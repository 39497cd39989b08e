"""A claim's verdict at a scale from every sweep of its pieces (analysis/claims/scale.py,
protocol 2 section 5): sweeps as units, a t interval between them, one sweep saying that
the between-sweep component is unknown, pieces combined by union."""

from __future__ import annotations

import math

import pandas as pd
import pytest
from scipy import stats as sps

from serverbench import protocol
from serverbench.analysis.claims import CONTRADICTED, INCONCLUSIVE, SUPPORTED, scale


def _ev(rows):
    """Evidence rows for claim C1: (comparison, ratio, result) with 'lower' regions."""
    return pd.DataFrame(
        [
            {
                "claim": "C1",
                "comparison": comp,
                "config": "5 kB",
                "ratio": ratio,
                "ci_lo": ratio * 0.97,
                "ci_hi": ratio * 1.03,
                "yes_lo": 0.0,
                "yes_hi": 1.0,
                "result": result,
            }
            for comp, ratio, result in rows
        ]
    )


def _sweep(name, verdict, rows, piece="pingping"):
    return scale.SweepVerdict(piece, name, "AMD EPYC, 2 CPUs", 2, verdict, _ev(rows))


def test_the_combined_ratio_is_the_geometric_mean_with_a_t_interval_between_sweeps():
    ratios = [0.50, 0.55, 0.60]
    sweeps = [_sweep(f"s{i}", SUPPORTED, [("Go/Akka", r, "yes")]) for i, r in enumerate(ratios)]
    c = scale.combine("C1", sweeps)
    (comp,) = c.comparisons
    logs = [math.log(r) for r in ratios]
    mean = sum(logs) / 3
    sd = pd.Series(logs).std()
    q = sps.t.ppf(0.5 + protocol.level() / 2, 2)
    assert comp.ratio == pytest.approx(math.exp(mean))
    assert (comp.lo, comp.hi) == (
        pytest.approx(math.exp(mean - q * sd / math.sqrt(3))),
        pytest.approx(math.exp(mean + q * sd / math.sqrt(3))),
    )
    assert comp.result == "yes" and c.verdict == SUPPORTED and c.agreement() == "3 of 3"
    assert "between 3 sweeps" in comp.text()


def test_sweeps_that_disagree_widen_the_interval_until_it_decides_nothing():
    """Each sweep's own interval excludes 1, yet the two sweeps lie far apart: between them
    the interval straddles 1 (the within-sweep interval understates a re-run's spread)."""
    sweeps = [_sweep("a", SUPPORTED, [("Go/Akka", 0.6, "yes")]), _sweep("b", CONTRADICTED, [("Go/Akka", 1.3, "no")])]
    c = scale.combine("C1", sweeps)
    assert c.comparisons[0].lo < 1 < c.comparisons[0].hi
    assert c.verdict == INCONCLUSIVE and c.agreement() == "0 of 2"


def test_one_sweep_keeps_its_own_result_and_says_the_between_sweep_spread_is_unknown():
    c = scale.combine("C1", [_sweep("a", CONTRADICTED, [("Go/Akka", 0.5, "yes"), ("Erlang/Akka", 1.07, "unclear")])])
    assert [x.result for x in c.comparisons] == ["yes", "unclear"]  # as the sweep judged them
    assert c.one_sweep_only and "between-sweep spread unknown" in c.comparisons[1].text()


def test_an_order_word_is_contradicted_between_sweeps_by_a_consistent_difference_the_wrong_way():
    """Protocol 2's no region for 'lower' starts at 1: 1.07, 1.08, 1.09 over three sweeps."""
    sweeps = [_sweep(f"s{i}", INCONCLUSIVE, [("Erlang/Akka", r, "unclear")]) for i, r in enumerate((1.07, 1.08, 1.09))]
    c = scale.combine("C1", sweeps)
    assert c.comparisons[0].result == "no" and c.verdict == CONTRADICTED


def test_pieces_combine_by_union_and_a_piece_that_cannot_test_is_not_a_disagreement():
    one = scale.SweepVerdict("throughput-1core", "t1", "m", 2, "not testable on this machine", pd.DataFrame())
    two = _sweep("t2", SUPPORTED, [("Go T(P)/T(C)", 0.9, "yes")], piece="throughput-2cores")
    c = scale.combine("C1", [one, two])
    assert c.verdict == SUPPORTED and c.agreement() == "1 of 1 (1 more could not test it)"


def test_a_failed_check_in_any_sweep_is_not_hidden():
    c = scale.combine("C1", [_sweep("a", SUPPORTED, [("Go/Akka", 0.5, "yes")]), _sweep("b", "error", [])])
    assert c.verdict == "error"


def test_the_no_region_from_a_yes_region():
    assert scale.no_region(0.0, 1.0) == (0.0, 1.0)  # 'lower': the order itself
    assert scale.no_region(0.8, 1.25) == (pytest.approx(0.64), pytest.approx(1.5625))  # 'similar': one factor
    assert scale.no_region(1.0, math.inf) == (1.0, math.inf)  # 'higher'


def _two_comparisons(bad: tuple[float, ...], good: tuple[float, ...]) -> list[scale.SweepVerdict]:
    """Sweeps of C1 ('lower'), each with Erlang/Akka (`bad`, the wrong way) and Go/Akka (`good`)."""
    return [
        _sweep(f"s{i}", INCONCLUSIVE, [("Erlang/Akka", b, "unclear"), ("Go/Akka", g, "yes")])
        for i, (b, g) in enumerate(zip(bad, good))
    ]


def _t_lo(ratios, level):
    logs = pd.Series([math.log(r) for r in ratios])
    q = sps.t.ppf(0.5 + level / 2, len(logs) - 1)
    return math.exp(logs.mean() - q * logs.std() / math.sqrt(len(logs)))


def test_holm_keeps_a_two_sweep_no_only_where_its_stricter_interval_lies_in_the_no_region():
    """Two sweeps (1 degree of freedom), two comparisons: Erlang/Akka's 90 % interval lies above 1,
    its 95 % (1 - 2 alpha / 2) interval does not, so it is 'unclear' and the claim inconclusive.
    (Before the fix a plain 90 % interval said 'no' and Holm could only add 'no's.)"""
    bad = (1.25, 1.30)
    assert _t_lo(bad, protocol.level()) > 1 > _t_lo(bad, 1 - 2 * protocol.alpha() / 2)  # the premise
    c = scale.combine("C1", _two_comparisons(bad, (0.50, 0.52)))
    got = {x.comparison: x.result for x in c.comparisons}
    assert got == {"Erlang/Akka": "unclear", "Go/Akka": "yes"}
    assert c.verdict == INCONCLUSIVE
    erlang = next(x for x in c.comparisons if x.comparison == "Erlang/Akka")
    assert erlang.holm_level == pytest.approx(1 - 2 * protocol.alpha() / 2)


def test_holm_with_three_sweeps_steps_down_after_a_clear_no():
    """Three sweeps (2 degrees of freedom), three comparisons. Alone, the borderline one (1.05-1.15)
    is 'no' at 90 % but not at 1 - 2 alpha / 3; once the clear one (2.0-2.2) is 'no', the step
    down tests it at 1 - 2 alpha / 2, where it still is not, so it stays 'unclear'."""
    border, clear, fine = (1.05, 1.10, 1.15), (2.0, 2.1, 2.2), (0.5, 0.52, 0.54)
    assert _t_lo(border, protocol.level()) > 1 > _t_lo(border, 1 - 2 * protocol.alpha() / 2)
    sweeps = [
        _sweep(f"s{i}", CONTRADICTED, [("Erlang/Akka", b, "no"), ("Java/Akka", c_, "no"), ("Go/Akka", f, "yes")])
        for i, (b, c_, f) in enumerate(zip(border, clear, fine))
    ]
    c = scale.combine("C1", sweeps)
    got = {x.comparison: x.result for x in c.comparisons}
    assert got == {"Erlang/Akka": "unclear", "Java/Akka": "no", "Go/Akka": "yes"}
    assert c.verdict == CONTRADICTED
    java = next(x for x in c.comparisons if x.comparison == "Java/Akka")
    assert java.holm_level == pytest.approx(1 - 2 * protocol.alpha() / 3)  # the first step: all three left


def test_holm_step_down_lets_a_second_no_through_at_the_smaller_family():
    """A 'no' that fails at 1 - 2 alpha / 2 but holds at 1 - 2 alpha / 1 survives once the other
    comparison is shown 'no' first (Holm 1979: the step-down, not Bonferroni)."""
    second = (1.10, 1.20, 1.30)
    assert _t_lo(second, 1 - 2 * protocol.alpha()) > 1 > _t_lo(second, 1 - 2 * protocol.alpha() / 2)
    sweeps = [
        _sweep(f"s{i}", CONTRADICTED, [("Erlang/Akka", b, "no"), ("Java/Akka", c_, "no")])
        for i, (b, c_) in enumerate(zip(second, (3.0, 3.1, 3.2)))
    ]
    c = scale.combine("C1", sweeps)
    assert {x.comparison: x.result for x in c.comparisons} == {"Erlang/Akka": "no", "Java/Akka": "no"}


def test_protocol_4_pools_the_between_sweep_sd_over_a_benchmarks_comparisons():
    """Two comparisons over three sweeps: s_p^2 is the sum of both comparisons' squared
    deviations over D = 2 + 2, and each interval is mean +- t(D) s_p / sqrt(S)."""
    a, b = (0.50, 0.55, 0.60), (0.80, 0.70, 0.75)
    sweeps = [
        _sweep(f"s{i}", SUPPORTED, [("Go/Akka", x, "yes"), ("Erlang/Akka", y, "yes")])
        for i, (x, y) in enumerate(zip(a, b))
    ]
    pool = scale.pool("pingping", sweeps)
    la, lb = pd.Series([math.log(x) for x in a]), pd.Series([math.log(x) for x in b])
    ss = ((la - la.mean()) ** 2).sum() + ((lb - lb.mean()) ** 2).sum()
    assert (pool.df, pool.comparisons) == (4, 2) and pool.sd == pytest.approx(math.sqrt(ss / 4))
    (c,), pools = scale.combine_all({"C1": sweeps}, {"C1": "pingping"}, version=4)
    assert pools == {"pingping": pool}
    go = next(x for x in c.comparisons if x.comparison == "Go/Akka")
    q = sps.t.ppf(0.5 + protocol.level() / 2, 4)
    assert go.lo == pytest.approx(math.exp(la.mean() - q * pool.sd / math.sqrt(3)))
    assert go.pooled == pool and "pooled sd on 4 df" in go.text()
    # protocol 3, the same sweeps: each comparison's own sd on 2 df
    (c3,), pools3 = scale.combine_all({"C1": sweeps}, {"C1": "pingping"}, version=3)
    assert pools3 == {} and all(x.pooled is None for x in c3.comparisons)


def test_protocol_4_decides_a_two_sweep_no_that_protocol_3_cannot():
    """C7a's committed pattern, the wrong way for 'lower': six comparisons, each 6-13 x in two
    sweeps. On 1 df Holm's interval spans orders of magnitude (inconclusive under 3); pooled over
    the six (D = 6) each lies above 1 (contradicted under 4). The control: the same spreads
    centred on 1 stay inconclusive under both."""
    rows = [(0.120, 0.164), (0.123, 0.182), (0.133, 0.155), (0.227, 0.354), (0.120, 0.163), (0.079, 0.093)]

    def run(pairs, version):
        sweeps = [
            _sweep(f"s{i}", INCONCLUSIVE, [(f"Erlang/Akka {k}", r[i], "unclear") for k, r in enumerate(pairs)])
            for i in range(2)
        ]
        (c,), _ = scale.combine_all({"C1": sweeps}, {"C1": "throughput"}, version=version)
        return c.verdict

    wrong_way = [(1 / a, 1 / b) for a, b in rows]
    centred = [(a / math.sqrt(a * b), b / math.sqrt(a * b)) for a, b in rows]
    assert (run(wrong_way, 3), run(wrong_way, 4)) == (INCONCLUSIVE, CONTRADICTED)
    assert (run(centred, 3), run(centred, 4)) == (INCONCLUSIVE, INCONCLUSIVE)


def test_protocol_4_without_a_pool_falls_back_to_protocol_3():
    one = [_sweep("a", CONTRADICTED, [("Go/Akka", 0.5, "yes"), ("Erlang/Akka", 1.07, "unclear")])]
    (c,), pools = scale.combine_all({"C1": one}, {"C1": "pingping"}, version=4)
    assert pools == {} and [x.result for x in c.comparisons] == ["yes", "unclear"] and c.one_sweep_only


def test_a_verdict_is_confirmatory_only_with_a_sweep_recorded_after_its_versions_freeze():
    frozen = protocol._load(None)["frozen_utc"]  # the newest version's
    stamp = frozen.replace("-", "").replace(":", "")
    before = _sweep("paper-pingping-20261129T065200Z", SUPPORTED, [("Go/Akka", 0.5, "yes")])
    after = _sweep(f"paper-pingping-{stamp[:-3]}59Z", SUPPORTED, [("Go/Akka", 0.5, "yes")])
    (old,), _ = scale.combine_all({"C1": [before]}, {"C1": "pingping"})
    (new,), _ = scale.combine_all({"C1": [before, after]}, {"C1": "pingping"})
    assert not scale.confirmatory(old) and scale.confirmatory(new)
