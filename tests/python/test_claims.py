"""Every claim's verdict logic on synthetic data: supported, contradicted, inconclusive,
not testable."""

import numpy as np
import pytest

from serverbench.analysis import claims, synthetic
from serverbench.analysis.claims import CONTRADICTED, INCONCLUSIVE, NOT_TESTABLE, SUPPORTED

S = synthetic


def jit(x, n=5, spread=0.01):
    """n values tightly around x (deterministic)."""
    return [float(x * (1 + spread * (i - (n - 1) / 2) / n)) for i in range(n)]


def P_of(tmp_path, recs, manifest=None):
    return S.processed_from(recs, tmp_path, manifest)


# ------------------------------------------------------------------ C1 / C2 PingPing

@pytest.mark.parametrize("go,erl,akka,v1,v2", [
    (1.0, 1.1, 3.0, SUPPORTED, SUPPORTED),        # both faster, similar
    (1.0, 4.0, 3.0, CONTRADICTED, CONTRADICTED),  # Erlang slower than Akka; Go/Erlang = 0.25
    (1.0, 1.45, 1.5, INCONCLUSIVE, INCONCLUSIVE),  # intervals straddle 1 / 1.5
])
def test_pingping_claims(tmp_path, go, erl, akka, v1, v2):
    spread = 0.2 if v1 == INCONCLUSIVE else 0.01
    recs = S.pingping_runs({"go": jit(go, spread=spread), "erlang": jit(erl, spread=spread),
                            "scala_akka": jit(akka, spread=spread)})
    P = P_of(tmp_path, recs)
    c1, c2 = claims.claim_pingping_faster(P), claims.claim_go_erlang_similar(P)
    assert c1.verdict == v1, c1.summary
    assert c2.verdict == v2, c2.summary
    assert not c1.evidence.empty and {"ratio", "ci_lo", "ci_hi", "result"} <= set(c1.evidence.columns)


def test_pingping_too_few_trials_is_inconclusive(tmp_path):
    recs = S.pingping_runs({"go": [1.0], "erlang": [1.0], "scala_akka": [3.0]})
    c = claims.claim_pingping_faster(P_of(tmp_path, recs))
    assert c.verdict == INCONCLUSIVE and "no interval" in c.summary


def test_pingping_uses_largest_repetitions(tmp_path):
    # at 1,000 repetitions Go is slower than Akka, at 10,000 faster: only the largest counts
    recs = S.pingping_runs({"go": jit(5.0), "erlang": jit(5.0), "scala_akka": jit(1.0)}, reps=1000) + \
        S.pingping_runs({"go": jit(1.0), "erlang": jit(1.0), "scala_akka": jit(3.0)}, reps=10000)
    assert claims.claim_pingping_faster(P_of(tmp_path, recs)).verdict == SUPPORTED


def test_pingping_not_testable_without_akka(tmp_path):
    recs = S.pingping_runs({"go": jit(1.0), "erlang": jit(1.0)})
    P = P_of(tmp_path, recs)
    c = claims.claim_pingping_faster(P)
    assert c.verdict == NOT_TESTABLE and "Scala/Akka" in c.summary
    assert claims.claim_go_erlang_similar(P).verdict == SUPPORTED


# ------------------------------------------------------------------ C3 max processes

@pytest.mark.parametrize("akka_fail,go_fail,expected", [
    ("over_memory_budget", "over_memory_budget", SUPPORTED),
    ("timeout", "over_memory_budget", SUPPORTED),      # Akka's own limit not needed when it is larger
])
def test_akka_most_processes_supported(tmp_path, akka_fail, go_fail, expected):
    recs = S.search_runs({"scala_akka": [(1000, 0.1), (10000, 0.5), (100000, akka_fail)],
                          "go": [(1000, 0.1), (10000, go_fail)],
                          "erlang": [(1000, 0.1), (10000, "crashed")]}, budget=2**29)
    c = claims.claim_akka_most_processes(P_of(tmp_path, recs))
    assert c.verdict == expected, c.summary
    assert "reduced" in c.scope  # 512 MiB < the paper's 8 GiB


