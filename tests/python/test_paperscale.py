"""The report's first section (analysis/reporting/paperscale.py): the verdicts of the paper profile's
pieces beside a quick sweep's, or how to run them when none is committed."""

from __future__ import annotations

import json

import pandas as pd

from serverbench.analysis.reporting import atscale, paperscale


def _piece_sweep(root, name, verdicts, cpu="AMD EPYC"):
    f = root / name
    f.mkdir(parents=True)
    (f / "sweep.json").write_text(json.dumps({"host": {"cpu_model": cpu, "logical_cpus": 2}}), encoding="utf-8")
    pd.DataFrame({"id": list(verdicts), "verdict": list(verdicts.values())}).to_csv(f / "claims.csv", index=False)


def test_without_a_paper_sweep_the_section_says_how_to_run_one(tmp_path):
    text = paperscale.section({"C1": "inconclusive"}, tmp_path)
    assert "No sweep of the `paper` profile is committed yet" in text
    assert "./run_all.sh --profile paper --piece NAME" in text and "`throughput-2cores`" in text


def test_each_claim_is_judged_from_every_sweep_of_the_pieces_that_run_its_benchmark(tmp_path):
    _piece_sweep(tmp_path, "paper-pingping-20270101T000000Z", {"C1": "contradicted", "C2": "inconclusive"})
    _piece_sweep(tmp_path, "paper-pingping-20270102T000000Z", {"C1": "supported", "C2": "inconclusive"})
    _piece_sweep(tmp_path, "paper-throughput-2cores-20270103T000000Z", {"C6": "supported"}, cpu="Intel Xeon")
    _piece_sweep(tmp_path, "quick-20270104T000000Z", {"C1": "contradicted"})  # not a piece
    v = paperscale.verdicts(tmp_path)
    c1 = v[v["id"].eq("C1")]
    assert list(c1["verdict"]) == ["contradicted", "supported"]  # every sweep, none replaces another
    assert list(c1["sweep"]) == ["paper-pingping-20270101T000000Z", "paper-pingping-20270102T000000Z"]
    c6 = v[v["id"].eq("C6")].set_index("piece")["verdict"]
    assert c6.to_dict() == {"throughput-1core": paperscale.NOT_RUN, "throughput-2cores": "supported"}
    c3 = v[v["id"].eq("C3")]
    assert list(c3["piece"]) == ["spawn"] and list(c3["verdict"]) == [paperscale.NOT_RUN]
    text = paperscale.section({"C1": "inconclusive", "C6": "contradicted"}, tmp_path)
    # no evidence to combine and the sweeps' own verdicts differ: said so, not the newest
    assert "| C1 | **differs between sweeps** | 0 of 2 | – | inconclusive |" in text
    assert "| C2 | **inconclusive** | 2 of 2 | – | – |" in text
    assert "| C6 | **supported** | 1 of 1 | – | contradicted |" in text
    assert (
        "* `pingping`: `paper-pingping-20270101T000000Z` (AMD EPYC, 2 CPUs; protocol unknown): C1 contradicted;" in text
    )
    assert "* `pingping`: `paper-pingping-20270102T000000Z` (AMD EPYC, 2 CPUs; protocol unknown): C1 supported;" in text
    assert "`paper-throughput-2cores-20270103T000000Z` (Intel Xeon, 2 CPUs; protocol unknown)" in text
    assert "With one sweep in a piece (`throughput-2cores`) there is no interval between sweeps" in text
    assert "| C3 |" not in text  # a claim no committed piece judged has no row, only its place in the line below
    assert "C3, C4, C4b, C5 (`spawn`); C6, C7a, C7b, C8, C9, C11, C12 (`throughput-1core`)." in text


def test_the_paper_figures_are_drawn_from_the_committed_pieces(tmp_path):
    """Each paper figure once, from the committed pieces that hold its tables (Fig. 5 from
    both core counts' pieces); the recovery piece draws no paper figure; an earlier
    `paper-*` file in the folder is replaced."""
    import pytest

    from serverbench import paths

    processed = paths.repo_root() / "data" / "processed"
    committed = paperscale.latest(processed)
    if "pingping" not in committed:
        pytest.skip("no paper-pingping sweep committed in this checkout")
    out = tmp_path / "figures"
    out.mkdir()
    (out / "paper-pingping-fig3_pingping.png").write_bytes(b"stale")
    drawn = paperscale.draw_figures(out, processed_dir=processed)
    names = [png.name for _, png in drawn]
    figure_of = {"pingping": "fig3_pingping", "spawn": "fig4_spawn", "throughput-1core": "fig5_throughput"}
    figure_of["throughput-2cores"] = "fig5_throughput"
    want = {f"paper-{v}.png" for k, v in figure_of.items() if k in committed}
    assert set(names) == want and len(names) == len(set(names)), names
    assert not (out / "paper-pingping-fig3_pingping.png").exists()
    assert all((out / n).stat().st_size > 20_000 for n in names)
    captions = dict((png.name, caption) for caption, png in drawn)
    assert committed["pingping"].name in captions["paper-fig3_pingping.png"]
    for piece in ("throughput-1core", "throughput-2cores"):
        if piece in committed:
            assert committed[piece].name in captions["paper-fig5_throughput.png"]


