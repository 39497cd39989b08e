"""What a PingPing run costs, for the plan's estimates and shard balance only (calibrated on
a quick sweep of the shared 2-core VM)."""

from serverbench import catalog
from serverbench.rawdata.columns import Col


def run_s(language: str, params: dict) -> float:
    """Seconds beyond start-up: 2 R messages of the given size."""
    per = 0.4e-6 + params[Col.message_bytes] / 4e9
    # per message, relative to Go (spec/cli.json `cost_factor.pingping`; a port of Akka,
    # `port_of`, costs what Akka does)
    per *= catalog.language(language).cost_factor("pingping")
    return 2 * params[Col.repetitions] * per
