"""The analysis of a protocol-5 IM sweep (tests/python/im5_fakes.py, shaped as the harness's
searches write their records): IM2 by the memory cap, IM4 by the replicated search with the
generator's headroom, IM5 by chaos's own search and loss runs with the queued-kill control;
each rule's positive control trips it. A sweep of protocol 3's design is untouched."""

from __future__ import annotations

import re

import matplotlib.pyplot as plt
import pandas as pd
import pytest

import im5_fakes as G
import im_fakes as F
from serverbench.analysis.claims import CONTRADICTED, INCONCLUSIVE, SUPPORTED, check_all
from serverbench.analysis.claims.engine import NO, UNCLEAR, YES
from serverbench.analysis.plotting import figures
from serverbench.analysis.reading.synthetic import processed_from
from serverbench.analysis.reporting import cells
from serverbench.benchmarks.im import claims_v5, design, parts_v5, report, tables_v5

MiB = 2**20


def judge(recs, cid, tmp_path):
    (v,) = check_all(processed_from(recs, tmp_path), ids={cid})
    return v


@pytest.fixture(scope="module")
def whole(tmp_path_factory):
    return processed_from(G.sweep(), tmp_path_factory.mktemp("im5"))


def test_a_sweep_shaped_as_predicted_supports_im2_im4_im5(whole):
    assert design.is_v5(whole)
    got = {v.id: v.verdict for v in check_all(whole, ids={"IM2", "IM4", "IM5"})}
    assert got == {"IM2": SUPPORTED, "IM4": SUPPORTED, "IM5": SUPPORTED}


def test_the_rules_are_protocol_5s_as_frozen():
    from serverbench import protocol

    assert 5 in protocol.versions() and (protocol.draft() or {}).get("protocol") != 5
    assert design.spec()["protocol"] == 5 and design.spec()["frozen_utc"]
    assert not design.exploratory() and design.label() == "protocol 5"
    assert design.kept_region() == pytest.approx((0.8, 0.64))
    newest = design.im()
    with protocol.in_force(4):  # a sweep judged by protocol 4 still reads protocol 5's IM rules
        assert design.spec()["protocol"] == 5 and design.im() == newest
    # the newest version's human text while 5 is the newest, then its archived copy
    want = protocol.DOC if protocol.newest() == 5 else protocol.archived(protocol.DOC, 5)
    assert design.doc() == "docs/" + want


def test_the_search_results_and_the_capacity(whole):
    cap = tables_v5.capacity(whole)
    assert cap.bound == "established" and cap.value == pytest.approx(197_403, rel=1e-4)
    r = tables_v5.rates(whole)
    assert r["go"].value == pytest.approx(32000) and r["go"].bound == "established"
    assert r["ngircd nodelay"].value > 1.9 * r["ngircd"].value  # both rows of a production server
    t = parts_v5.capacity_table(whole).set_index("row")
    assert {"ngIRCd (C), as shipped", "ngIRCd (C), TCP_NODELAY"} <= set(t.index)
    assert t.loc["Go", "share_of_capacity"] == pytest.approx(0.162105)  # 6 significant digits


def test_a_server_at_0_6_x_capacity_is_at_least_and_decides_only_where_any_higher_value_agrees(tmp_path):
    cap = 50_000.0  # Erlang's 32,000 is 0.64 x: censored ('at least'), above Go's 22,627
    recs = G.sweep(rates={"go": 22627.0, "erlang": 32000.0, "scala_akka": 8000.0}, capacity=cap)
    P = processed_from(recs, tmp_path)
    r = tables_v5.rates(P)
    assert r["erlang"].bound == "at_least" and "headroom" in r["erlang"].why
    (v,) = check_all(P, ids={"IM4"})
    assert v.verdict == CONTRADICTED  # 'at least 32,000' > 1.1 x Go's established 22,627 for any higher value
    t = parts_v5.capacity_table(P).set_index("row")
    assert t.loc["Erlang", "censored"].startswith("yes") and t.loc["Go", "censored"] == ""
    # a sensitivity SLO's rate is censored by the same rule (shown, never deciding)
    assert t.loc["Erlang", "rate_at_20ms"] == "at least 32,000" and not t.loc["Go", "rate_at_20ms"].startswith("at")
    # Go censored (0.6 x capacity) above Erlang's established rate: yes holds for any higher Go
    recs = G.sweep(rates={"go": 32000.0, "erlang": 16000.0, "scala_akka": 8000.0}, capacity=53_000.0)
    assert judge(recs, "IM4", tmp_path / "b").verdict == SUPPORTED
    # Erlang censored below Go: Go's >= 'at least 22,627' would not hold for every higher Erlang value
    recs = G.sweep(rates={"go": 32000.0, "erlang": 22627.0, "scala_akka": 8000.0}, capacity=40_000.0)
    v = judge(recs, "IM4", tmp_path / "c")
    assert v.verdict == INCONCLUSIVE and list(v.evidence["result"][:2]) == [UNCLEAR, YES]  # Akka's 8,000 below


