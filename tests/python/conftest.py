"""Fixtures of the socket-benchmark tests (test_sockets_tcp.py, test_echo_flood*.py); a
module asks for the process check with pytest.mark.usefixtures("no_leftover_processes")."""

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
