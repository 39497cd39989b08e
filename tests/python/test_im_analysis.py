"""The IM analysis on synthetic raw records (tests/python/im_fakes.py, shaped as the harness
writes them): every claim IM1-IM5 can come out supported, contradicted and inconclusive;
IM4's limit rule with a censored side; IM5 (b) with one lost message; runs the generator
limited never count; the report's section with and without IM data; the figures; and a
sweep judged by a protocol older than the IM claims has none of them."""

from __future__ import annotations

import math

import matplotlib.pyplot as plt
import nbformat
import pandas as pd
import pytest

import im_fakes as F
from serverbench import paths
from serverbench.analysis.claims import CONTRADICTED, INCONCLUSIVE, SUPPORTED, check_all, engine
from serverbench.analysis.claims.engine import EVIDENCE_ONLY, NO, UNCLEAR, YES
from serverbench.analysis.explorer import explore
from serverbench.analysis.plotting import figures
from serverbench.analysis.reading.synthetic import processed_from, write_sweep
from serverbench.analysis.reporting import pipeline
from serverbench.benchmarks.im import claims as C
from serverbench.benchmarks.im import report, tables
from synthetic_sweeps import pingping_runs

needs_chaos_field = pytest.mark.skipif(
    not F.ALLOWS_RESOLVED_FROM, reason="the raw-record schema has no resolved_from yet (the IM harness adds it)"
)
THREE = ("go", "erlang", "scala_akka")


def verdict(recs, cid, tmp_path):
    P = processed_from(recs, tmp_path)
    (v,) = check_all(P, ids={cid})
    return v


@pytest.fixture(scope="module")
def whole(tmp_path_factory):
    return processed_from(F.sweep(), tmp_path_factory.mktemp("im"))


def test_a_whole_sweep_shaped_as_predicted_supports_every_claim(whole):
    got = {v.id: v.verdict for v in check_all(whole, ids={"IM1", "IM2", "IM3", "IM4", "IM5"})}
    want = {"IM1": SUPPORTED, "IM2": SUPPORTED, "IM3": SUPPORTED, "IM4": SUPPORTED}
    want |= {"IM5": SUPPORTED} if F.ALLOWS_RESOLVED_FROM else {"IM5": "not testable on this machine"}
    assert got == want


@pytest.mark.parametrize(
    "p99, expected",
    [
        ({"go": 1e-3, "erlang": 1e-3, "scala_akka": 3e-3}, SUPPORTED),
        ({"go": 3e-3, "erlang": 3e-3, "scala_akka": 1e-3}, CONTRADICTED),
        ({"go": 1e-3, "erlang": 3e-3, "scala_akka": 3e-3}, INCONCLUSIVE),  # Erlang = Akka: neither region
    ],
)
def test_im1_p99_at_moderate_load(tmp_path, p99, expected):
    assert verdict(F.latency_part(p99), "IM1", tmp_path).verdict == expected


def test_im1_and_im3_are_not_judged_on_figure_only_rounds(tmp_path):
    recs = F.latency_part({"go": 1e-3, "erlang": 1e-3, "scala_akka": 3e-3}, rounds=3)
    recs += F.login_part({"go": 1.0, "erlang": 1.0, "scala_akka": 2.0}, rounds=3)
    P = processed_from(recs, tmp_path)
    for v in check_all(P, ids={"IM1", "IM3"}):
        assert v.verdict == "not testable on this machine" and "only figure-only rounds" in v.why


def test_im1_leaves_out_the_runs_the_generator_limited(tmp_path):
    recs = F.latency_part({"go": 1e-3, "erlang": 1e-3, "scala_akka": 3e-3})
    for r in recs:  # Go's first four rounds limited by the generator: two pairs left
        if r["server_language"] == "go" and r["trial"] <= 4:
            r["status"], r["status_reason"] = "invalid", F.SLIP
    v = verdict(recs, "IM1", tmp_path)
    assert v.verdict == INCONCLUSIVE and "too few rounds" in v.why
    go = v.evidence[v.evidence["comparison"].str.startswith("Go")]
    assert int(go["rounds"].iloc[0]) == 2
    d = tables.latency_part(processed_from(recs, tmp_path / "again"))
    assert int(d["generator_limited"].sum()) == 4