@pytest.mark.parametrize(
    "erlang, expected",
    [(16000.0, SUPPORTED), (45255.0, CONTRADICTED), (36000.0, INCONCLUSIVE)],  # found 34,896 < 1.1 x 32,000
)
def test_im4_no_only_beyond_the_searchs_resolution(tmp_path, erlang, expected):
    recs = G.sweep(rates={"go": 32000.0, "erlang": erlang, "scala_akka": 8000.0})
    assert judge(recs, "IM4", tmp_path).verdict == expected


def test_im4_a_censored_step_stops_the_search_at_least(tmp_path):
    recs = G.sweep(rate=[r for s, v in {"go": 32000.0, "scala_akka": 8000.0}.items() for r in G.search("im_rate", s, v)]
                   + G.search("im_rate", "erlang", 90000.0, censor_at=22627.0))  # fmt: skip
    P = processed_from(recs, tmp_path)
    r = tables_v5.rates(P)["erlang"]
    assert r.bound == "at_least" and "censored" in r.why
    re = parts_v5.reruns_table(P)
    assert set(re["rerun_reason"]) == {"generator"} and (re["row"] == "Erlang").all()
    assert judge(recs, "IM4", tmp_path / "v").verdict == INCONCLUSIVE


def test_every_run_and_every_rerun_with_its_reason(tmp_path):
    recs = G.sweep(rate=G.search("im_rate", "go", 32000.0, rerun_at=G.GRID[10]) + G.search("im_rate", "erlang", 8000.0))
    P = processed_from(recs, tmp_path)
    re = parts_v5.reruns_table(P)
    assert len(re) == 1 and re["rerun_reason"].iloc[0] == "interfered" and re["row"].iloc[0] == "Go"
    runs = parts_v5.runs_table(P)
    grid = runs[(runs["search"] == "im_rate") & (runs["phase"] != "scout") & runs["final"]]
    assert (grid.groupby(["row", "step"]).size() == 3).all()  # three final runs a replicated step
    assert tables_v5.rates(P)["go"].value == pytest.approx(32000)  # the re-run's final attempt counts


def test_the_runs_table_gives_a_channel_size_to_fanout_runs_only_and_names_the_null_sink(whole):
    runs = parts_v5.runs_table(whole)
    fan = runs["search"].isin(["im_fanout", "im_fanout_capacity"])
    assert fan.any() and runs.loc[fan, "channel_size"].notna().all() and runs.loc[~fan, "channel_size"].isna().all()
    assert set(runs.loc[runs["search"] == "im_capacity", "row"]) == {"IM load generator (null sink)"}


