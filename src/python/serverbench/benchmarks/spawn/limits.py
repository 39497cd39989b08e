"""What a spawn run needs of the process it runs in beyond the profile's settings: room for
every process it spawns (the harness passes it as {process_limit}: Erlang's +P). Plain
arithmetic: the harness loads it with catalog.benchmark("spawn").limits."""

from serverbench.benchmarks.spawn.columns import Col

ERLANG_MAX_PROCESSES = 134_217_727  # the largest +P the BEAM accepts


def process_limit(params: dict, default: int) -> int:
    """The profile's process_limit, raised to hold `processes` and a tenth more (at least
    4,096 more), never above what the BEAM accepts."""
    n = params[Col.processes]
    return min(ERLANG_MAX_PROCESSES, max(default, n + max(n // 10, 4096)))
