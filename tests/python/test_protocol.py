"""The protocol (spec/protocol.json, docs/protocol.md; superseded versions kept): frozen by version and hash; every
encoding recovers its source's conclusion from the source's own numbers; and the encoding
fixes it made (E1/E2 over the source's servers only, C10's "3 times", C4's regime at the
N that decides) each fail on the encoding they replaced."""

from __future__ import annotations

import copy
import json
import shutil

import numpy as np
import pytest

import synthetic_sweeps
from serverbench import paths, protocol
from serverbench.analysis import claims
from serverbench.analysis.claims import CONTRADICTED, INCONCLUSIVE, NOT_TESTABLE, SUPPORTED, sourcedata
from serverbench.analysis.reading import synthetic

ROUNDS = 8


def test_the_protocol_file_has_the_hash_recorded_for_its_version():
    assert protocol.verify() == protocol.sha256()
    known = json.loads((paths.spec_dir() / protocol.VERSIONS).read_text(encoding="utf-8"))
    assert str(protocol.version()) in known
    # protocol 1 stays, byte for byte as frozen, for the sweeps it judged
    assert known["1"]["spec"] == "d773bd8aacf0453bdd40fd52e843ca78b7ce865c56f4fac5ff9bbb8b7ccea6c2"
    assert protocol.sha256(1) == known["1"]["spec"]


def _copy_protocol(tmp_path):
    spec, docs = tmp_path / "spec", tmp_path / "docs"
    spec.mkdir()
    docs.mkdir()
    for v in protocol.versions():
        newest = v == protocol.newest()
        shutil.copy(
            paths.spec_dir() / (protocol.FILE if newest else protocol.archived(protocol.FILE, v)),
            spec / (protocol.FILE if newest else protocol.archived(protocol.FILE, v)),
        )
        name = protocol.DOC if newest else protocol.archived(protocol.DOC, v)
        shutil.copy(paths.spec_dir().parent / "docs" / name, docs / name)
    shutil.copy(paths.spec_dir() / protocol.VERSIONS, spec / protocol.VERSIONS)
    return spec, docs


def test_a_rule_changed_without_a_new_version_fails(tmp_path):
    spec_dir, docs_dir = _copy_protocol(tmp_path)
    assert protocol.verify(spec_dir, docs_dir)
    spec = json.loads((spec_dir / protocol.FILE).read_text(encoding="utf-8"))
    old_text = (spec_dir / protocol.FILE).read_text(encoding="utf-8")
    spec["margin"]["factor"] = 1.2
    (spec_dir / protocol.FILE).write_text(json.dumps(spec, indent=2), encoding="utf-8")
    with pytest.raises(protocol.ProtocolError, match="without a new version"):
        protocol.verify(spec_dir, docs_dir)
    v = spec["protocol"]
    spec["protocol"] += 1  # a new version is accepted once its hashes are recorded and the old one kept
    text = json.dumps(spec, indent=2)
    (spec_dir / protocol.FILE).write_text(text, encoding="utf-8")
    with pytest.raises(protocol.ProtocolError):
        protocol.verify(spec_dir, docs_dir)
    (spec_dir / protocol.archived(protocol.FILE, v)).write_text(old_text, encoding="utf-8")
    shutil.copy(docs_dir / protocol.DOC, docs_dir / protocol.archived(protocol.DOC, v))
    known = json.loads((spec_dir / protocol.VERSIONS).read_text(encoding="utf-8"))
    known[str(spec["protocol"])] = {
        "spec": protocol.hashlib.sha256(text.encode()).hexdigest(),
        "doc": known[str(v)]["doc"],
    }
    (spec_dir / protocol.VERSIONS).write_text(json.dumps(known), encoding="utf-8")
    assert protocol.verify(spec_dir, docs_dir)


def test_the_human_text_changed_without_a_new_version_fails(tmp_path):
    spec_dir, docs_dir = _copy_protocol(tmp_path)
    doc = docs_dir / protocol.DOC
    doc.write_text(doc.read_text(encoding="utf-8").replace("m = 1.25", "m = 1.2", 1), encoding="utf-8")
    with pytest.raises(protocol.ProtocolError, match=r"docs/protocol.md .*without a new version"):
        protocol.verify(spec_dir, docs_dir)