@pytest.mark.parametrize(
    "held, expected, results",
    [
        ({"scala_akka": 19000, "go": 9000, "erlang": 12000}, SUPPORTED, [YES, YES]),
        ({"scala_akka": 9000, "go": 12000, "erlang": 5000}, CONTRADICTED, [NO, YES]),  # Go > 1.1 x Akka
        ({"scala_akka": 9000, "go": 10000, "erlang": 5000}, INCONCLUSIVE, [UNCLEAR, YES]),  # 9,514 / 8,724: < 1.1
        ({"scala_akka": 12000, "go": 19000, "erlang": 5000}, CONTRADICTED, [NO, YES]),  # any Go >= 19,000 is above
        ({"scala_akka": 19000, "go": 19000, "erlang": 5000}, INCONCLUSIVE, [UNCLEAR, YES]),  # both 'at least'
    ],
)
def test_im2_by_the_count_within_the_128_mib_cap(tmp_path, held, expected, results):
    v = judge(G.sweep(memory_held=held), "IM2", tmp_path)
    assert v.verdict == expected and list(v.evidence["result"]) == results


def test_im2s_table_shows_both_caps_and_live_bytes(whole):
    t = parts_v5.memory_table(whole).set_index("server")
    assert t.loc["Scala/Akka", "held_within_128MiB"] == "at least 19,000" and "held_within_256MiB" in t
    # the MEMORY answer's live bytes (3,000 a client), not the RSS's 6,000
    assert t.loc["Go", "live_bytes_per_client"] == pytest.approx(3000, rel=0.02)
    # every cell of the column prints alike: a median that happened to be whole printed
    # "2644" beside "3,274" (cells.fmt wrote whole floats below 10,000 without a separator)
    whole = t["live_bytes_per_client"].dropna().round()
    assert len(whole) and all("," in cells.fmt(x) for x in whole if x >= 1000)


def test_the_capacity_figure_draws_im2s_own_measures(whole):
    """Protocol 5 judges IM2 by the clients held within the cap, live bytes beside: the figure
    draws those, not the RSS per client and the grid's largest N (every server's 10,000)."""
    from serverbench.benchmarks.im import figures as im_figures

    fig = im_figures.fig_im_capacity(whole)
    live, held = fig.axes[0], fig.axes[1]
    assert "128 MiB cap" in held.get_title() and live.get_ylabel().startswith("live bytes")
    names = [t.get_text() for t in held.get_xticklabels()]
    heights = dict(zip(names, (p.get_height() for p in held.patches)))
    assert heights["Scala/Akka"] == 19000 and "≥19,000" in {t.get_text() for t in held.texts}
    assert dict(zip(names, (p.get_height() for p in live.patches)))["Go"] == pytest.approx(3000, rel=0.02)
    plt.close(fig)


def test_the_advice_row_of_im2_gives_the_number_that_decides_it(whole):
    from serverbench.benchmarks.im import report_numbers

    t = report_numbers.per_server(whole)
    row = report.advice_table(whole, t).set_index("recommendation").loc["dormant processes: Scala/Akka"]
    go, erlang, akka = row["Go / Erlang / Scala/Akka"].split(" / ")
    assert akka == "at least 19,000 clients" and go.endswith(" clients") and " B" not in go


def test_live_bytes_never_fall_back_to_rss_for_one_of_ours(tmp_path):
    recs = F.idle_part({"go": 6000, "ngircd": 9000}, rounds=2)
    for r in recs:
        if r["server_language"] == "go" and r["trial"] == 1:
            r["server"]["record"]["metrics"]["live_bytes"] = None  # no MEMORY answer in round 1
    live = parts_v5.live_bytes_per_client(processed_from(recs, tmp_path))
    assert live["go"] == pytest.approx(3000, rel=0.02)  # round 2 alone, live bytes
    assert live["ngircd"] == pytest.approx(9000, rel=0.02)  # a daemon: its RSS


@pytest.mark.parametrize(
    "chaos_rate, lost, control, expected, results",
    [
        (16000.0, {}, 5, SUPPORTED, [YES, YES]),
        (16000.0, {10: 1}, 5, CONTRADICTED, [YES, NO]),  # one message lost at 10 kills/s
        (16000.0, {1: 2, 100: 9}, 5, SUPPORTED, [YES, YES]),  # shown, not judged: other kill rates
        (16000.0, {}, 0, INCONCLUSIVE, [YES, UNCLEAR]),  # the control lost nothing: the instrument is blind
        (8000.0, {}, 5, CONTRADICTED, [NO, YES]),  # kept 0.5 <= 0.64
        (11314.0, {}, 5, INCONCLUSIVE, [UNCLEAR, YES]),  # kept 0.71: between the regions
    ],
)
def test_im5_kept_and_lost_with_the_positive_control(tmp_path, chaos_rate, lost, control, expected, results):
    recs = G.sweep(chaos={"erlang": chaos_rate}, lost=lost, control_lost=control)
    v = judge(recs, "IM5", tmp_path)
    assert v.verdict == expected and list(v.evidence["result"]) == results
    if control == 0:
        assert "control lost no message" in v.comparisons[1].why