def test_akka_most_processes_contradicted_and_inconclusive(tmp_path):
    base = {"go": [(1000, 0.1), (10000, 0.2), (100000, "over_memory_budget")],
            "erlang": [(1000, 0.1), (10000, "over_memory_budget")]}
    c = claims.claim_akka_most_processes(P_of(tmp_path / "a", S.search_runs(
        {**base, "scala_akka": [(1000, 0.1), (10000, "over_memory_budget")]})))
    assert c.verdict == CONTRADICTED, c.summary  # Go 10,000 > Akka 1,000, Akka's limit found
    c = claims.claim_akka_most_processes(P_of(tmp_path / "b", S.search_runs(
        {**base, "scala_akka": [(1000, 0.1), (10000, "timeout")]})))
    assert c.verdict == INCONCLUSIVE, c.summary  # Akka stopped by a timeout: its limit is unknown
    assert "limit not established" in c.summary
    c = claims.claim_akka_most_processes(P_of(tmp_path / "c", S.search_runs(
        {**base, "scala_akka": [(1000, 0.1), (10000, 0.2), (100000, "over_memory_budget")]})))
    assert c.verdict == INCONCLUSIVE, c.summary  # tie with Go at the same step


def test_akka_most_processes_not_testable(tmp_path):
    c = claims.claim_akka_most_processes(P_of(tmp_path, S.pingping_runs({"go": jit(1.0)})))
    assert c.verdict == NOT_TESTABLE


# ------------------------------------------------------------------ C4 / C5 spawn

def _spawn(times):
    return S.spawn_runs({k: jit(v) for k, v in times.items()})


@pytest.mark.parametrize("erl,expected", [(0.5, SUPPORTED), (3.0, CONTRADICTED), (1.0, INCONCLUSIVE)])
def test_erlang_spawns_fastest(tmp_path, erl, expected):
    t = {("erlang", 100000): erl, ("go", 100000): 1.0, ("scala_akka", 100000): 2.0,
         ("erlang", 1000): 0.01, ("go", 1000): 0.01, ("scala_akka", 1000): 0.01}
    recs = _spawn(t)
    if expected == INCONCLUSIVE:  # Erlang = Go within noise
        recs = S.spawn_runs({**{k: jit(v, spread=0.3) for k, v in t.items()}})
    c = claims.claim_erlang_spawns_fastest(P_of(tmp_path, recs))
    assert c.verdict == expected, c.summary
    assert "100,000" in c.summary


def test_erlang_spawns_fastest_not_testable(tmp_path):
    recs = _spawn({("erlang", 1000): 0.1, ("go", 1000): 0.2})
    assert claims.claim_erlang_spawns_fastest(P_of(tmp_path, recs)).verdict == NOT_TESTABLE


def _growth(akka_jump: float, erl_jump: float = 1.0):
    t = {}
    for n in (10000, 20000, 50000, 100000):
        t[("go", n)] = 1e-5 * n
        t[("erlang", n)] = 1e-5 * n * (erl_jump if n >= 50000 else 1.0)
        t[("scala_akka", n)] = 3e-5 * n * (akka_jump if n >= 20000 else 1.0)
    return _spawn(t)


def test_spawn_growth(tmp_path):
    assert claims.claim_spawn_growth(P_of(tmp_path / "a", _growth(3.0))).verdict == SUPPORTED
    c = claims.claim_spawn_growth(P_of(tmp_path / "b", _growth(1.0)))
    assert c.verdict == CONTRADICTED, c.summary  # Akka grows linearly: no jump
    c = claims.claim_spawn_growth(P_of(tmp_path / "c", _growth(3.0, erl_jump=4.0)))
    assert c.verdict == CONTRADICTED  # Erlang jumps
    c = claims.claim_spawn_growth(P_of(tmp_path / "d", _growth(1.5)))
    assert c.verdict == INCONCLUSIVE, c.summary  # Akka's step right at the threshold
    c = claims.claim_spawn_growth(P_of(tmp_path / "e", _spawn({("erlang", 1000): 0.1, ("go", 1000): 0.1,
                                                                   ("scala_akka", 1000): 0.1})))
    assert c.verdict == NOT_TESTABLE and "1,000" in c.summary


# ------------------------------------------------------------------ C6-C9 throughput

def _tp(spec, spread=0.01):
    return S.throughput_runs({k: jit(v, spread=spread) for k, v in spec.items()})


