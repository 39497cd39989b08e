"""The original programs: which there are, how each is started and what its result line says.

Each is the authors' program of one benchmark in one language, built by
scripts/originals-build.sh into the originals folder ($SERVERBENCH_ORIGINALS, else
~/.cache/serverbench/originals). It runs on a runtime of ours (`language`: Go 1.26, OTP 25,
or Akka 2.4.12 with Scala 2.11.12 for the Scala ones, the paper's release) and is compared
with our program in that language (`today`: scala_akka for the Scala ones, ours on Akka 2.6).

The commands follow the harness's: Go gets GOMAXPROCS = cores, Erlang `+S C:C` and a
process limit, a JVM -XX:ActiveProcessorCount = cores with its default heap and Akka's
default dispatcher, as the authors ran them.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

ENV_DIR = "SERVERBENCH_ORIGINALS"
WINDOW_PROPERTY = "serverbench.window.ms"  # the build's one edit of maxSpeakers.scala: the window's length
ERLANG_MAX_PROCESSES = 134_217_727  # the largest +P OTP takes


class OriginalError(ValueError):
    """An original program cannot be run here (one line)."""


def folder() -> Path:
    """Where scripts/originals-build.sh put the built originals."""
    return Path(os.environ.get(ENV_DIR) or Path.home() / ".cache" / "serverbench" / "originals")


@dataclass(frozen=True)
class Program:
    benchmark: str  # ours it is the original of
    language: str  # the runtime it runs on (a language of spec/cli.json)
    today: str  # ours in that language, as the then-and-now tables show it
    source: str  # its path in the authors' repository
    artifact: str  # what the build leaves in the originals folder
    printed: str  # its result line: a regex with (?P<value>) seconds, or (?P<count>) in (?P<seconds>)
    exits: bool  # False: it prints and keeps running (its ActorSystem is never terminated)

    def path(self, where: Path | None = None) -> Path:
        """The built artifact; OriginalError when it is not built."""
        p = (where or folder()) / self.artifact
        if not p.exists():
            raise OriginalError(
                f"the original {self.source} is not built ({p}): run scripts/originals-build.sh "
                "PATH/TO/server-languages-benchmarks (docs/gap.md)"
            )
        return p

    def value(self, stdout: str | None) -> float | None:
        """What its result line says, in our metric's unit (seconds, or exchanges per minute:
        count / its printed seconds x 60); None when it printed no such line."""
        m = re.search(self.printed, stdout or "")
        if not m:
            return None
        g = m.groupdict()
        if "count" in g:
            secs = float(g["seconds"])
            return int(g["count"]) / secs * 60.0 if secs > 0 else None
        return float(g["value"])

    def command(self, artifact: Path, cores: int, params: dict, process_limit: int) -> tuple[list[str], dict]:
        """(argv, the environment it sets) for one run."""
        b, lang = self.benchmark, self.language
        if lang == "go":
            if b == "spawn":
                args = ["-n", str(int(params["processes"]))]
            else:
                args = ["-r", str(int(params["repetitions"])), "-d", str(int(params["message_bytes"]))]
            return [str(artifact), *args], {"GOMAXPROCS": str(cores)}
        if lang == "erlang":
            if b == "spawn":
                n = int(params["processes"])
                call = f"maxBlocking:benchmark({n})"
                limit = min(ERLANG_MAX_PROCESSES, max(process_limit, 2 * n))
            else:
                call = f"pingping:benchmark({int(params['repetitions'])}, {int(params['message_bytes'])})"
                limit = process_limit
            env = {"ERL_FLAGS": f"+S {cores}:{cores} +P {limit}", "ERL_CRASH_DUMP_BYTES": "0"}
            return ["erl", "-noshell", "-pa", str(artifact), "-eval", f"{call}, halt()."], env
        jvm = ["java", f"-XX:ActiveProcessorCount={cores}"]
        if b == "throughput":
            window = f"-D{WINDOW_PROPERTY}={round(float(params['duration_s']) * 1000)}"
            return [*jvm, window, "-jar", str(artifact), str(int(params["pairs"]))], {}
        if b == "pingping":
            return [*jvm, "-jar", str(artifact), str(int(params["repetitions"])), str(int(params["message_bytes"]))], {}
        return [*jvm, "-jar", str(artifact), str(int(params["processes"]))], {}


_SECONDS = r"(?P<value>[0-9]+(?:\.[0-9]*)?(?:[eE]-?[0-9]+)?)"
PROGRAMS = (
    Program(
        "throughput",
        "scala_akka24",
        "scala_akka",
        "ConcurrentProcessesThroughput/scala/maxSpeakers.scala",
        "scala/maxSpeakers.jar",
        r"Total number of messages after (?P<seconds>[0-9]+(?:\.[0-9]+)?) seconds: (?P<count>[0-9]+)",
        True,
    ),
    Program(
        "pingping",
        "go",
        "go",
        "ProcessCommunicationLatency/go/pingping.go",
        "go/pingping",
        rf"Time taken in seconds: {_SECONDS}",
        True,
    ),
    Program(
        "pingping",
        "erlang",
        "erlang",
        "ProcessCommunicationLatency/erlang/pingping.erl",
        "erlang",
        rf"Total time taken: {_SECONDS} seconds",
        True,
    ),
    Program(
        "pingping",
        "scala_akka24",
        "scala_akka",
        "ProcessCommunicationLatency/scala/pingping.scala",
        "scala/pingping.jar",
        rf"Time taken in seconds: {_SECONDS}",
        False,
    ),
    Program(
        "spawn",
        "go",
        "go",
        "ProcessCreationLatency/go/maxBlockingProcesses.go",
        "go/maxBlockingProcesses",
        rf"Time taken in seconds: {_SECONDS}",
        True,
    ),
    Program(
        "spawn",
        "erlang",
        "erlang",
        "ProcessCreationLatency/erlang/maxBlocking.erl",
        "erlang",
        rf"Total time taken: {_SECONDS} seconds",
        True,
    ),
    Program(
        "spawn",
        "scala_akka24",
        "scala_akka",
        "ProcessCreationLatency/scala/maxBlockingProcesses.scala",
        "scala/maxBlockingProcesses.jar",
        rf"Time taken in seconds: {_SECONDS}",
        False,
    ),
)


def find(benchmark: str, language: str) -> Program | None:
    """The original of `benchmark` that runs on `language`, or None."""
    return next((p for p in PROGRAMS if p.benchmark == benchmark and p.language == language), None)