def test_im5s_table_has_loss_per_kill_and_the_control(whole):
    t = parts_v5.chaos_table(whole).set_index("server")
    assert t.loc["Erlang", "kept"] == 1.0 and t.loc["Go", "kept"] == pytest.approx(0.353553)
    assert t.loc["Go", "lost_per_kill_at_100_per_s"] == pytest.approx(30 / 1500)
    assert t.loc["Erlang", "control_tripped"] == "yes"


def test_a_control_whose_runs_were_all_invalid_is_no_valid_run_not_not_run(tmp_path):
    """A queued-kill control whose runs all ran, each limited by the generator, reads 'no valid
    run' (not 'not run'); IM5 is not testable and says which runs were missing and why."""
    recs = G.sweep()
    slip = "generator schedule slip p99 0.005 s > schedule_slip_limit_s 0.002: sends left late"
    for r in recs:
        if r["server_language"] == "erlang" and (r.get("resolved_from") or {}).get("chaos_pick") == "queued":
            r["status"], r["status_reason"] = "invalid", slip
            r["validation"] = {"ok": False, "reason": slip}
    P = processed_from(recs, tmp_path)
    t = parts_v5.chaos_table(P).set_index("server")
    assert t.loc["Erlang", "control_tripped"] == "no valid run" and t.loc["Go", "control_tripped"] == "yes"
    (v,) = check_all(P, ids={"IM5"})
    assert v.verdict == "not testable on this machine", v.verdict
    assert "no valid queued-kill control run for Erlang" in v.why and "loss run" not in v.why, v.why
    # a search censored before any step passed is unknown, not 'none' (Pekko in that sweep)
    assert tables_v5.rate_text(tables_v5.Result(None, "at_least", "")) == "unknown: censored before any pass"
    assert tables_v5.rate_text(tables_v5.Result(None, "none", "")) == "no step decided"


def test_fanout_at_saturation(whole):
    t = parts_v5.fanout_table(whole)
    go10 = t[(t["row"] == "Go") & (t["channel_size"] == 10)].iloc[0]
    # past half the generator's own fan-out capacity in channels of 10 (12,000/s): at least
    assert go10["messages_per_s"] == "at least 8,000" and go10["deliveries_per_s"] == pytest.approx(72000)
    assert go10["censored"] == "yes"
    go100 = t[(t["row"] == "Go") & (t["channel_size"] == 100)].iloc[0]
    assert go100["messages_per_s"] == "below 1,000"  # fails at the grid's start: no headroom applies
    cap = t[t["row"].str.startswith("generator capacity")]
    assert list(cap["channel_size"]) == [10, 100] and list(t.index[: len(cap)]) == list(cap.index)


def test_the_section_and_figure_of_a_protocol_5_sweep(whole, monkeypatch):
    monkeypatch.setattr(report, "paper_scale_verdicts", lambda: {})
    blocks = report.section(whole)
    text = "\n".join(b for b in blocks if isinstance(b, str))
    assert "Protocol 5's design" in text and "draft" not in text and "certified capacity" in text
    assert sum(isinstance(b, pd.DataFrame) for b in blocks) >= 7 and "**Re-runs**: none." in text
    per = report.per_server(whole).set_index("server")
    assert per.loc["Go", "rate_at_10ms"] == "32,000" and per.loc["Erlang", "chaos_kept"] == 1.0
    # protocol 5's memory measure beside its IM2 table's (not protocol 3's RSS difference)
    assert "live_bytes_per_client" in per.columns and "bytes_per_idle_client" not in per.columns
    assert per.loc["Go", "live_bytes_per_client"] == pytest.approx(parts_v5.live_bytes_per_client(whole)["go"])
    fig = figures.draw("fig_im5_search", whole, save_files=False)
    assert fig is not None
    plt.close(fig)


