"""The original programs: which there are, how each is started and what its result line says.

Each is the authors' program of one benchmark in one language, built by
scripts/originals-build.sh into the originals folder ($SERVERBENCH_ORIGINALS, else
~/.cache/serverbench/originals). It runs on a runtime of ours (`language`: Go 1.26, OTP 25,
or Akka 2.4.12 with Scala 2.11.12 for the Scala ones, the paper's release) and is compared
with our program in that language (`today`: scala_akka for the Scala ones, ours on Akka 2.6).

The commands follow the harness's: Go gets GOMAXPROCS = cores, Erlang `+S C:C` and a
process limit, a JVM -XX:ActiveProcessorCount = cores and Akka's default dispatcher. A JVM
original runs two ways (`flags`): AUTHORS, with the JVM's own heap and stack (its
ergonomics), as the authors ran it; OURS, with the heap and stack flags the harness gives
our JVM programs (our_jvm_flags: spec/cli.json's -Xms/-Xmx/-Xss, the heap from the budget),
so that the attribution can tell the flags from the program (its `jvm flags` factor).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from serverbench import catalog
from serverbench.harness.running import command as harness_command
from serverbench.rawdata.columns import Col

ENV_DIR = "SERVERBENCH_ORIGINALS"
WINDOW_PROPERTY = "serverbench.window.ms"  # the build's one edit of maxSpeakers.scala: the window's length
ERLANG_MAX_PROCESSES = 134_217_727  # the largest +P OTP takes
JAVA = "java"  # the JVM the Scala originals run on: JDK 17's, as our scala_akka24 (spec/cli.json)
AUTHORS, OURS = "authors", "ours"  # a JVM original's flags: the JVM's defaults, or the harness's
FLAGS_SETTING = "jvm_flags"  # their key in a record's settings; absent (sweeps before it) = AUTHORS


class OriginalError(ValueError):
    """An original program cannot be run here (one line)."""


def our_jvm_flags(language: str, heap_mb: int) -> list[str]:
    """The heap and stack flags the harness gives our programs on `language`'s JVM: the -X
    options (not the -XX: ones) of spec/cli.json languages.<language>.command, {heap_mb}
    filled in as the harness fills it (a task's heap_mb: the budget x heap_fraction), e.g.
    -Xms512m -Xmx512m -Xss512k. Not -XX:ActiveProcessorCount, which every original gets, nor
    the -XX:+ExitOnOutOfMemoryError the harness adds under a budget (it changes only how an
    out-of-memory run ends)."""
    template = catalog.language(language).command
    flags = [a for a in template if a.startswith("-X") and not a.startswith("-XX:")]
    return [harness_command.fill(a, {"heap_mb": str(int(heap_mb))}) for a in flags]


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

    @property
    def jvm(self) -> bool:
        """Whether it runs on a JVM (then it runs both ways: flag_sets): its language's
        spec/cli.json command starts a java."""
        first = str(catalog.language(self.language).command[0])
        return "java" in first

    def flag_sets(self) -> tuple[str, ...]:
        """The ways a round runs it: a JVM original as the authors ran it and with our JVM
        flags; any other as the authors ran it."""
        return (AUTHORS, OURS) if self.jvm else (AUTHORS,)

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

    def command(
        self, artifact: Path, cores: int, params: dict, process_limit: int, flags: str = AUTHORS, heap_mb: int = 0
    ) -> tuple[list[str], dict]:
        """(argv, the environment it sets) for one run; flags OURS (a JVM original only) adds
        our_jvm_flags with heap_mb after -XX:ActiveProcessorCount."""
        b, lang = self.benchmark, self.language
        if flags not in self.flag_sets():
            raise OriginalError(f"the original {self.source} has no {FLAGS_SETTING} {flags!r} ({self.flag_sets()})")
        if flags == OURS and heap_mb <= 0:
            raise OriginalError(f"our JVM flags need the run's heap (heap_mb), got {heap_mb!r}")
        if lang == "go":
            if b == "spawn":
                args = ["-n", str(int(params[Col.processes]))]
            else:
                args = ["-r", str(int(params[Col.repetitions])), "-d", str(int(params[Col.message_bytes]))]
            return [str(artifact), *args], {"GOMAXPROCS": str(cores)}
        if lang == "erlang":
            if b == "spawn":
                n = int(params[Col.processes])
                call = f"maxBlocking:benchmark({n})"
                limit = min(ERLANG_MAX_PROCESSES, max(process_limit, 2 * n))
            else:
                call = f"pingping:benchmark({int(params[Col.repetitions])}, {int(params[Col.message_bytes])})"
                limit = process_limit
            env = {"ERL_FLAGS": f"+S {cores}:{cores} +P {limit}", "ERL_CRASH_DUMP_BYTES": "0"}
            return ["erl", "-noshell", "-pa", str(artifact), "-eval", f"{call}, halt()."], env
        jvm = [JAVA, f"-XX:ActiveProcessorCount={cores}", *(our_jvm_flags(lang, heap_mb) if flags == OURS else [])]
        if b == "throughput":
            window = f"-D{WINDOW_PROPERTY}={round(float(params[Col.duration_s]) * 1000)}"
            return [*jvm, window, "-jar", str(artifact), str(int(params[Col.pairs]))], {}
        if b == "pingping":
            return [
                *jvm,
                "-jar",
                str(artifact),
                str(int(params[Col.repetitions])),
                str(int(params[Col.message_bytes])),
            ], {}
        return [*jvm, "-jar", str(artifact), str(int(params[Col.processes]))], {}


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
