"""What a sweep checks before anything runs (recording.sweep calls it): something to run,
every program built and runnable, every memory budget within what the machine has, every
socket size within its limits. Bad input gets a clear error naming the problem
(ProfileError) before a file is written."""

from __future__ import annotations

import os
import shutil

from serverbench import catalog, contract, jdks
from serverbench.harness.planning.plan import Plan
from serverbench.harness.planning.values import ProfileError
from serverbench.harness.running import environment
from serverbench.rawdata.columns import Col

MEMAVAILABLE_FRACTION = 0.75  # the largest budget, as a share of MemAvailable


def check_plan(plan: Plan, commands: dict, enforcement: str) -> None:
    """Bad input gets a clear error before anything runs."""
    if not plan.tasks and not plan.searches:
        raise ProfileError(
            "nothing to run: no benchmark/language/core count selected is runnable here"
            + (f" (not runnable: {plan.not_runnable})" if plan.not_runnable else "")
        )
    for lang in plan.languages:
        if lang in commands:
            argv0 = commands[lang][0]
            if not (shutil.which(argv0) or os.path.exists(argv0)):
                raise ProfileError(f"{lang}: command {argv0!r} not found")
            continue
        exe = contract.executable(lang)
        if not exe.exists():
            raise ProfileError(f"{lang}: executable {exe} is missing; build it with `{catalog.language(lang).build}`")
        for t in plan.tasks:  # a runtime setting's own build (e.g. Go without Green Tea)
            other = contract.executable(lang, t.settings) if t.language == lang and t.settings else exe
            if not other.exists():
                build = catalog.language(lang).build
                raise ProfileError(f"{lang} {t.settings}: executable {other} is missing; build it with `{build}`")
        spec = catalog.language(lang)
        try:  # a JVM language: the JDK release its entry names, with every option it takes
            argv = jdks.fill(list(spec.command))
            if spec.jdk is not None:
                jdks.check(lang, argv, spec.jdk)
        except jdks.JdkError as e:
            raise ProfileError(f"{lang}: {e}" if not str(e).startswith(lang) else str(e)) from None
        first = argv[0]
        if first != "{exe}" and not shutil.which(first) and not os.path.exists(first):
            raise ProfileError(f"{lang}: {first!r} is not on PATH (needed to run {exe})")
    avail = environment.mem_available()
    limit = int(avail * MEMAVAILABLE_FRACTION)
    budgets = [(t.config_id, t.memory_budget_bytes) for t in plan.tasks] + [(s.key, s.budget) for s in plan.searches]
    for where, budget in budgets:
        if budget and budget > limit:
            raise ProfileError(
                f"{where}: memory budget {budget} bytes ({budget / 2**30:.2f} GiB) is above "
                f"{MEMAVAILABLE_FRACTION:.0%} of MemAvailable ({avail / 2**30:.2f} GiB); lower it "
                '(e.g. --set spawn_max.budget_bytes="2GiB") so that the machine itself cannot run out of memory'
            )
    sockets = [t for t in plan.tasks if t.family == "socket"]
    if sockets:  # socket benchmarks: the machine must hold the connections asked for
        from serverbench.harness.sockets import limits as sockets_limits

        try:
            sockets_limits.check_connections(max(int(t.params.get(Col.connections, 1)) for t in sockets))
        except sockets_limits.SocketLimitError as e:
            raise ProfileError(str(e)) from None
    wants_cgroup = [t.config_id for t in plan.tasks if t.memory_enforcement == "cgroup"] + [
        s.key for s in plan.searches if s.settings[Col.memory_enforcement] == "cgroup"
    ]
    if wants_cgroup and enforcement != "cgroup":
        raise ProfileError(f"memory_enforcement = 'cgroup' asked but not possible on this machine ({enforcement})")