def test_go_throughput_2_5x(tmp_path):
    def run(sub, go, erl, akka, spread=0.01):
        spec = {}
        for c in (1, 2):
            for p in (1, 2, 4):
                spec.update({("go", c, p): go, ("erlang", c, p): erl, ("scala_akka", c, p): akka})
        return claims.claim_go_throughput_2_5x(P_of(tmp_path / sub, _tp(spec, spread)))

    assert run("a", 30.0, 10.0, 8.0).verdict == SUPPORTED
    c = run("b", 12.0, 10.0, 8.0)
    assert c.verdict == CONTRADICTED and "geometric mean" in c.summary
    assert run("c", 20.0, 10.0, 4.0, spread=0.5).verdict == INCONCLUSIVE  # Go/Erlang at the 2x edge
    assert "cores measured: 1, 2" in run("d", 30.0, 10.0, 8.0).scope
    P = P_of(tmp_path / "e", _tp({("go", 1, 1): 1.0}))
    assert claims.claim_go_throughput_2_5x(P).verdict == NOT_TESTABLE


def test_erlang_vs_akka_scale(tmp_path):
    spec = {("erlang", 2, p): 10.0 for p in (1, 2, 16)} | {("scala_akka", 2, p): 8.0 for p in (1, 2, 16)}
    spec |= {("erlang", 2, 64): 5.0, ("scala_akka", 2, 64): 9.0}  # pairs > 20 on 2 cores: neither region
    P = P_of(tmp_path / "a", _tp(spec), {"not_runnable": [{"benchmark": "throughput", "cores": 16, "reason": "2 CPUs"}]})
    assert claims.claim_erlang_beats_akka_small(P).verdict == SUPPORTED
    c = claims.claim_akka_beats_erlang_large(P)
    assert c.verdict == NOT_TESTABLE and "more than 8 cores" in c.summary
    spec2 = {("erlang", 2, 1): 5.0, ("scala_akka", 2, 1): 8.0, ("erlang", 16, 32): 5.0, ("scala_akka", 16, 32): 9.0}
    P2 = P_of(tmp_path / "b", _tp(spec2))
    assert claims.claim_erlang_beats_akka_small(P2).verdict == CONTRADICTED
    assert claims.claim_akka_beats_erlang_large(P2).verdict == SUPPORTED
    spec3 = {("erlang", 1, 1): 8.0, ("scala_akka", 1, 1): 8.1, ("erlang", 16, 32): 10.0, ("scala_akka", 16, 32): 5.0}
    P3 = P_of(tmp_path / "c", _tp(spec3, spread=0.3))
    assert claims.claim_erlang_beats_akka_small(P3).verdict == INCONCLUSIVE
    assert claims.claim_akka_beats_erlang_large(P3).verdict == CONTRADICTED


def test_peak_at_pairs_equal_cores(tmp_path):
    def curve(c, peak_at):
        return {p: (10.0 if p == peak_at else 7.0) for p in (1, 2, 4, 8)}

    def spec(peaks, spread=0.01):
        s = {}
        for lang in ("erlang", "go"):
            for c in (1, 2):
                for p, v in curve(c, peaks[(lang, c)]).items():
                    s[(lang, c, p)] = v
        return _tp(s, spread)

    ok = {("erlang", 1): 1, ("erlang", 2): 2, ("go", 1): 1, ("go", 2): 2}
    assert claims.claim_peak_pairs_eq_cores(P_of(tmp_path / "a", spec(ok))).verdict == SUPPORTED
    bad = {**ok, ("go", 2): 8}
    c = claims.claim_peak_pairs_eq_cores(P_of(tmp_path / "b", spec(bad)))
    assert c.verdict == CONTRADICTED and "8 pairs" in c.summary
    flat = S.throughput_runs({(lang, c, p): jit(10.0, spread=0.2) for lang in ("erlang", "go") for c in (1, 2)
                              for p in (1, 2, 4)})
    assert claims.claim_peak_pairs_eq_cores(P_of(tmp_path / "c", flat)).verdict == INCONCLUSIVE
    only = _tp({("erlang", 1, 2): 1.0, ("go", 1, 2): 1.0})
    assert claims.claim_peak_pairs_eq_cores(P_of(tmp_path / "d", only)).verdict == NOT_TESTABLE