class _View:
    """A piece's processed tables as _Joined reads them."""

    def __init__(self, sweep_id, cpu, cores, unrunnable):
        from pathlib import Path

        self.folder = Path(sweep_id)
        self.info = {"sweep_id": sweep_id, "host": {"cpu_model": cpu}, "tables": ["throughput"]}
        self.info["unrunnable_cores"] = unrunnable
        self.summary = pd.DataFrame({"table": ["throughput"], "metric": ["m"], "cores": [cores], "median": [1.0]})
        for name in ("runs", "ratios", "spawn_max", "spawn_max_limits", "failures", "cpu_time"):
            setattr(self, name, pd.DataFrame())


def test_a_figure_from_two_pieces_keeps_each_panel_to_one_sweep_and_names_both():
    one = _View("paper-throughput-1core-1", "AMD EPYC", 1, [4, 8])
    two = _View("paper-throughput-2cores-2", "Intel Xeon", 2, [4])
    j = paperscale._Joined([one, two])
    assert sorted(j.stat("throughput", "m")["cores"]) == [1, 2]
    assert j.info["unrunnable_cores"] == [4]  # a core count is unrunnable only if no piece could run it
    assert j.info["sweep_id"] == "paper-throughput-1core-1 (AMD EPYC) and paper-throughput-2cores-2 (Intel Xeon)"
    assert j.info["host"]["cpu_model"] == "AMD EPYC / Intel Xeon"
    assert j.info["machines_differ"]
    same = paperscale._Joined([one, _View("paper-throughput-2cores-3", "AMD EPYC", 2, [])])
    assert same.info["sweep_id"] == "paper-throughput-1core-1 and paper-throughput-2cores-3"
    assert same.info["host"]["cpu_model"] == "AMD EPYC" and not same.info.get("machines_differ")


def test_two_instances_of_one_cpu_name_are_told_apart_by_their_fingerprints():
    """Both throughput pieces say "AMD EPYC", yet ran on CPU models 25/17 and 25/1: the
    caption must say so, or panel (a) against panel (b) reads as scaling with cores."""
    from serverbench.analysis.plotting import figstyle

    def on(view, fp, model):
        machine = {"cpu_family": "25", "cpu_model_number": model, "fingerprint": fp}
        view.info["manifest"] = {"machine": machine}
        return view

    one = on(_View("paper-throughput-1core-1", "AMD EPYC", 1, []), "4947c750802ff210", "17")
    two = on(_View("paper-throughput-2cores-2", "AMD EPYC", 2, []), "be685e2c202ee79f", "1")
    j = paperscale._Joined([one, two])
    assert j.info["sweep_id"] == (
        "paper-throughput-1core-1 (AMD EPYC 25/17, machine 4947c750) and "
        "paper-throughput-2cores-2 (AMD EPYC 25/1, machine be685e2c)"
    )
    assert "different machines" in figstyle._caption(j)
    same = paperscale._Joined(
        [one, on(_View("paper-throughput-2cores-3", "AMD EPYC", 2, []), "4947c750802ff210", "17")]
    )
    assert same.info["sweep_id"] == "paper-throughput-1core-1 and paper-throughput-2cores-3"
    assert "different machines" not in figstyle._caption(same)


def test_the_readme_states_what_the_committed_pieces_decided(tmp_path):
    text = paperscale.readme_lines(tmp_path)
    assert text.startswith("No piece of the `paper` profile") and "--piece NAME" in text
    _piece_sweep(tmp_path, "paper-pingping-20270101T000000Z", {"C1": "contradicted", "C2": "supported", "C10": "x"})
    text = paperscale.readme_lines(tmp_path)
    assert "Sweeps: `paper-pingping-20270101T000000Z` (AMD EPYC, 2 CPUs)." in text
    assert "**C1** “Go and Erlang have lower PingPing latency" in text
    assert (
        f": contradicted (protocol {atscale.pooling_since()}); sweeps agreeing: 1 of 1 (pingping; one sweep per piece: "
        "between-sweep spread unknown)." in text
    )
    assert "Still to run: `spawn`, `throughput-1core`, `throughput-2cores`" in text
    lead = "At the paper's own parameters (AMD EPYC, 2 CPUs; 1 sweep), of the 3 claims judged, "
    assert text.startswith(lead + "1 holds (C2), 1 does not hold (C1) and 1 is undecided (C10).")


