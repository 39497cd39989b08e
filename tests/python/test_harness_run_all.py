"""run_all.sh drives the pipeline: ONE harness process per sweep (`serverbench run`), then
the notebooks analysis-only, then exit 1 when a claim's verdict is `error`. Checked with
a stub python that records its command lines (no set-up, build or benchmark runs)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

FAKE_PY = """#!/usr/bin/env bash
set -euo pipefail
echo "$*" >> "$CALLS"
if [ "${1:-}" = "-m" ] && [ "${2:-}" = "serverbench" ]; then
  cmd="$3"; shift 3
  id=""
  while [ $# -gt 0 ]; do
    if [ "$1" = "--sweep-id" ]; then id="$2"; fi
    shift
  done
  case "$cmd" in
    run) mkdir -p "data/raw/$id" ;;
    profiles) echo "go,erlang,nodejs" ;;
    notebooks)
      mkdir -p "data/processed/$id"
      printf 'id,claim,verdict\\nC1,x,supported\\nC2,y,%s\\n' "$VERDICT" > "data/processed/$id/claims.csv" ;;
  esac
  exit 0
fi
exec "$REAL_PY" "$@"
"""


@pytest.fixture
def tree(tmp_path):
    shutil.copy(ROOT / "run_all.sh", tmp_path / "run_all.sh")
    (tmp_path / "scripts").mkdir()
    log = 'echo "setup python_only=${SERVERBENCH_PYTHON_ONLY:-0} languages=${SERVERBENCH_LANGUAGES:-}" >> "$CALLS"'
    (tmp_path / "scripts" / "setup.sh").write_text(f"#!/usr/bin/env bash\n{log}\n")
    (tmp_path / "scripts" / "setup.sh").chmod(0o755)
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "python3").write_text(FAKE_PY)
    (bindir / "python3").chmod(0o755)
    return tmp_path


def _run(tree: Path, verdict: str, *args: str):
    env = dict(
        os.environ,
        PATH=f"{tree / 'bin'}:{os.environ['PATH']}",
        SERVERBENCH_NO_VENV="1",
        CALLS=str(tree / "calls.txt"),
        VERDICT=verdict,
        REAL_PY=sys.executable,
    )
    proc = subprocess.run(
        ["bash", str(tree / "run_all.sh"), *args], cwd=tree, env=env, capture_output=True, text=True, timeout=60
    )
    calls = (tree / "calls.txt").read_text().splitlines() if (tree / "calls.txt").exists() else []
    return proc, [c for c in calls if c.startswith(("-m serverbench", "setup "))]


def test_one_harness_process_then_analysis_only(tree):
    proc, calls = _run(tree, "supported", "--profile", "smoke", "--sweep-id", "s1")
    assert proc.returncode == 0, proc.stderr
    assert calls == [
        # the Python environment, then only the toolchains of the languages the profile runs
        "setup python_only=1 languages=",
        "-m serverbench profiles --needs smoke",
        "setup python_only=0 languages=go,erlang,nodejs",
        "-m serverbench run --profile smoke --sweep-id s1",
        "-m serverbench notebooks --profile smoke --no-run --sweep-id s1",
    ]


def test_a_claim_in_error_fails_the_run(tree):
    proc, calls = _run(tree, "error", "--profile", "smoke", "--sweep-id", "s2")
    assert proc.returncode == 1
    assert "C2" in proc.stderr and "error" in proc.stderr
    assert sum(c.startswith("-m serverbench run ") for c in calls) == 1


def test_no_run_analyses_only(tree):
    proc, calls = _run(tree, "supported", "--no-run", "--sweep-id", "old")
    assert proc.returncode == 0, proc.stderr
    assert calls == [
        "setup python_only=1 languages=",
        "-m serverbench notebooks --profile quick --no-run --sweep-id old",
    ]


def test_given_languages_are_built_as_given(tree):
    proc, calls = _run(tree, "supported", "--profile", "smoke", "--sweep-id", "s3", "--languages", "go")
    assert proc.returncode == 0, proc.stderr
    assert "setup python_only=0 languages=go" in calls
    assert not any(c.startswith("-m serverbench profiles") for c in calls)