def test_go_no_scaling_beyond_4(tmp_path):
    P = P_of(tmp_path / "a", _tp({("go", c, p): 10.0 for c in (1, 2) for p in (4, 8)}),
             {"not_runnable": [{"benchmark": "throughput", "cores": c, "reason": "x"} for c in (4, 8)]})
    c = claims.claim_go_no_scaling_beyond_4(P)
    assert c.verdict == NOT_TESTABLE and "2 logical CPUs" in c.summary
    flat = _tp({("go", c, p): 10.0 for c in (4, 8, 16) for p in (4, 8)})
    assert claims.claim_go_no_scaling_beyond_4(P_of(tmp_path / "b", flat)).verdict == SUPPORTED
    scal = _tp({("go", c, p): 10.0 * c for c in (4, 8) for p in (4, 8)})
    assert claims.claim_go_no_scaling_beyond_4(P_of(tmp_path / "c", scal)).verdict == CONTRADICTED
    edge = _tp({("go", c, p): 10.0 * (1.1 if c == 8 else 1.0) for c in (4, 8) for p in (4, 8)}, spread=0.3)
    assert claims.claim_go_no_scaling_beyond_4(P_of(tmp_path / "d", edge)).verdict == INCONCLUSIVE


# ------------------------------------------------------------------ all together

def test_check_all_on_paper_like_sweep(tmp_path):
    P = P_of(tmp_path, S.paper_like_sweep(trials=5))
    V = claims.check_all(P)
    table = claims.claims_table(V).set_index("id")
    assert list(table.index) == ["C1", "C2", "C3", "C4", "C5", "C6", "C7a", "C7b", "C8", "C9"]
    assert set(table["verdict"]) <= set(claims.VERDICTS)
    for cid in ("C1", "C2", "C3", "C4", "C5", "C6", "C7a"):
        assert table.loc[cid, "verdict"] == SUPPORTED, (cid, table.loc[cid, "numbers"])
    assert table.loc["C7b", "verdict"] == NOT_TESTABLE and table.loc["C9", "verdict"] == NOT_TESTABLE
    out = claims.write_claims(P)
    assert out["claims"].exists() and out["claims_evidence"].exists()
    # deterministic: same verdicts and numbers again
    assert claims.claims_table(claims.check_all(P)).equals(claims.claims_table(V))


def test_combine_and_classifiers():
    assert claims.combine([]) == NOT_TESTABLE
    assert claims.combine(["yes", "yes"]) == SUPPORTED
    assert claims.combine(["yes", "unclear"]) == INCONCLUSIVE
    assert claims.combine(["unclear", "no"]) == CONTRADICTED
    from serverbench.analysis.stats import RatioCI
    assert claims.below(RatioCI(5, 5, 0.5, 0.4, 0.6, 0.95), 1.0) == "yes"
    assert claims.below(RatioCI(2, 5, 0.5, 0.4, 0.6, 0.95), 1.0) == "unclear"  # too few trials
    assert claims.within(RatioCI(5, 5, 3, 2.5, 3.5, 0.95), 2, 5) == "yes"
    assert claims.within(RatioCI(5, 5, 6, 5.5, 6.5, 0.95), 2, 5) == "no"
    assert claims.within(RatioCI(5, 5, 5, 4.5, 5.5, 0.95), 2, 5) == "unclear"
    assert np.isnan(RatioCI(1, 1, 1.0, float("nan"), float("nan"), 0.0).lo)


def test_checks_on_the_papers_own_data(tmp_path):
    """The check definitions read the paper as it reads itself: on its own recorded values
    the spawn and throughput claims it states are supported; the single-value figures
    (3 and 4b) cannot decide anything; 'peak at pairs = cores' does not hold for Go even
    in the paper's data."""
    from serverbench.analysis import paperdata

    t = paperdata.paper_verdicts(tmp_path).set_index("id")["verdict"].to_dict()
    for cid in ("C3", "C4", "C6", "C7a", "C7b"):
        assert t[cid] == SUPPORTED, cid
    for cid in ("C1", "C2", "C5"):
        assert t[cid] == INCONCLUSIVE, cid  # one value per point
    assert t["C8"] == CONTRADICTED
    assert t["C9"] in (SUPPORTED, INCONCLUSIVE)