def test_a_superseded_version_edited_fails(tmp_path):
    spec_dir, docs_dir = _copy_protocol(tmp_path)
    old = spec_dir / protocol.archived(protocol.FILE, 1)
    old.write_text(old.read_text(encoding="utf-8").replace('"alpha": 0.05', '"alpha": 0.1'), encoding="utf-8")
    with pytest.raises(protocol.ProtocolError, match="protocol-1.json"):
        protocol.verify(spec_dir, docs_dir)


def test_each_sweep_is_judged_by_the_version_in_force_when_it_started():
    frozen = {v: protocol._load(None if v == protocol.newest() else v)["frozen_utc"] for v in protocol.versions()}
    assert protocol.version_for(None) == 1
    assert protocol.version_for("2026-11-21T13:45:51Z") == 1  # older than every freeze: version 1, exploratory
    assert protocol.version_for("2026-11-28T00:40:22Z") == 1  # after protocol 1's freeze, before protocol 2's
    for v in protocol.versions()[1:]:  # just after each freeze, that version (until the next one)
        assert protocol.version_for(frozen[v].replace("Z", ".5Z")) == v
        assert protocol.version_for(frozen[v]) == v - 1  # the freeze's own second: still the older one
    with protocol.in_force(1):
        assert protocol.version() == 1 and "reruns" not in protocol.load()
        with pytest.raises(KeyError, match="later version"):
            protocol.warmup_rule()
    assert protocol.version() == protocol.newest()


def test_order_words_have_their_no_region_at_1_from_protocol_2():
    """Decided from the words (docs/protocol.md section 6): "lower" is contradicted by a
    significant difference the wrong way; a margin word keeps its gap of one factor."""
    with protocol.in_force(1):
        assert protocol.region("C1").no() == (0.0, pytest.approx(1.25))
    with protocol.in_force(2):
        assert protocol.region("C1").no() == (0.0, 1.0)
        assert protocol.region("C7a").no() == (1.0, np.inf)
        assert protocol.region("C8").yes() == (0.0, pytest.approx(1.25))  # the source's own 'peak' (section 6)
        assert protocol.region("C8").no() == (0.0, pytest.approx(1.5625))
        assert protocol.region("C2").no() == (pytest.approx(0.64), pytest.approx(1.5625))  # margin: gap kept
        assert protocol.region("E3").no() == (pytest.approx(0.64), 1.0)  # "slightly lower": its order end at 1


def test_a_sweep_judged_by_protocol_1_says_so_and_a_later_one_by_protocol_2(tmp_path):
    """The engine enters the version in force when the sweep started: Erlang/Akka about 1.07,
    significantly the wrong way for 'lower' but by less than the margin, is unclear under
    protocol 1 (C1 inconclusive) and no under protocol 2 (C1 contradicted)."""
    rng = np.random.default_rng(3)
    times = {"go": _times(0.5, rng), "erlang": _times(1.07, rng), "scala_akka": _times(1.0, rng)}
    after = protocol._load(2)["frozen_utc"].replace("Z", ".5Z")
    got = {}
    for name, started in (("before", "2026-11-28T00:40:22Z"), ("after", after)):
        recs = synthetic_sweeps.pingping_runs(times, started_utc=started)
        row = claims.claims_table([claims.check(synthetic.processed_from(recs, tmp_path / name), "C1")]).iloc[0]
        got[name] = (int(row["protocol"]), row["verdict"])
    assert got == {"before": (1, INCONCLUSIVE), "after": (2, CONTRADICTED)}


def test_every_protocol_claim_has_one_encoding_and_every_encoding_a_protocol_entry():
    assert [c.id for c in claims.all_claims()] == list(protocol.claim_ids())


def test_holm_can_decide_every_claim_at_the_design_rounds():
    """With n rounds the best one-sided p is 2^-n: Holm's first step over k comparisons
    needs it <= alpha / k, so the design must allow the claims' comparisons on quick."""
    assert 2.0 ** -protocol.rounds_deciding() <= protocol.alpha() / 12


def test_every_encoding_recovers_its_sources_conclusion_from_the_sources_numbers(paper_verdicts):
    """The source published one value per point: each claim's rule applied to those
    values must give what the source concluded (supported), except where the source's
    numbers are not in data/reference, which the protocol names."""
    absent = protocol.load()["source_numbers"]["not_in_reference"]
    got = {**dict(zip(*paper_verdicts[["id", "verdict"]].T.values))}
    got.update(dict(zip(*sourcedata.source_verdicts()[["id", "verdict"]].T.values)))
    assert set(got) == set(protocol.claim_ids())
    for cid, verdict in got.items():
        assert verdict == (NOT_TESTABLE if cid in absent else SUPPORTED), (cid, verdict)