@pytest.mark.parametrize(
    "login, expected",
    [
        ({"go": 1.0, "erlang": 1.0, "scala_akka": 2.0}, SUPPORTED),
        ({"go": 2.0, "erlang": 2.0, "scala_akka": 1.0}, CONTRADICTED),
        ({"go": 1.0, "erlang": 2.0, "scala_akka": 2.0}, INCONCLUSIVE),
    ],
)
def test_im3_login_storm(tmp_path, login, expected):
    assert verdict(F.login_part(login), "IM3", tmp_path).verdict == expected


@pytest.mark.parametrize(
    "per_client, expected",
    [
        ({"scala_akka": 2000, "go": 6000, "erlang": 5000}, SUPPORTED),
        ({"scala_akka": 6000, "go": 2000, "erlang": 2000}, CONTRADICTED),
        ({"scala_akka": 2000, "go": 2000, "erlang": 5000}, INCONCLUSIVE),
    ],
)
def test_im2_bytes_per_idle_client(tmp_path, per_client, expected):
    v = verdict(F.idle_part(per_client), "IM2", tmp_path)
    assert v.verdict == expected
    assert v.evidence["ratio"].notna().all()  # decided by the bytes, not by the largest N


@pytest.mark.parametrize(
    "fail_at, expected, rule_rows",
    [
        # Akka over the memory budget at 10,000 while Go and Erlang hold 19,000: Akka's limit established, lower
        ({"scala_akka": (10_000, "over_memory_budget")}, CONTRADICTED, 2),
        # Go over the budget at 19,000: Akka (19,000 held) >= Go's established 10,000; Erlang by its bytes
        ({"go": (19_000, "over_memory_budget")}, SUPPORTED, 1),
        # Akka over the budget at 19,000, Go's 19,000 run crashed (not the budget): 10,000 each, Go's not
        # established; Erlang over the budget at 10,000, below Akka
        (
            {
                "scala_akka": (19_000, "over_memory_budget"),
                "go": (19_000, "crashed"),
                "erlang": (10_000, "over_memory_budget"),
            },
            INCONCLUSIVE,
            2,
        ),
    ],
)
def test_im2_falls_back_to_the_limit_rule_when_memory_limits_n(tmp_path, fail_at, expected, rule_rows):
    recs = F.idle_part({"scala_akka": 2000, "go": 6000, "erlang": 5000}, fail_at=fail_at)
    v = verdict(recs, "IM2", tmp_path)
    assert v.verdict == expected
    assert int(v.evidence["comparison"].str.contains("largest N held").sum()) == rule_rows


def steps(limits, stop=None):
    return F.search_part(limits, stop)


def test_im4_sustainable_rate_from_the_search(tmp_path):
    P = processed_from(steps({"go": F.knee(32000), "erlang": F.knee(16000), "scala_akka": F.knee(8000)}), tmp_path)
    (v,) = check_all(P, ids={"IM4"})
    assert v.verdict == SUPPORTED
    slo = C.slos()[0]
    r = C.rates(P, slo)
    assert r["go"]["rate_per_s"] == pytest.approx(F.RATES[F.RATES.index(32000) + 1])  # p99 8 ms <= 10 ms
    assert r["go"]["established"] and r["erlang"]["established"]
    # the sensitivity SLOs are shown, never decide
    shown = v.evidence[v.evidence["result"] == EVIDENCE_ONLY]
    assert sorted(shown["config"].unique()) == sorted(f"SLO p99 <= {x * 1e3:g} ms" for x in C.slos()[1])
    assert len(v.evidence[v.evidence["result"] != EVIDENCE_ONLY]) == 2


def test_im4_no_when_another_is_a_grid_step_above_go(tmp_path):
    v = verdict(steps({"go": F.knee(8000), "erlang": F.knee(16000), "scala_akka": F.knee(4000)}), "IM4", tmp_path)
    assert v.verdict == CONTRADICTED
    assert list(v.evidence.loc[v.evidence["result"] != EVIDENCE_ONLY, "result"]) == [NO, YES]


