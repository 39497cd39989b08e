#!/usr/bin/env bash
# The test command: set-up (so it works on a fresh machine), then every suite, every tier.
# Every suite runs even if an earlier one failed; the exit status is non-zero if any failed.
#
# usage: scripts/test.sh [--fast] [SUITE ...]
#   (no argument)  set-up, then every suite below: what CI (.ci/run) runs
#   --fast         no set-up and no build: the pytest unit tier and each language's own
#                  unit tests whose toolchain is present (needs .venv; ~2-6 min)
#   SUITE          any of: go erlang rust_tokio scala java scala_actors scala_pekko
#                  scala_akka24 java_vthreads lint python python-unit python-integration
#                  (python: every tier; python-integration: every tier but the unit one)
# Extra pytest arguments can be passed with PYTEST_ARGS (e.g. PYTEST_ARGS="-k claims").
#
# The language suites build as they test (a JVM suite's `mvn package` compiles, tests and
# writes the jar once), so set-up skips the build and the Python suites come last: the
# process-level conformance suite and the end-to-end tests need the built programs.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

fast=0
if [ "${1:-}" = --fast ]; then fast=1; shift; fi

VPY="$ROOT/.venv/bin/python"
[ "${SERVERBENCH_NO_VENV:-0}" = 1 ] && VPY="$(command -v python3)"
if [ "$fast" = 1 ]; then
  [ -x "$VPY" ] || { printf 'test: error: --fast needs the environment: run scripts/setup.sh once\n' >&2; exit 2; }
else
  SERVERBENCH_SKIP_BUILD=1 "$ROOT/scripts/setup.sh"
fi

all=(go erlang rust_tokio scala java scala_actors scala_pekko scala_akka24 java_vthreads lint python)
suites=("$@")
if [ ${#suites[@]} -eq 0 ]; then
  if [ "$fast" = 1 ]; then suites=("${all[@]:0:9}" python-unit); else suites=("${all[@]}"); fi
fi

have() { command -v "$1" >/dev/null 2>&1; }
failed=()
passed=()
skipped=()
run_suite() {
  local name="$1"; shift
  printf '\n=== %s: %s\n' "$name" "$*"
  local t0=$SECONDS
  if "$@"; then passed+=("$name ($((SECONDS - t0)) s)"); else failed+=("$name ($((SECONDS - t0)) s)"); fi
}
# A JVM suite: `mvn package` runs the tests and writes the jar the Python suites run; with
# --fast only `mvn test` (no jar). MVN_EXTRA: e.g. java_vthreads' JDK 25 for surefire.
jvm_suite() {
  local name="$1" dir="$2"; shift 2
  local goal=package
  [ "$fast" = 1 ] && goal=test
  run_suite "$name" bash -c 'cd "$0" && mvn -q -B "$1" "${@:2}"' "$dir" "$goal" "$@"
}
pytest_suite() {  # pytest_suite NAME MARK-EXPRESSION [PYTEST-ARGS...]
  eval "local pyargs=(${PYTEST_ARGS:-})"
  run_suite "$1" "$VPY" -m pytest -q -p no:cacheprovider --durations=15 -m "$2" "${@:3}" "${pyargs[@]}"
}
# Tests that start no native program run on every CPU (pytest-xdist); those that do run
# one at a time, so that their timings and the harness's interference checks are not
# disturbed by other tests.
CPUS="$(nproc 2>/dev/null || echo 1)"
UNIT='not (native or notebook or e2e or slow or slurm)'

for s in "${suites[@]}"; do
  # --fast: a language whose toolchain is missing is skipped, not failed
  if [ "$fast" = 1 ]; then
    case "$s" in
      go) have go || { skipped+=(go); continue; } ;;
      erlang) have rebar3 || { skipped+=(erlang); continue; } ;;
      rust_tokio) have cargo || { skipped+=(rust_tokio); continue; } ;;
      scala|java|scala_actors|scala_pekko|scala_akka24|java_vthreads) have mvn || { skipped+=("$s"); continue; } ;;
    esac
  fi
  case "$s" in
    go)     run_suite go bash -c '{ [ "$0" = 1 ] || scripts/build.sh go; } && cd src/go && go vet ./... &&
                                  { f="$(gofmt -l .)"; [ -z "$f" ] || { printf "gofmt -l lists:\n%s\n" "$f"; exit 1; }; } &&
                                  go test -count=1 ./...' "$fast" ;;
    # dialyzer: the first run on a machine builds the base PLT (~5 min on 2 busy cores; cached
    # in ~/.cache/rebar3), later runs ~20 s; bounded so a stuck build cannot hang the suite
    erlang) if [ "$fast" = 1 ]; then run_suite erlang bash -c 'cd src/erlang && rebar3 eunit'
            else run_suite erlang bash -c 'scripts/build.sh erlang && cd src/erlang && rebar3 eunit && timeout 1200 rebar3 dialyzer'; fi ;;
    # the parser against tests/conformance/parser-cases.json, each benchmark at toy sizes (~1 s)
    rust_tokio) run_suite rust_tokio bash -c '{ [ "$0" = 1 ] || scripts/build.sh rust_tokio; } && cd src/rust_tokio &&
                                  cargo fmt --check && cargo test --quiet --release --locked' "$fast" ;;
    scala)  jvm_suite scala src/scala ;;
    java)   jvm_suite java src/java ;;
    scala_actors) jvm_suite scala_actors src/scala_actors ;;
    scala_pekko) jvm_suite scala_pekko src/scala_pekko ;;
    scala_akka24) jvm_suite scala_akka24 src/scala_akka24 ;;
    # on JDK 25, the JDK its cli.json entry names (surefire's -Djvm; serverbench.jdks finds it)
    java_vthreads) if j="$(PYTHONPATH=src/python "$VPY" -c 'from serverbench import jdks; print(jdks.find_java(25))')"; then
                     jvm_suite java_vthreads src/java_vthreads -Djvm="$j"
                   else failed+=("java_vthreads (no JDK 25: $j)"); fi ;;
    lint)   run_suite lint bash -c '"$0" -m ruff check src/python tests/python &&
                                    "$0" -m ruff format --check src/python tests/python &&
                                    "$0" -m mypy && "$0" -m serverbench docs --check' "$VPY" ;;
    python-unit) pytest_suite python-unit "$UNIT" -n "$CPUS" ;;
    # the other tiers need every program: build what the language suites did not (c, the
    # runtimes of nodejs and the Python servers; the rest is up to date, so this is quick)
    python-integration|python)
            scripts/build.sh || true
            scripts/build.sh nodejs python_servers || true
            if [ "$s" = python ]; then pytest_suite python "not native" -n "$CPUS"
            else pytest_suite python-integration "not ($UNIT) and not native" -n "$CPUS"; fi
            pytest_suite python-native native ;;
    *) printf 'test: error: unknown suite %q (known: %s python-unit python-integration)\n' "$s" "${all[*]}" >&2; exit 2 ;;
  esac
done
printf '\n=== test suites\n'
for p in "${passed[@]}"; do printf '  ok      %s\n' "$p"; done
for k in "${skipped[@]}"; do printf '  skipped %s (toolchain not installed)\n' "$k"; done
for f in "${failed[@]}"; do printf '  FAILED  %s\n' "$f"; done
[ ${#failed[@]} -eq 0 ]