def test_a_rate_no_replicated_step_met_is_said_so_not_not_run(tmp_path):
    """A server whose rate search ran but none of whose replicated steps met a sensitivity
    SLO (Go on the Intel host: every step's p99 above 5 ms) has no rate at it, and its cell
    says so, in the numbers table and in the capacity table; a server whose search did not
    run is "not run"."""
    rate = [r for s, v in {"go": 32000.0, "erlang": 16000.0}.items() for r in G.search("im_rate", s, v)]
    rate += G.search("im_rate", "scala_akka", 8000.0, pass_p99=7e-3)  # within 10 ms and 20 ms, never 5 ms
    P = processed_from(G.sweep(rate=rate), tmp_path)
    per = report.per_server(P).set_index("server")
    assert per.loc["Scala/Akka", "rate_at_10ms"] == per.loc["Scala/Akka", "rate_at_20ms"] == "8,000"
    assert per.loc["Scala/Akka", "rate_at_5ms"] == "no replicated step met 5 ms"
    assert per.loc["Go", "rate_at_5ms"] == "32,000"  # the control: met
    assert "ngIRCd (C)" not in per.index or per.loc["ngIRCd (C)", "rate_at_5ms"] == "not run"
    t = parts_v5.capacity_table(P).set_index("row")
    assert (
        t.loc["Scala/Akka", "rate_at_5ms"] == "no replicated step met 5 ms" and t.loc["Go", "rate_at_5ms"] == "32,000"
    )
    assert pd.isna(t.loc["generator (null sink): certified capacity", "rate_at_5ms"])  # no sensitivity search
    (v,) = check_all(P, ids={"IM4"})  # the claim's evidence, shown beside it: no "0/s"
    shown = [c.why for c in v.comparisons if c.config == "SLO p99 <= 5 ms" and "Akka" in c.label]
    assert shown == ["sensitivity SLO, shown: Go 32,000/s, other no replicated step met 5 ms"]


def test_a_rate_piece_shows_im5s_own_numbers_per_server(tmp_path, monkeypatch):
    """A rate piece (no grid runs) shows each server's chaos kept and IM5(b)'s loss, the
    messages lost to session kills, not "not run" (the Intel rate piece's numbers table
    once did, beside "IM5 supported") and not the loss to kills of any process."""
    loss = G.loss("erlang", {10: 4}, 5, session_lost=0) + G.loss("go", {10: 3}, 40, session_lost=2)
    P = processed_from(G.sweep(idle=[], loss=loss), tmp_path)
    assert report.T.runs(P).empty  # no grid run, as in a rate piece
    per = report.per_server(P).set_index("server")
    assert per.loc["Erlang", "chaos_kept"] == 1.0 and per.loc["Go", "chaos_kept"] == pytest.approx(
        11314 / 32000, rel=1e-3
    )
    assert per.loc["Erlang", "chaos_lost"] == 0 and per.loc["Go", "chaos_lost"] == 6  # not any-process 12 and 9
    assert per.loc["Scala/Akka", "chaos_kept"] == "not run"  # the control: no chaos search of its own
    shaken = G.sweep(idle=[], loss=loss, chaos={"erlang": 16000.0, "go": 64000.0}, capacity=100_000.0)
    censored = report.per_server(processed_from(shaken, tmp_path / "c")).set_index("server")
    assert censored.loc["Go", "chaos_kept"] == "unknown (a search censored)"  # 64,000 >= the headroom: at least
    monkeypatch.setattr(report, "paper_scale_verdicts", lambda: {})
    assert "kept 1.00, 0 lost" in report.advice_table(P, report.per_server(P)).iloc[-1]["Go / Erlang / Scala/Akka"]