@pytest.mark.parametrize(
    "limits, stop, expected",
    [
        # Erlang censored below Go: Go >= 'at least 22,627' would not hold for every higher Erlang value
        (
            {"go": F.knee(32000), "erlang": F.knee(90000), "scala_akka": F.knee(8000)},
            {"erlang": (32000, F.CPU)},
            INCONCLUSIVE,
        ),
        # Go censored below an established Erlang: 'no' would not hold for every higher Go value
        (
            {"go": F.knee(90000), "erlang": F.knee(16000), "scala_akka": F.knee(4000)},
            {"go": (8000, F.SLIP)},
            INCONCLUSIVE,
        ),
        # Erlang censored a step or more above an established Go: any higher Erlang value keeps the 'no'
        (
            {"go": F.knee(4000), "erlang": F.knee(90000), "scala_akka": F.knee(2000)},
            {"erlang": (32000, F.SLIP)},
            CONTRADICTED,
        ),
        # Go passes the whole grid (censored at its top) above both: any higher Go value keeps the 'yes'
        ({"go": F.knee(1e9), "erlang": F.knee(16000), "scala_akka": F.knee(8000)}, None, SUPPORTED),
    ],
)
def test_im4_limit_rule_with_a_censored_side(tmp_path, limits, stop, expected):
    assert verdict(steps(limits, stop), "IM4", tmp_path).verdict == expected


def test_sustainable_rate_rules():
    """tables.sustainable on its own: the leading run of passing steps, the first failure."""
    rows = [
        (1000, 1e-3, "ok", False),
        (1414, 6e-3, "ok", False),
        (2000, 15e-3, "ok", False),
        (2828, 30e-3, "ok", False),
    ]
    d = pd.DataFrame(rows, columns=["rate_per_s", "p99", "status", "generator_limited"])
    d = d.assign(step=range(len(d)), is_ok=d["status"] == "ok", lost=0, passed=None, why_not=None, status_reason=None)
    at = {slo: tables.sustainable(d, slo, 0.02, 128000) for slo in (0.005, 0.01, 0.02)}
    assert [at[s]["rate_per_s"] for s in (0.005, 0.01, 0.02)] == [1000, 1414, 2000]
    assert all(at[s]["established"] for s in at)
    lost = d.assign(lost=[0, 3, 0, 0])
    assert tables.sustainable(lost, 0.02, 0.02, 128000)["rate_per_s"] == 1000
    assert "lost 3 messages" in tables.sustainable(lost, 0.02, 0.02, 128000)["why"]
    limited = d.assign(generator_limited=[False, True, False, False])
    s = tables.sustainable(limited, 0.02, 0.02, 128000)
    assert s == {"rate_per_s": 1000.0, "established": False, "why": s["why"]} and "generator" in s["why"]
    assert C.rate_decision(s, {"rate_per_s": None, "established": True, "why": ""}, math.sqrt(2))[0] == YES
    # a step that failed but says it establishes nothing (the harness's search.establishes: a timeout) censors
    timeout = d.assign(status=["ok", "timeout", "ok", "ok"], is_ok=[True, False, True, True])
    timeout = timeout.assign(passed=[True, False, None, None], establishes=[None, False, None, None])
    s = tables.sustainable(timeout, 0.02, 0.02, 128000)
    assert (s["rate_per_s"], s["established"]) == (1000.0, False) and "timeout" in s["why"]
    assert tables.sustainable(timeout.assign(establishes=[None, True, None, None]), 0.02, 0.02, 128000)["established"]


@needs_chaos_field
@pytest.mark.parametrize(
    "kept, lost, expected, results",
    [
        (1.0, [0] * 6, SUPPORTED, [YES, YES]),
        (1.0, [0, 0, 1, 0, 0, 0], CONTRADICTED, [YES, NO]),  # one message lost in one round
        (0.5, [0] * 6, CONTRADICTED, [NO, YES]),  # half the throughput kept
        (1.0, [0] * 3, INCONCLUSIVE, [UNCLEAR, UNCLEAR]),  # three rounds: no interval at 90 %, too few to count
    ],
)
def test_im5_chaos_costs_erlang_nothing(tmp_path, kept, lost, expected, results):
    v = verdict(F.chaos_part("erlang", kept, lost), "IM5", tmp_path)
    assert v.verdict == expected
    assert list(v.evidence["result"]) == results


