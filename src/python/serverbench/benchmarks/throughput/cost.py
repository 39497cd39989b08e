"""What a throughput run costs, for the plan's estimates: its fixed duration and a little."""

from serverbench.benchmarks.throughput.columns import Col


def run_s(language: str, params: dict) -> float:
    return params[Col.duration_s] + 0.3
