"""What a spawn run (or a max-processes search step) costs, for the plan's estimates and
shard balance only (the shared 2-core VM: ~25 us per Akka actor, ~3 us per process else)."""

AKKA_LIKE = ("scala_akka", "scala_akka24", "scala_pekko", "scala_pekko_jdk25", "scala_pekko_jdk25_compact")


def run_s(language: str, params: dict) -> float:
    return params["processes"] * (2.5e-5 if language in AKKA_LIKE else 3e-6)