def test_the_plain_summary_counts_a_claim_once_across_pieces(tmp_path):
    """A throughput claim judged on 1 and 2 cores counts once, from both pieces' sweeps (a
    piece where it is not testable aside); without evidence to combine, sweeps whose own
    verdicts differ are said to differ."""
    _piece_sweep(
        tmp_path,
        "paper-throughput-1core-20270101T000000Z",
        {
            "C6": "contradicted",
            "C7b": "not testable on this machine",
            "C8": "contradicted",
            "C9": "not testable on this machine",
            "C11": "error",
        },
    )
    _piece_sweep(
        tmp_path,
        "paper-throughput-2cores-20270102T000000Z",
        {
            "C6": "supported",
            "C7b": "not testable on this machine",
            "C8": "not testable on this machine",
            "C9": "not testable on this machine",
        },
        cpu="Intel Xeon",
    )
    text = paperscale.plain_summary(paperscale.at_scale(tmp_path))
    assert "(AMD EPYC, 2 CPUs; Intel Xeon, 2 CPUs; 2 sweeps)" in text
    assert "1 differs between sweeps (C6)" in text and "1 does not hold (C8)" in text
    # C11's check failed; C7a and C12 are missing from both pieces' claims.csv: none is "undecided"
    assert "2 cannot be tested on a machine this size (C7b, C9) and 3 could not be judged (C7a, C11, C12)." in text
    assert "undecided" not in text  # a failed check is not an undecided claim


def test_sweeps_agreeing_counts_each_sweep_judged_again_while_its_listing_keeps_its_own(tmp_path, monkeypatch):
    """A sweep judged by an older protocol counts in "sweeps agreeing" by its verdict
    under the protocol in force (judged again from its processed tables), not by its own; its
    own verdict stays in its listing, and the sweeps whose verdict changed are named."""
    from serverbench.analysis.reporting import rejudge

    _piece_sweep(tmp_path, "paper-pingping-20270101T000000Z", {"C1": "contradicted", "C2": "inconclusive"})
    _piece_sweep(tmp_path, "paper-pingping-20270102T000000Z", {"C1": "contradicted", "C2": "contradicted"})
    text = paperscale.section({}, tmp_path)
    assert "| C2 | **differs between sweeps** | 0 of 2 |" in text  # no tables to judge: their own verdicts
    again = {"paper-pingping-20270101T000000Z": {"C1": "contradicted", "C2": "contradicted"}}
    monkeypatch.setattr(rejudge, "verdicts", lambda folder, piece: again.get(folder.name))
    c2 = next(c for c in paperscale.at_scale(tmp_path) if c.id == "C2")
    assert rejudge.agreement(c2, tmp_path) == "0 of 2"  # c2's verdict (from its own verdicts) differs
    c1 = next(c for c in paperscale.at_scale(tmp_path) if c.id == "C1")
    assert rejudge.agreement(c1, tmp_path) == "2 of 2"
    c2.verdict = "contradicted"
    assert rejudge.agreement(c2, tmp_path) == "2 of 2"  # the older sweep's own "inconclusive" is not counted
    text = paperscale.section({}, tmp_path)
    assert (
        "`paper-pingping-20270101T000000Z` (AMD EPYC, 2 CPUs; protocol unknown): C1 contradicted; C2 inconclusive"
        in (text)
    )
    assert "C2 in `paper-pingping-20270101T000000Z` (its own, by protocol ?: inconclusive; now contradicted)" in text
    assert f"each judged again by protocol {rejudge.version()}" in text


def test_judging_a_committed_sweep_again_gives_its_own_verdicts_where_the_rules_within_a_sweep_are_unchanged():
    """Protocols 2 to the newest judge a sweep by the same rules (docs/protocol.md section 9):
    the verdicts judged again from a committed sweep's processed tables are its own then, so
    the re-judging reads the tables as the engine did; a protocol 1 sweep may differ."""
    import pytest

    from serverbench import paths
    from serverbench.analysis.reporting import rejudge

    processed = paths.repo_root() / "data" / "processed"
    if not paperscale.latest(processed):
        pytest.skip("no paper piece committed in this checkout")
    checked = 0
    for c in paperscale.at_scale(processed):
        for s, now in rejudge.now(c, processed):
            if s.protocol is not None and s.protocol >= 2:
                assert now == s.verdict, (c.id, s.sweep, s.verdict, now)
                checked += 1
    assert checked


def test_a_sweep_verdict_is_read_again_once_its_table_changed(tmp_path):
    """atscale reads each sweep's claims.csv once while it is unchanged (a report asks it
    about 1,600 times); a table rewritten since is read again, not served from memory."""
    name = "paper-pingping-20270101T000000Z"
    _piece_sweep(tmp_path, name, {"C1": "contradicted"})
    assert atscale.sweep_verdict("pingping", tmp_path / name, "C1").verdict == "contradicted"
    pd.DataFrame({"id": ["C1"], "verdict": ["supported"], "pad": ["a longer table"]}).to_csv(
        tmp_path / name / "claims.csv", index=False
    )
    assert atscale.sweep_verdict("pingping", tmp_path / name, "C1").verdict == "supported"