@needs_chaos_field
def test_im5_counts_only_valid_chaos_rounds(tmp_path):
    recs = F.chaos_part("erlang", 1.0, [0, 0, 0, 0, 0, 5])
    for r in recs:  # the round that lost messages was limited by the generator: not the server's result
        if r["trial"] == 6 and r["server"]["record"]["params"]["chaos_interval_ms"]:
            r["status"], r["status_reason"] = "invalid", F.CPU
    v = verdict(recs, "IM5", tmp_path)
    assert v.comparisons[1].extra == {"messages_lost": 0, "rounds_with_loss": 0, "rounds": 5, "rate_per_s": "2,000/s"}
    assert v.comparisons[1].result == UNCLEAR


def test_a_login_storm_that_never_registered_everyone_says_how_many_did(tmp_path):
    """ngIRCd left about 2 % of a 10,000-client storm unregistered in every round of the
    committed sweep (login_s null): the table said "not run"."""
    recs = F.login_part({"go": 0.5, "erlang": 1.0, "scala_akka": 4.0, "ngircd": 1.0}, rounds=3)
    for r in recs:
        if r["server_language"] == "ngircd":
            r["metrics"].update(login_s=None, clients_registered=9800 - r["trial"], registration_failures=200)
    t = report.per_server(processed_from(recs, tmp_path)).set_index("server")
    assert t.loc["ngIRCd (C)", "login_s"] == "unfinished: 9,798 of 10,000 registered"
    assert t.loc["Go", "login_s"] == pytest.approx(0.5, rel=0.2)


@needs_chaos_field
def test_im5s_findings_line_gives_the_lost_count_its_result(tmp_path):
    """A comparison without a ratio (the lost-message count) beside one with: the first
    screen printed "Erlang messages lost with chaos ;" with nothing after it."""
    from serverbench.analysis.reporting import findings

    line = findings.claim_line(verdict(F.chaos_part("erlang", 1.0, [0] * 6), "IM5", tmp_path))
    assert "Erlang messages lost with chaos: yes" in line
    assert "deliveries_per_s with chaos / without 1" in line


def test_the_section_with_im_data(whole, monkeypatch):
    monkeypatch.setattr(report, "paper_scale_verdicts", lambda: {"C1": SUPPORTED})
    blocks = report.section(whole)
    text = "\n".join(b for b in blocks if isinstance(b, str))
    assert "protocol 3" in text and "sha256" in text
    table = next(b for b in blocks if isinstance(b, pd.DataFrame))
    assert list(table["recommendation"].str.split(":").str[0]) == [
        "latency",
        "dormant processes",
        "spawning",
        "throughput",
        "chaos costs Erlang no throughput, loses no message (ref. [4])",
    ]
    assert table["case-study verdict"].iloc[0] == "IM1 supported"
    assert "C1 supported (paper scale)" in table["micro-benchmark verdict"].iloc[0]
    assert {"ngIRCd (C)", "InspIRCd (C++)"} <= set(table.columns)
    assert table["ngIRCd (C)"].iloc[4] == "no session processes"
    if F.ALLOWS_RESOLVED_FROM:  # Go / Erlang / Akka under chaos: the fakes' Erlang keeps all, loses none
        assert table["Go / Erlang / Scala/Akka"].iloc[4].split(" / ")[1] == "kept 1.00, 0 lost"
    assert table["ngIRCd (C)"].iloc[0].endswith(" ms")
    per = [b for b in blocks if isinstance(b, pd.DataFrame)][1]
    assert list(per["server"])[-2:] == ["ngIRCd (C)", "InspIRCd (C++)"]  # the anchors last
    assert "no session processes" in text


def test_the_section_without_im_data_is_one_line(tmp_path, monkeypatch):
    P = processed_from(pingping_runs({"go": [1.0, 1.1], "erlang": [1.2, 1.3]}), tmp_path)
    monkeypatch.setenv("SERVERBENCH_DATA", str(tmp_path / "no-data"))  # no IM sweep committed
    assert report.section(P) == [report.NO_SWEEP]
    monkeypatch.delenv("SERVERBENCH_DATA")  # the committed IM sweep: its verdicts, never "ran no"
    if report.committed_sweeps():
        text = report.section(P)[0]  # each prediction's sweep, the one that judged it or ran its part
        assert "ran no" not in text and all(name in text for name, _, _ in report.picked().values())
    assert all(figures.draw(n, P, save_files=False) is None for n in ("fig_im_latency", "fig_im_capacity"))
    ids = {v.id for v in check_all(P)}  # judged by protocol 1 (started before the IM claims existed): none of them
    assert not ids & {"IM1", "IM2", "IM3", "IM4", "IM5"} and "C1" in ids
    im1 = next(c for c in engine.all_claims() if c.id == "IM1")
    v = engine.evaluate(im1, P)  # asked directly: not testable, saying why, never an error
    assert v.verdict.startswith("not testable") and "not in protocol 1" in v.why and v.protocol == 1
    assert {"IM1", "IM5"} <= {v.id for v in check_all(processed_from(F.login_part({"go": 1.0}), tmp_path / "im"))}


