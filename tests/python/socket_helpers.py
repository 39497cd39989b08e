"""Shared helpers of the socket-benchmark tests (their fixtures are in conftest.py): a
launcher, the check that no test leaves a process behind, and echo_flood's servers,
task and run."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import psutil
import pytest

from serverbench import contract
from serverbench.harness.planning.task import Task
from serverbench.harness.recording.sweep import FAMILIES
from serverbench.harness.running.launch import Launcher
from serverbench.plugins import SocketOptions
from serverbench.rawdata import records

# every echo_flood server spec/cli.json lists: a new one is tested without touching this file
SERVERS = tuple(lang for lang in contract.languages() if contract.implements(lang, "echo_flood"))
HOST = {"hostname": "test", "cpu_model": "test", "logical_cpus": 2, "memory_bytes": 1, "os": "linux", "kernel": "k"}
BROKEN = Path(__file__).with_name("echo_broken_server.py")


def _need(lang):
    if not contract.executable(lang).exists():
        pytest.skip(f"not built: {lang} (scripts/build.sh)")


def make_launcher(tmp_path, commands: dict | None = None):
    return Launcher(
        sweep_id="t",
        host=HOST,
        allowed_cpus=sorted(os.sched_getaffinity(0)),
        tmpdir=str(tmp_path),
        commands=commands or {},
        families=FAMILIES,
    )


def broken_launcher(tmp_path, *args: str):
    """A launcher whose python_threads server is tests/python/echo_broken_server.py (args: its mode)."""
    return make_launcher(tmp_path, {"python_threads": [sys.executable, str(BROKEN), *args]})


def default_placement() -> str:
    """split (server and client on different CPUs) where there are two CPUs, else shared."""
    return "split" if len(os.sched_getaffinity(0)) >= 2 else "shared"


def check_nothing_left(keep: frozenset[int] = frozenset()):
    """Fail the test if a child process (a server, a load generator) outlived it; `keep`: the
    processes a module started for several tests (they are checked when it stops them)."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        kids = [
            p
            for p in psutil.Process().children(recursive=True)
            if p.pid not in keep and p.status() != psutil.STATUS_ZOMBIE
        ]
        if not kids:
            return
        time.sleep(0.1)
    pytest.fail(f"processes left behind: {[(p.pid, p.cmdline()[:3]) for p in kids]}")


def task(server, conns=4, d=32768, mode="flood", timeout_s=60.0, **extra):
    params = {"connections": conns, "bytes_per_connection": d, "mode": mode, "duration_s": 5.0, **extra}
    return Task(
        benchmark="echo_flood",
        language="c",
        variant="fair",
        params=params,
        cores=1,
        config_id=f"echo_flood/{server}",
        group_id="g",
        timeout_s=timeout_s,
        family="socket",
        options=SocketOptions(server, default_placement()),
    )


def run(launcher, t):
    rec, _ = launcher.run(t)
    assert records.raw_errors(rec) is None, records.raw_errors(rec)
    return rec