def test_the_paper_reference_table_shows_c1_and_c2_from_the_papers_medians(paper_verdicts):
    """The committed table (data/processed/paper-reference) no longer says 'too few trials'
    for C1 and C2: the paper's own values give Go/Akka 0.51-0.61 and Go/Erlang 0.88-1.01."""
    t = paper_verdicts.set_index("id")
    assert t.loc["C1", "verdict"] == SUPPORTED and "0.508" in t.loc["C1", "numbers"]
    assert t.loc["C2", "verdict"] == SUPPORTED and "0.876" in t.loc["C2", "numbers"]


def _times(center: float, rng, n: int = ROUNDS) -> list[float]:
    return list(center * (1 + 0.01 * rng.standard_normal(n)))


def _echo_template() -> dict:
    for line in (paths.repo_root() / "data" / "raw" / "stab-r1" / "runs.jsonl").open(encoding="utf-8"):
        r = json.loads(line)
        if r["benchmark"] == "echo_flood" and r["status"] == "ok" and r["params"].get("mode") == "flood":
            return r
    raise AssertionError("the committed stab-r1 sweep has no ok echo_flood flood run")


def _echo(times: dict) -> list[dict]:
    """{(server, N, D): [seconds per round]} -> flood records, load generator unsaturated."""
    t, out = _echo_template(), []
    for (s, n, d), secs in times.items():
        for i, e in enumerate(secs):
            r = copy.deepcopy(t)
            r.update(sweep_id="synthetic-echo", trial=i + 1, server_language=s)
            r["params"].update(connections=n, bytes_per_connection=d)
            r["config_id"] = f"echo_flood/c/fair/c1/bytes_per_connection={d},connections={n}/server_language={s}"
            r["metrics"].update(elapsed_s=e, client_cpu_share=0.5)
            r["server"]["language"] = s
            out.append(r)
    return out


def test_e1_and_e2_are_decided_only_over_the_servers_the_source_ran(tmp_path):
    """A server the 2010 sweep never ran (scala_akka) is slower than node.js at 512 KiB and
    grows differently at 32 KiB: it must not decide E1 or E2 (the old encodings compared
    every server of the sweep, so E2 said 'no': node.js was not the slowest)."""
    rng = np.random.default_rng(3)
    big, k32, k512 = 16384, 32768, 524288
    flood = {("c", big, k512): 1.0, ("twisted", big, k512): 1.5, ("eventlet", big, k512): 1.4}
    flood |= {("nodejs", big, k512): 2.5, ("scala_akka", big, k512): 6.0}
    for s, g in (("c", 10.0), ("nodejs", 10.5), ("twisted", 9.8), ("eventlet", 10.2), ("scala_akka", 40.0)):
        flood |= {(s, 64, k32): 0.1, (s, 1024, k32): 0.1 * g}
    P = synthetic.processed_from(_echo({k: _times(v, rng) for k, v in flood.items()}), tmp_path)
    for cid in ("E1", "E2"):
        v = claims.check(P, cid)
        assert v.verdict == SUPPORTED, (cid, v.why)
        assert not v.evidence["comparison"].str.contains("scala_akka").any()


def test_c10_tests_three_times_with_its_declared_bounds(tmp_path):
    """Scala actors 1.5x and 6x slower than Akka are both 'Akka reduces latency', but not
    '3 times': the old encoding (the direction only) supported both."""
    rng = np.random.default_rng(5)
    lo, hi = protocol.region("C10").yes()
    assert lo == pytest.approx(2.4) and hi == pytest.approx(3.75)
    for actors, expected in ((1.5, CONTRADICTED), (3.0, SUPPORTED), (6.0, CONTRADICTED)):
        recs = synthetic_sweeps.pingping_runs({"scala_actors": _times(actors, rng), "scala_akka": _times(1.0, rng)})
        v = claims.check(synthetic.processed_from(recs, tmp_path / str(actors)), "C10")
        assert v.verdict == expected, (actors, v.summary)


