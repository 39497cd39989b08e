"""A profile's pieces (harness/planning/pieces.py): the paper profile in parts of one session each,
`run --piece NAME` into a sweep of its own, and bad pieces refused by name."""

from __future__ import annotations

import io
import re

import pytest

from serverbench import cli, protocol
from serverbench.harness import load_profile, make_plan
from serverbench.harness.planning import pieces
from serverbench.harness.planning.profiles import ProfileError

SESSION_MIN = 150  # one session on one machine: the pieces must each fit (~2.5 h)


def test_the_paper_profile_is_in_pieces_that_each_fit_one_session_and_cover_it():
    found = pieces.pieces("paper")
    assert set(found) == {"pingping", "spawn", "throughput-1core", "throughput-2cores", "recovery"}
    whole = make_plan(load_profile("paper"), machine=2)
    covered = []
    for p in found.values():
        plan = make_plan(load_profile("paper", p.sets), benchmarks=list(p.benchmarks), machine=2)
        assert plan.tasks or plan.searches, p.name
        assert plan.estimate_s() / 60 < SESSION_MIN, (p.name, plan.estimate_s() / 60)
        covered += [t.key for t in plan.tasks]
        # one benchmark, one core count: no comparison or curve spans two pieces (machines)
        assert len({(t.benchmark, t.cores) for t in plan.tasks if t.benchmark == "throughput"}) <= 1
    assert sorted(covered) == sorted(t.key for t in whole.tasks)  # every run of the profile, once


def test_the_paper_profile_gives_its_deciding_configurations_the_design_rounds():
    plan = make_plan(load_profile("paper"), machine=2)
    rounds = {}
    for t in plan.tasks:
        rounds.setdefault((t.benchmark, t.config_id), set()).add(t.trial)
    deciding = [k for k in rounds if "repetitions=1000000" in k[1] or "processes=3000000" in k[1]]
    assert deciding and all(len(rounds[k]) == protocol.rounds_deciding() for k in deciding)
    figure = [k for k in rounds if "repetitions=1000," in k[1] + "," or "pairs=128" in k[1]]
    assert figure and all(len(rounds[k]) == protocol.rounds_figure_only() for k in figure)


def test_run_piece_runs_its_benchmarks_and_overrides_into_its_own_sweep(fake_run_sweep, tmp_path):
    args = ["run", "--profile", "paper", "--piece", "throughput-2cores", "--no-progress", "--raw-dir", str(tmp_path)]
    assert cli.run(args, stdout=io.StringIO(), stderr=io.StringIO()) == 0
    calls = fake_run_sweep
    (kw,) = calls
    assert kw["benchmarks"] == "throughput" and kw["overrides"]["throughput.cores"] == [2]
    assert re.fullmatch(r"paper-throughput-2cores-\d{8}T\d{6}Z", kw["sweep_id"])
    # a --set of the user's wins over the piece's own
    cli.run([*args, "--set", "throughput.duration_s=20"], stdout=io.StringIO(), stderr=io.StringIO())
    assert calls[1]["overrides"]["throughput.duration_s"] == 20 and calls[1]["overrides"]["throughput.cores"] == [2]


@pytest.mark.parametrize(
    ("extra", "msg"),
    [
        (["--piece", "nope"], r"profile 'paper' has no piece 'nope' \(its pieces: pingping, spawn, "),
        (["--piece", "spawn", "--benchmarks", "pingping"], r"--piece spawn sets the benchmarks \(spawn, spawn_max\)"),
    ],
)
def test_a_bad_piece_request_is_one_clear_line(fake_run_sweep, tmp_path, extra, msg):
    err = io.StringIO()
    rc = cli.run(["run", "--profile", "paper", "--raw-dir", str(tmp_path), *extra], stdout=io.StringIO(), stderr=err)
    assert rc == 2 and not fake_run_sweep and re.search(msg, err.getvalue()) and err.getvalue().count("\n") == 1


@pytest.mark.parametrize(
    ("table", "msg"),
    [
        ('[pieces.a]\nbenchmarks = ["nope"]', r"pieces.a.benchmarks must list some of"),
        ("[pieces.a]\nbenchmarks = []", r"pieces.a.benchmarks must list some of"),
        ('[pieces.a]\nbenchmarks = ["spawn"]\ncores = 2', r"pieces.a takes benchmarks"),
        ('[pieces.a]\nbenchmarks = ["spawn"]\nset = { "spawn.nope" = 1 }', r"unknown"),
    ],
)
def test_a_bad_pieces_table_is_refused_naming_the_key(tmp_path, table, msg):
    f = tmp_path / "p.toml"
    f.write_text('name = "p"\nlanguages = ["go"]\n[spawn]\nprocesses = [10]\n' + table + "\n")
    with pytest.raises(ProfileError, match=msg):
        pieces.pieces(str(f))


def test_profiles_lists_each_piece_with_its_estimate():
    out = io.StringIO()
    assert cli.run(["profiles"], stdout=out, stderr=io.StringIO()) == 0
    assert re.search(
        r"piece throughput-1core: ~\d+ runs \(~\d+ min\)\s+\(run --piece throughput-1core\)", out.getvalue()
    )
