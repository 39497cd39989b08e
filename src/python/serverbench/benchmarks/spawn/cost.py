"""What a spawn run (or a max-processes search step) costs, for the plan's estimates and
shard balance only (the shared 2-core VM: microseconds per process, a language's
spec/cli.json `cost_factor.spawn`, ~25 for an Akka actor, 3 without one; a port of Akka,
`port_of`, costs what Akka does)."""

from serverbench import catalog
from serverbench.benchmarks.spawn.columns import Col


def run_s(language: str, params: dict) -> float:
    return params[Col.processes] * catalog.language(language).cost_factor("spawn", default=3) * 1e-6