def test_the_figures_draw_from_the_records_and_skip_a_sweep_without_them(whole):
    for name in ("fig_im_capacity", "fig_im_fanout_chaos"):
        fig = figures.draw(name, whole, save_files=False)
        assert fig is not None and len(fig.axes) == 3
        plt.close(fig)
    lat = figures.draw("fig_im_latency", whole, save_files=False)
    ax = lat.axes[0]
    hollow = [ln for ln in ax.lines if ln.get_markerfacecolor() == "none" and len(ln.get_xdata())]
    assert not hollow  # no run of this sweep was limited by the generator
    plt.close(lat)


def test_the_explorer_lists_and_compares_the_im_tables(tmp_path):
    recs = F.latency_part({"go": 1e-3, "ngircd": 2e-3}, rounds=3) + F.search_part({"go": F.knee(2000)})
    s = explore.load_sweep(write_sweep(tmp_path / F.SWEEP, recs, {"profile": {"name": "im"}}))
    assert {"im", "im_rate"} <= set(explore.tables())
    assert explore.x_axis("im") == "rate_per_s" and explore.default_metric("im_rate") == "latency_p99_s"
    for table, configs in (("im", 2), ("im_rate", 5)):  # two servers at 4,000/s; Go's steps to 4,000/s
        c = explore.compare(s, s, table)
        assert len(c) == configs and (c["ratio"] == 1.0).all()


def test_the_notebook_is_thin_parameterised_and_clean():
    nb = nbformat.read(paths.repo_root() / "notebooks" / "im.ipynb", as_version=4)
    nbformat.validate(nb)
    (params,) = [c for c in nb.cells if "parameters" in c.metadata.get("tags", [])]
    ns: dict = {}
    exec(params.source, ns)  # noqa: S102  (plain literals: the cell runs on its own)
    assert ns["profile"] == "im" and ns["sweep_id"] is None and ns["paper_dir"] is None
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert all(c.outputs == [] and c.execution_count is None for c in code), "commit notebooks without outputs"
    assert sum(len(c.source.splitlines()) for c in code) < 40 and "harness" not in "".join(c.source for c in code)


def test_every_sweep_with_im_runs_gets_the_notebook_whatever_its_profile(tmp_path, monkeypatch):
    monkeypatch.setenv("SERVERBENCH_DATA", str(tmp_path / "data"))
    for name, ran in (("quick-x", ["pingping", "im", "im_rate"]), ("quick-y", ["pingping"]), ("quick-z", None)):
        write_sweep(tmp_path / "data" / "raw" / name, [], None if ran is None else {"benchmarks": ran})
    assert pipeline.benchmark_notebooks("quick-x") == ("im",)
    assert pipeline.benchmark_notebooks("quick-y") == () == pipeline.benchmark_notebooks("quick-z")


@pytest.mark.notebook
def test_the_notebook_runs_on_a_synthetic_sweep(tmp_path, monkeypatch):
    import papermill as pm

    monkeypatch.setenv("SERVERBENCH_DATA", str(tmp_path / "data"))
    raw = write_sweep(tmp_path / "data" / "raw" / F.SWEEP, F.sweep(), {"profile": {"name": "im"}})
    out = tmp_path / "im.ipynb"
    pm.execute_notebook(
        str(paths.repo_root() / "notebooks" / "im.ipynb"),
        str(out),
        parameters={"raw_folder": str(raw), "paper_dir": str(tmp_path / "paper")},
        kernel_name=pipeline.KERNEL_NAME,
        progress_bar=False,
        cwd=str(paths.repo_root() / "notebooks"),
    )
    text = out.read_text(encoding="utf-8")
    assert (
        "IM1" in text
        and TITLE_WORDS in text
        and "error"
        not in {o.get("output_type") for c in nbformat.read(out, as_version=4).cells for o in c.get("outputs", [])}
    )
    assert (tmp_path / "paper" / "figures" / "fig_im_latency.png").exists()