def test_a_protocol_3_sweep_is_read_as_before(tmp_path):
    P = processed_from(F.sweep(), tmp_path)
    assert not design.is_v5(P)
    assert figures.draw("fig_im5_search", P, save_files=False) is None
    v = {x.id: x for x in check_all(P, ids={"IM2", "IM4"})}
    assert not any(claims_v5.RULES in c.extra for x in v.values() for c in x.comparisons)


def test_a_fanout_only_piece_renders_its_parts_and_no_empty_table(tmp_path, monkeypatch):
    """The fanout piece runs only fan-out searches: its section shows the fan-out table, no
    per-server or advice table (nothing of theirs ran) and no empty table of another part."""
    monkeypatch.setattr(report, "paper_scale_verdicts", lambda: {})
    recs = G.sweep()
    fan = [r for r in recs if (r.get("search") or {}).get("name") in ("im_fanout", "im_fanout_capacity")]
    blocks = report.section(processed_from(fan, tmp_path))
    tables = [b for b in blocks if isinstance(b, pd.DataFrame)]
    text = "\n".join(b for b in blocks if isinstance(b, str))
    assert tables and all(not t.empty for t in tables)
    assert "**Fan-out at saturation**" in text and "no part that judges a prediction" in text
    assert "**IM2" not in text and "**IM5" not in text and "certified capacity" not in text
    assert any("channel_size" in t.columns for t in tables)


def test_a_claim_decided_by_a_rule_of_its_own_lists_no_empty_region():
    """IM4's yes is the limit rule, IM5(b)'s 'zero in every run': their definitions once
    read "Regions: highest: yes <= inf; no ."; a ratio claim keeps its regions (IM1)."""
    from serverbench.analysis.claims import engine

    defs = {c.id: c.definition for c in engine.all_claims()}
    assert "Regions:" not in defs["IM4"] and "inf" not in defs["IM4"]
    assert defs["IM5"].endswith("Regions: not lower: yes >= 0.8; no <= 0.64.")  # (b)'s zero rule: no region
    assert defs["IM1"].endswith("Regions: lower: yes <= 1; no >= 1.")


def test_a_production_servers_nodelay_runs_are_a_row_of_their_own(tmp_path):
    """ngIRCd's latency runs as shipped (Nagle on: p99 ~22 ms) and with TCP_NODELAY (~0.2 ms)
    are two rows, each its own median: pooled, the whole IM sweep's numbers showed 10.9 ms,
    a p99 that no configuration had. The advice table shows both in the server's cell."""
    lat = F.latency_part({"go": 4e-4, "erlang": 2e-4, "scala_akka": 3e-4, "ngircd": 22e-3})
    fast = F.latency_part({"ngircd": 2e-4}, seed=5)
    for r in fast:
        r["server"]["record"]["runtime"] = {"nodelay": "on"}
        r["config_id"] += "/server_settings=nodelay=on"
    P = processed_from(G.sweep(latency=lat + fast), tmp_path)
    t = report.per_server(P)
    per = t.set_index("server")
    assert per.loc["ngIRCd (C), as shipped", "p99_ms"] == pytest.approx(22, rel=0.1)
    assert per.loc["ngIRCd (C), TCP_NODELAY", "p99_ms"] == pytest.approx(0.2, rel=0.1)
    found = tables_v5.rates(P)  # each row's own rate search
    slow, fast_rate = (tables_v5.rate_text(found[k]) for k in ("ngircd", "ngircd nodelay"))
    assert per.loc["ngIRCd (C), TCP_NODELAY", "rate_at_10ms"] == fast_rate != slow
    assert per.loc["ngIRCd (C), as shipped", "rate_at_10ms"] == slow
    assert per.loc["Go", "p99_ms"] == pytest.approx(0.4, rel=0.1)  # ours: one row each, as before
    cells = report.advice_table(P, t).set_index("case-study verdict")["ngIRCd (C)"]
    (im1,) = [v for k, v in cells.items() if k.startswith("IM1")]
    (im4,) = [v for k, v in cells.items() if k.startswith("IM4")]
    assert re.fullmatch(r"2\d\.\d ms; TCP_NODELAY: 0\.\d+ ms", im1), im1
    assert im4 == f"{slow}; TCP_NODELAY: {fast_rate}"
