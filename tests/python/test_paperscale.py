"""The report's first section (analysis/paperscale.py): the verdicts of the paper profile's
pieces beside a quick sweep's, or how to run them when none is committed."""

from __future__ import annotations

import json

import pandas as pd

from serverbench.analysis import paperscale


def _piece_sweep(root, name, verdicts, cpu="AMD EPYC"):
    f = root / name
    f.mkdir(parents=True)
    (f / "sweep.json").write_text(json.dumps({"host": {"cpu_model": cpu, "logical_cpus": 2}}), encoding="utf-8")
    pd.DataFrame({"id": list(verdicts), "verdict": list(verdicts.values())}).to_csv(f / "claims.csv", index=False)


def test_without_a_paper_sweep_the_section_says_how_to_run_one(tmp_path):
    text = paperscale.section({"C1": "inconclusive"}, tmp_path)
    assert "No sweep of the `paper` profile is committed yet" in text
    assert "./run_all.sh --profile paper --piece NAME" in text and "`throughput-2cores`" in text


def test_each_claim_is_judged_in_the_pieces_that_run_its_benchmark(tmp_path):
    _piece_sweep(tmp_path, "paper-pingping-20270101T000000Z", {"C1": "contradicted", "C3": "error"})
    _piece_sweep(tmp_path, "paper-pingping-20270102T000000Z", {"C1": "supported", "C2": "inconclusive"})
    _piece_sweep(tmp_path, "paper-throughput-2cores-20270103T000000Z", {"C6": "supported"}, cpu="Intel Xeon")
    _piece_sweep(tmp_path, "quick-20270104T000000Z", {"C1": "contradicted"})  # not a piece
    v = paperscale.verdicts(tmp_path)
    c1 = v[v["id"].eq("C1")]
    assert list(c1["piece"]) == ["pingping"] and list(c1["verdict"]) == ["supported"]  # the newest sweep
    assert list(c1["sweep"]) == ["paper-pingping-20270102T000000Z"]
    c6 = v[v["id"].eq("C6")].set_index("piece")["verdict"]
    assert c6.to_dict() == {"throughput-1core": paperscale.NOT_RUN, "throughput-2cores": "supported"}
    c3 = v[v["id"].eq("C3")]
    assert list(c3["piece"]) == ["spawn"] and list(c3["verdict"]) == [paperscale.NOT_RUN]
    text = paperscale.section({"C1": "inconclusive", "C6": "contradicted"}, tmp_path)
    assert "| C1 | pingping: **supported** (paper-pingping-20270102T000000Z, AMD EPYC, 2 CPUs) | inconclusive |" in text
    assert (
        "| C6 | throughput-2cores: **supported** (paper-throughput-2cores-20270103T000000Z, Intel Xeon, 2 CPUs) "
        "| contradicted |"
    ) in text
    assert "| C3 |" not in text  # a claim no committed piece judged has no row, only its place in the line below
    assert "C3, C4, C4b, C5 (`spawn`); C6, C7a, C7b, C8, C9, C11, C12 (`throughput-1core`)." in text


def test_the_paper_figures_are_drawn_from_the_committed_pieces(tmp_path):
    """Fig. 3 from the committed pingping piece; the recovery piece draws no paper figure."""
    import pytest

    from serverbench import paths

    committed = sorted(paths.repo_root().joinpath("data", "processed").glob("paper-pingping-*"))
    if not committed:
        pytest.skip("no paper-pingping sweep committed in this checkout")
    processed = paths.repo_root() / "data" / "processed"
    drawn = paperscale.draw_figures(tmp_path / "figures", processed_dir=processed)
    names = [png.name for _, png in drawn]
    pieces = {p.name.split("-")[1] for p in processed.glob("paper-*")}
    figure_of = {"pingping": "fig3_pingping", "spawn": "fig4_spawn"}
    want = {f"paper-{k}-{v}.png" for k, v in figure_of.items() if k in pieces}
    assert want <= set(names) and not any("recovery" in n for n in names), names
    assert all((tmp_path / "figures" / n).stat().st_size > 20_000 for n in names)
    assert committed[-1].name in drawn[0][0]


def test_the_readme_states_what_the_committed_pieces_decided(tmp_path):
    text = paperscale.readme_lines(tmp_path)
    assert text.startswith("No piece of the `paper` profile") and "--piece NAME" in text
    _piece_sweep(tmp_path, "paper-pingping-20270101T000000Z", {"C1": "contradicted", "C2": "supported", "C10": "x"})
    text = paperscale.readme_lines(tmp_path)
    assert "piece `pingping` (`paper-pingping-20270101T000000Z`, AMD EPYC, 2 CPUs)" in text
    assert "**C1** “Go and Erlang have lower PingPing latency" in text and ": contradicted;" in text
    assert "Still to run: `spawn`, `throughput-1core`, `throughput-2cores`" in text
