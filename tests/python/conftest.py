"""Shared fixtures: the socket-benchmark tests' launcher and process check (a module asks
for it with pytest.mark.usefixtures("no_leftover_processes")), and the claim tests' fixed
decision regions (quiet_machine)."""

from __future__ import annotations

import pytest

from socket_helpers import check_nothing_left, make_launcher


@pytest.fixture
def launcher(tmp_path):
    """A Launcher for one socket run, its scratch files in tmp_path."""
    return make_launcher(tmp_path)


@pytest.fixture
def no_leftover_processes():
    """After the test: no child process of this test process is alive."""
    yield
    check_nothing_left()


@pytest.fixture
def quiet_machine(monkeypatch):
    """Decision regions as on a machine whose sweeps differ by no more than their own
    intervals say (every table at claims.decision.MIN_SPREAD_LOG), whatever spread table
    the checkout holds: claim tests then state their gaps exactly."""
    from serverbench.analysis import process
    from serverbench.analysis.claims import decision

    quiet = dict.fromkeys(process.table_keys(), decision.MIN_SPREAD_LOG)
    monkeypatch.setattr(decision, "load_spreads", lambda *a, **k: dict(quiet))
    with decision.using(decision.MIN_SPREAD_LOG):  # for expectations judged outside an evaluation
        yield quiet
