"""Shared helpers of the harness tests: small fake executables
(tests/python/fakes/fake_serverbench.py), a tiny sweep's overrides, one-run tasks."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from serverbench import contract
from serverbench.harness import host_info
from serverbench.harness.planning import task as task_mod
from serverbench.harness.planning.task import Task
from serverbench.harness.running import limits
from serverbench.harness.running.launch import Launcher
from serverbench.rawdata import sweepfiles

FAKE = str(Path(__file__).parent / "fakes" / "fake_serverbench.py")
LANGS = ("erlang", "go", "scala_akka")
MODE, _, _ = limits.detect_enforcement("auto")


def fake(mode="ok", lang="go"):
    return [sys.executable, FAKE, f"mode={mode}", f"lang={lang}"]


def fakes(**modes):
    return {lang: fake(modes.get(lang, "ok"), lang) for lang in LANGS}


def lines(sweep_dir):
    return [json.loads(x) for x in (Path(sweep_dir) / sweepfiles.RAW_LOG_NAME).read_text().splitlines()]


def spec(bench="pingping", lang="go", params=None, cores=1, timeout=10.0, budget=512 * 2**20, enforcement="auto"):
    params = {**contract.param_defaults(bench), **(params or {"message_bytes": 100, "repetitions": 10})}
    return Task(
        bench,
        lang,
        "fair",
        params,
        cores,
        task_mod.config_id(bench, lang, "fair", cores, params),
        task_mod.group_id(bench, "fair", cores, params),
        timeout_s=timeout,
        memory_budget_bytes=budget,
        heap_mb=256,
        memory_enforcement=enforcement,
    )


def launcher(mode, lang="go", enforcement=None, cg=None):
    if enforcement is None:
        enforcement, cg, _ = limits.detect_enforcement("auto")
    return Launcher(
        sweep_id="t",
        host=host_info(),
        allowed_cpus=sorted(os.sched_getaffinity(0)),
        commands={lang: fake(mode, lang)},
        enforcement=enforcement,
        cgroup_parent=cg,
    )


SMALL = {  # a tiny sweep: 3 languages x (1 pingping + 1 spawn) = 6 runs, 1 trial each
    "pingping.message_bytes": [100],
    "pingping.repetitions": [10],
    "spawn.processes": [10],
    "throughput.enabled": False,
    "spawn_max.enabled": False,
}