def test_c4_regime_names_the_n_that_decides_it(tmp_path):
    """A max-processes search reaching 2,000,000 does not decide C4 (its steps have no
    rounds); the regime names the fixed N that does, 100,000 (the old text took the
    largest N of either table)."""
    rng = np.random.default_rng(11)
    times = {
        (lang, n): _times(t * n / 1e5, rng)
        for n in (10_000, 100_000)
        for lang, t in (("erlang", 0.1), ("go", 0.2), ("scala_akka", 0.5))
    }
    recs = synthetic_sweeps.spawn_runs(times) + synthetic_sweeps.search_runs(
        {lang: [(500_000, 1.0), (1_000_000, 2.0), (2_000_000, "over_memory_budget")] for lang in ("erlang", "go")}
    )
    v = claims.check(synthetic.processed_from(recs, tmp_path), "C4")
    assert v.verdict == SUPPORTED, v.summary
    assert "100,000" in v.regime and "2,000,000" not in v.regime and "1,000,000" not in v.regime


def test_every_verdict_carries_its_sensitivity_and_protocol_version(tmp_path):
    rng = np.random.default_rng(2)
    # Go/Akka = 0.95: 'lower' (below 1) with the normal margin; the no region >= 1.25 is far
    recs = synthetic_sweeps.pingping_runs(
        {"go": _times(0.95, rng), "erlang": _times(0.95, rng), "scala_akka": _times(1.0, rng)}
    )
    t = claims.claims_table([claims.check(synthetic.processed_from(recs, tmp_path), "C1")])
    row = t.iloc[0]
    assert row["protocol"] == protocol.version_for("2026-01-01T00:00:00Z") == 1  # synthetic runs: before every freeze
    assert {"verdict_margin_x0.5", "verdict_margin_x2"} <= set(t.columns)
    assert row["verdict"] == SUPPORTED


def test_deviations_are_listed_outside_the_hashed_text_for_the_newest_version():
    """docs/protocol.md section 11 points to an append-only list that needs no new version."""
    doc = (paths.spec_dir().parent / "docs" / protocol.DOC).read_text(encoding="utf-8")
    assert "(protocol-deviations.md)" in doc
    listed = (paths.spec_dir().parent / "docs" / "protocol-deviations.md").read_text(encoding="utf-8")
    assert f"## Protocol {protocol.newest()}" in listed


def test_a_protocol_override_that_is_not_there_is_named(monkeypatch, tmp_path):
    """SERVERBENCH_PROTOCOL pointing nowhere: one error naming the variable, not a traceback
    from open() (the CLI maps it to exit 2)."""
    monkeypatch.setenv(protocol.ENV, str(tmp_path / "missing.json"))
    with pytest.raises(protocol.ProtocolError, match="SERVERBENCH_PROTOCOL=.*missing.json: no such file"):
        protocol.newest()


def _write_draft(spec_dir, docs_dir, number, mark=protocol.DRAFT_MARK):
    d = json.loads((spec_dir / protocol.FILE).read_text(encoding="utf-8"))
    d.update(protocol=number, frozen_utc=None)
    (spec_dir / protocol.DRAFT).write_text(json.dumps(d, indent=2) + "\n", encoding="utf-8")
    text = f"# Protocol {number} ({mark})\n\n<!-- draft -->\nOnly a draft says this.\n<!-- /draft -->\n\nRules.\n"
    (docs_dir / "protocol-draft.md").write_text(text, encoding="utf-8")


def test_a_draft_is_the_next_version_unfrozen_and_judges_no_sweep():
    d = protocol.draft()
    if d is None:
        pytest.skip("no protocol draft is being written")
    assert d["protocol"] == protocol.newest() + 1 and d["frozen_utc"] is None
    assert d["protocol"] not in protocol.versions()  # version_for can never pick it
    assert protocol.version_for("2999-01-01T00:00:00Z") == protocol.newest()
    assert protocol.designing("im") == d["im"]


def test_freeze_moves_the_newest_version_aside_and_records_the_draft(tmp_path):
    spec_dir, docs_dir = _copy_protocol(tmp_path)
    old_v = protocol.newest()
    old_spec, old_doc = (spec_dir / protocol.FILE).read_bytes(), (docs_dir / protocol.DOC).read_bytes()
    _write_draft(spec_dir, docs_dir, old_v + 1)
    assert protocol.freeze("2030-01-02T03:04:05Z", spec_dir, docs_dir) == old_v + 1
    assert (spec_dir / protocol.archived(protocol.FILE, old_v)).read_bytes() == old_spec
    assert (docs_dir / protocol.archived(protocol.DOC, old_v)).read_bytes() == old_doc
    new = json.loads((spec_dir / protocol.FILE).read_text(encoding="utf-8"))
    assert (new["protocol"], new["frozen_utc"]) == (old_v + 1, "2030-01-02T03:04:05Z")
    assert (docs_dir / protocol.DOC).read_text(
        encoding="utf-8"
    ) == f"# Protocol {old_v + 1} (frozen 2030-01-02T03:04:05Z)\n\nRules.\n"
    assert not (spec_dir / protocol.DRAFT).exists()
    assert protocol.verify(spec_dir, docs_dir)  # both new hashes recorded, the old ones intact