TITLE_WORDS = "Does the paper"


def test_the_readme_block_says_what_and_how_without_numbers_until_a_sweep(tmp_path, whole, monkeypatch):
    text = report.readme_block(tmp_path)  # no processed IM sweep there
    assert report.RUN in text and "docs/im.md" in text and "No IM sweep is committed yet" in text
    assert all(f"**IM{i}**" in text for i in range(1, 6)) and "protocol 3" in text
    assert not any(ch.isdigit() for ch in text.split("analyse it).")[1])  # no numbers before a sweep
    from serverbench.analysis.claims import write_claims

    write_claims(whole)  # the synthetic sweep as a committed IM sweep
    info = whole.folder / "sweep.json"
    info.write_text(info.read_text(encoding="utf-8").replace('"synthetic"', '"im"'), encoding="utf-8")
    text = report.readme_block(whole.folder.parent)
    name = whole.folder.name
    assert f"IM1 supported (`{name}`, protocol 3); IM2 supported (`{name}`, protocol 3)" in text  # no report yet
    # a report rendered from it (its report.json) is linked from README, relative to README
    paper = tmp_path / "repo" / "paper"
    (paper / "im").mkdir(parents=True)
    pipeline.write_report_info(paper / "im", "im", name, pdf=False)
    monkeypatch.setattr(paths, "paper_dir", lambda: paper)
    text = report.readme_block(whole.folder.parent)
    assert f"IM1 supported ([`{name}`](paper/im/report.html), protocol 3)" in text
    # a newer piece that cannot judge IM1 leaves IM1 to the older sweep and decides IM4 itself
    import shutil

    piece = whole.folder.parent / "im-rate-29991231T000000Z"
    shutil.copytree(whole.folder, piece)
    t = pd.read_csv(piece / "claims.csv")
    t.loc[t["id"] == "IM1", "verdict"] = "not testable on this machine"
    t.loc[t["id"] == "IM4", "verdict"] = "inconclusive"
    t.to_csv(piece / "claims.csv", index=False)
    text = report.readme_block(whole.folder.parent)
    assert f"IM1 supported ([`{name}`]" in text and "IM4 inconclusive (`im-rate-29991231T000000Z`, protocol 3)" in text


def test_a_reduced_slice_is_shown_at_its_own_sizes_and_decides_nothing(tmp_path, monkeypatch):
    """quick's IM slice (other rates and sizes, 2 rounds): no claim is judged on it, and the
    section's numbers say at which sizes they were measured."""
    monkeypatch.setattr(report, "paper_scale_verdicts", lambda: {})
    small = F.latency_part({"go": 1e-3, "erlang": 1e-3, "scala_akka": 2e-3}, rounds=2, rate=1000.0)
    idle = [r for r in F.idle_part({"go": 5000, "scala_akka": 2000, "erlang": 4000}, rounds=2) if r["trial"] <= 2]
    login = F.login_part({"go": 0.1, "erlang": 0.1, "scala_akka": 0.3}, rounds=2)
    for r in small + idle + login:  # a tenth of the sizes
        n = r["params"]["clients"] // 10
        r["params"]["clients"] = r["metrics"]["clients_registered"] = r["metrics"]["clients_connected"] = n
    idle = [r for r in idle if r["params"]["clients"] < 1900]
    recs = small + idle + login
    P = processed_from(recs, tmp_path)
    V = {v.id: v for v in check_all(P, ids={"IM1", "IM2", "IM3"})}
    assert all(v.verdict == "not testable on this machine" for v in V.values())
    assert "4,000/s" in V["IM1"].why and "10,000" in V["IM3"].why and "10,000" in V["IM2"].why
    t = report.per_server(P)
    assert (
        "at 1,000 messages/s with 100 clients" in t.attrs["where"]
        and "(RSS at 1,000 idle clients - at 100)" in t.attrs["where"]
    )
    assert t.set_index("server").loc["Go", "p99_ms"] == pytest.approx(1.0, rel=0.1)
