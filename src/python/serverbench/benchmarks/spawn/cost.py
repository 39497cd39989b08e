"""What a spawn run (or a max-processes search step) costs, for the plan's estimates and
shard balance only (the shared 2-core VM: ~25 us per Akka actor, ~3 us per process else;
a port of Akka, spec/cli.json `port_of`, costs what Akka does)."""

from serverbench import contract

PER_PROCESS_S = {"scala_akka": 2.5e-5}  # else 3 us


def run_s(language: str, params: dict) -> float:
    return params["processes"] * PER_PROCESS_S.get(contract.port_of(language), 3e-6)
