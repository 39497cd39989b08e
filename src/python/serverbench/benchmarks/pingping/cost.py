"""What a PingPing run costs, for the plan's estimates and shard balance only (calibrated on
a quick sweep of the shared 2-core VM)."""

from serverbench import contract

# per message, relative to Go; a port of Akka (spec/cli.json `port_of`) costs what Akka does
SLOWER = {"scala_akka": 3, "erlang": 2, "java": 50, "scala_actors": 15}


def run_s(language: str, params: dict) -> float:
    """Seconds beyond start-up: 2 R messages of the given size."""
    per = 0.4e-6 + params["message_bytes"] / 4e9
    per *= SLOWER.get(contract.port_of(language), 1)
    return 2 * params["repetitions"] * per
