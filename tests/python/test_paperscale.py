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
        "| C6 | throughput-1core: **not run yet**; throughput-2cores: **supported** "
        "(paper-throughput-2cores-20270103T000000Z, Intel Xeon, 2 CPUs) | contradicted |"
    ) in text
    assert "Pieces without a committed sweep yet: `spawn`, `throughput-1core`." in text
