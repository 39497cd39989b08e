"""The im profile's `large` piece, for a machine with at least 8 CPUs, planned on a simulated
core count: on 8 CPUs the capacity and every server row's rate search at 1, 2 and 4 CPUs a
side; on this 2-CPU machine the plan is refused, naming the CPUs it needs."""

from __future__ import annotations

import pytest

from serverbench.harness import load_profile, make_plan
from serverbench.harness.planning.pieces import pieces
from serverbench.harness.planning.values import ProfileError


def _plan(machine: int, oversubscribe: bool = False):
    pc = pieces("im")["large"]
    return make_plan(
        load_profile("im", pc.sets), machine=machine, benchmarks=list(pc.benchmarks), oversubscribe=oversubscribe
    )


def test_on_eight_cpus_every_server_row_is_searched_at_one_two_and_four_cpus_a_side():
    plan = _plan(8)
    rate = [s for s in plan.searches if s.kind == "rate"]
    assert {s.cores for s in plan.searches} == {1, 2, 4}
    assert {s.kind for s in plan.searches} == {"capacity", "rate"}
    rows = {(s.server, bool(s.options.server_settings)) for s in rate}
    assert len(rows) == 9 and all(
        sum(1 for s in rate if (s.server, bool(s.options.server_settings)) == r) == 3 for r in rows
    )
    assert len({s.key for s in plan.searches}) == len(plan.searches)  # each core count its own search


@pytest.mark.parametrize("machine", [2, 4, 7])
def test_on_fewer_than_eight_cpus_the_plan_names_what_it_needs(machine):
    with pytest.raises(ProfileError, match=r"needs 8 CPUs; this machine lets the harness use|4 cores asked"):
        _plan(machine)


def test_the_two_cpu_pieces_still_plan_on_two_cpus():
    for name in ("rate", "storm", "fanout"):
        pc = pieces("im")[name]
        assert make_plan(load_profile("im", pc.sets), machine=2, benchmarks=list(pc.benchmarks)).searches
