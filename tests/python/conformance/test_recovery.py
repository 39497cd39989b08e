"""recovery in every language that lists it (docs/spec.md 'recovery'), beyond the
generated cases: the cross-flag usage rule, the crash schedule every language must
draw from the same seed, exact accounting, the aggregator fault, and a deliberately
broken restart (SERVERBENCH_RECOVERY_BREAK=1) that must be recorded invalid."""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from .cases import load_cli
from .test_native_conformance import RECORD, command

pytestmark = pytest.mark.native

CLI = load_cli()
LANGS = [lang for lang, spec in CLI["languages"].items() if "recovery" in spec["benchmarks"]]
MASK = (1 << 64) - 1


def splitmix64(seed: int):
    state = seed
    while True:
        state = (state + 0x9E3779B97F4A7C15) & MASK
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        yield z ^ (z >> 31)


def schedule(seed: int, rate: float, duration_s: float, pairs: int) -> list[tuple[float, int]]:
    """The contract's crash schedule: crash k at (k + u_k) / rate while < duration_s."""
    out, draws = [], splitmix64(seed)
    for k in range(10**6):
        u = (next(draws) >> 11) / 2**53
        pair = next(draws) % pairs
        t = (k + u) / rate
        if t >= duration_s:
            return out
        out.append((t, pair))
    return out


def run(lang: str, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    cmd, base = command(lang)
    return subprocess.run(
        [*cmd, "recovery", *args],
        input="",
        capture_output=True,
        text=True,
        env={**base, **(env or {})},
        timeout=60,
        check=False,
    )


def record(p: subprocess.CompletedProcess) -> dict:
    lines = p.stdout.splitlines()
    assert len(lines) == 1, f"exit {p.returncode} stdout {p.stdout[:500]!r} stderr {p.stderr[-1000:]!r}"
    rec = json.loads(lines[0])
    errors = [e.message for e in RECORD.iter_errors(rec)]
    assert not errors, errors[:5]
    return rec


def test_schedule_is_deterministic_and_at_the_rate() -> None:
    s = schedule(7, 100.0, 1.0, 4)
    assert s == schedule(7, 100.0, 1.0, 4) and len(s) == 100
    assert all(k / 100 <= t < (k + 1) / 100 for k, (t, _p) in enumerate(s))
    assert {p for _t, p in s} == {0, 1, 2, 3}


@pytest.mark.shares_cpu  # checks what the program printed, times nothing
@pytest.mark.parametrize("lang", LANGS)
def test_too_few_expected_crashes_is_a_usage_error(lang: str) -> None:
    p = run(lang, "--pairs", "1", "--duration-s", "0.5", "--crashes-per-s", "1.5")
    lines = [line for line in p.stderr.splitlines() if line.strip()]
    assert p.returncode == 2 and p.stdout == "", p.stderr
    assert len(lines) == 1 and lines[0].startswith("error: ") and "--crashes-per-s" in lines[0], lines


@pytest.mark.parametrize("lang", LANGS)
def test_worker_crashes_are_recovered_and_accounted(lang: str) -> None:
    args = ["--pairs", "2", "--duration-s", "0.4", "--crashes-per-s", "40", "--seed", "11"]
    p = run(lang, *args)
    rec = record(p)
    m, v = rec["metrics"], rec["validation"]
    expected = schedule(11, 40.0, 0.4, 2)
    assert p.returncode == 0 and v["ok"] is True, v
    assert m["crashes_injected"] == len(expected) == len(m["crash_times_s"]) == m["restarts"]
    assert len(m["restart_latency_s"]) == m["restarts"] and m["aggregator_crashes"] == 0
    # injected at the scheduled times (never early; late only by the injector's wake-up)
    for got, (want, _pair) in zip(m["crash_times_s"], expected, strict=True):
        assert want - 1e-3 <= got < want + 0.2
    assert m["messages_sent"] == m["messages_received"] + m["messages_lost"]
    assert m["messages_lost"] >= m["crashes_injected"] > 0  # at least the message in the crashed hand
    assert m["exchanges_counted"] == m["exchanges"] + m["exchanges_lost"]
    assert v["workers_alive"] == v["workers_expected"] == 4


@pytest.mark.parametrize("lang", LANGS)
def test_aggregator_crash_loses_its_state_and_is_recovered(lang: str) -> None:
    p = run(lang, "--pairs", "2", "--duration-s", "0.4", "--fault", "aggregator", "--report-every", "100")
    rec = record(p)
    m, v = rec["metrics"], rec["validation"]
    assert p.returncode == 0 and v["ok"] is True, v
    assert m["aggregator_crashes"] == 1 == m["restarts"] == m["crashes_injected"]
    assert 0.2 - 1e-3 <= m["crash_times_s"][0] < 0.4
    assert m["exchanges_lost"] > 0 and m["exchanges_counted"] == m["exchanges"] + m["exchanges_lost"]


@pytest.mark.shares_cpu  # checks what the program printed, times nothing
@pytest.mark.parametrize("lang", LANGS)
def test_a_broken_restart_is_recorded_invalid(lang: str) -> None:
    broken = {"SERVERBENCH_RECOVERY_BREAK": "1"}
    p = run(lang, "--pairs", "2", "--duration-s", "0.3", "--crashes-per-s", "20", env=broken)
    rec = record(p)
    v = rec["validation"]
    assert p.returncode == 1 and v["ok"] is False, v
    assert v["restarts"] < v["crashes_injected"] and v["workers_alive"] < v["workers_expected"]


def test_break_hook_is_not_inherited_by_other_runs() -> None:
    assert os.environ.get("SERVERBENCH_RECOVERY_BREAK") is None