@pytest.mark.parametrize("number, mark", [(0, protocol.DRAFT_MARK), (1, "draft")])
def test_freeze_refuses_a_draft_of_another_number_or_without_its_mark_and_changes_nothing(tmp_path, number, mark):
    spec_dir, docs_dir = _copy_protocol(tmp_path)
    _write_draft(spec_dir, docs_dir, protocol.newest() + number, mark)
    before = {p.name: p.read_bytes() for p in [*spec_dir.iterdir(), *docs_dir.iterdir()]}
    with pytest.raises(protocol.ProtocolError, match="draft"):
        protocol.freeze("2030-01-02T03:04:05Z", spec_dir, docs_dir)
    assert {p.name: p.read_bytes() for p in [*spec_dir.iterdir(), *docs_dir.iterdir()]} == before


def test_the_draft_being_written_freezes_cleanly(tmp_path):
    if protocol.draft() is None:
        pytest.skip("no protocol draft is being written")
    spec_dir, docs_dir = _copy_protocol(tmp_path)
    shutil.copy(paths.spec_dir() / protocol.DRAFT, spec_dir / protocol.DRAFT)
    shutil.copy(paths.spec_dir().parent / "docs" / "protocol-draft.md", docs_dir / "protocol-draft.md")
    v = protocol.freeze("2030-01-02T03:04:05Z", spec_dir, docs_dir)
    doc = (docs_dir / protocol.DOC).read_text(encoding="utf-8")
    assert v == protocol.newest() + 1 and protocol.verify(spec_dir, docs_dir)
    assert "draft" not in doc.lower().replace("spec/protocol-draft.json", "") and "frozen 2030-01-02T03:04:05Z" in doc


def test_a_draft_that_is_not_json_is_named_and_nothing_is_changed(tmp_path):
    spec_dir, docs_dir = _copy_protocol(tmp_path)
    _write_draft(spec_dir, docs_dir, protocol.newest() + 1)
    (spec_dir / protocol.DRAFT).write_text('{"protocol": 5,', encoding="utf-8")
    before = {p.name: p.read_bytes() for p in [*spec_dir.iterdir(), *docs_dir.iterdir()]}
    with pytest.raises(protocol.ProtocolError, match="not valid JSON"):
        protocol.freeze("2030-01-02T03:04:05Z", spec_dir, docs_dir)
    assert {p.name: p.read_bytes() for p in [*spec_dir.iterdir(), *docs_dir.iterdir()]} == before


def test_the_im_design_of_protocol_5_is_frozen_before_any_sweep_that_ran_it():
    """Protocol 5's IM design (its searches write a raw search.phase, benchmarks/im/design.py)
    exists only from its freeze on: every committed sweep that ran it started after the
    freeze, so protocol 5 judges it; a sweep started before cannot have run it."""
    if 5 not in protocol.versions():
        pytest.skip("protocol 5 is not frozen yet")
    frozen = protocol._load(None if protocol.newest() == 5 else 5)["frozen_utc"]
    assert frozen
    if protocol.newest() == 5 and protocol.draft() is None:  # the harness runs the frozen design
        assert protocol.designing("im") == protocol._load(None)["im"]
    for sweep in sorted(p for p in (paths.repo_root() / "data" / "raw").iterdir() if p.is_dir()):
        manifest = json.loads((sweep / "manifest.json").read_text(encoding="utf-8"))
        if "im_rate" not in manifest.get("benchmarks", []):
            continue
        lines = [json.loads(x) for f in sorted(sweep.glob("runs*.jsonl")) for x in f.read_text().splitlines() if x]
        if any("phase" in (r.get("search") or {}) for r in lines if r.get("benchmark") == "im"):
            first = min(r["started_utc"] for r in lines)
            assert first > frozen and protocol.version_for(first) >= 5, sweep.name
