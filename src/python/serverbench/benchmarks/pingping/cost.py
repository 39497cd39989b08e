"""What a PingPing run costs, for the plan's estimates and shard balance only (calibrated on
a quick sweep of the shared 2-core VM)."""

# the JVM actor ports cost per message what Akka 2.6 does (same code, runtime ported)
AKKA_LIKE = ("scala_akka", "scala_akka24", "scala_pekko", "scala_pekko_jdk25", "scala_pekko_jdk25_compact")
SLOWER = {"erlang": 2, "java": 50, "scala_actors": 15}  # per message, relative to Go


def run_s(language: str, params: dict) -> float:
    """Seconds beyond start-up: 2 R messages of the given size."""
    per = 0.4e-6 + params["message_bytes"] / 4e9
    per *= 3 if language in AKKA_LIKE else SLOWER.get(language, 1)
    return 2 * params["repetitions"] * per
