"""A run's command line and environment: a language's command from spec/cli.json (or an
override, tests' fakes) with the run's settings filled in, and the environment a child gets
(the harness's own without what would change a runtime behind its back). The Launcher and
`serve` both take theirs from here."""

from __future__ import annotations

import os

from serverbench import catalog, jdks
from serverbench.rawdata.columns import Col

# Inherited variables that would change how a runtime behaves behind the harness's back.
STRIPPED_ENV = (
    "GOMAXPROCS",
    "GOGC",
    "GOMEMLIMIT",
    "GODEBUG",
    "ERL_FLAGS",
    "ERL_AFLAGS",
    "ERL_ZFLAGS",
    "JAVA_TOOL_OPTIONS",
    "_JAVA_OPTIONS",
    "JDK_JAVA_OPTIONS",
    "SERVERBENCH_CORES",
    "SERVERBENCH_HEAP_MB",
    "SERVERBENCH_PROCESS_LIMIT",
)


def fill(template: str, subst: dict) -> str:
    for k, v in subst.items():
        template = template.replace("{" + k + "}", v)
    return template


def command_prefix(lang: str, subst: dict, override: list[str] | None = None) -> tuple[list[str], dict]:
    """(argv prefix, env the harness sets) of a language's command from spec/cli.json, or
    from an override (tests' fakes), which gets every setting as an env var too."""
    spec = catalog.language(lang)
    prefix = [fill(s, subst) for s in (override if override is not None else jdks.fill(list(spec.command)))]
    env = {k: fill(v, subst) for k, v in spec.env}
    if override is not None:
        env.update(
            SERVERBENCH_CORES=subst[Col.cores],
            SERVERBENCH_HEAP_MB=subst["heap_mb"],
            SERVERBENCH_PROCESS_LIMIT=subst[Col.process_limit],
        )
    return prefix, env


def child_env(set_env: dict) -> dict:
    """A child's environment: the harness's own without STRIPPED_ENV, then what it sets."""
    env = {k: v for k, v in os.environ.items() if k not in STRIPPED_ENV}
    env.update(set_env)
    return env
