#!/usr/bin/env bash
# The test command: set-up (so it works on a fresh machine), then every suite (lint: ruff, mypy, docs drift).
# Every suite runs even if an earlier one failed; the exit status is non-zero if any failed.
# usage: scripts/test.sh [python|go|erlang|scala|java|scala_actors|rust_tokio|scala_pekko|scala_akka24|java_vthreads|lint ...]
#        (default: all)
# Extra pytest arguments can be passed with PYTEST_ARGS (e.g. PYTEST_ARGS="-m 'not e2e'").
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
"$ROOT/scripts/setup.sh"

VPY="$ROOT/.venv/bin/python"
[ "${SERVERBENCH_NO_VENV:-0}" = 1 ] && VPY="$(command -v python3)"

suites=("$@")
[ ${#suites[@]} -gt 0 ] || suites=(go erlang scala java scala_actors rust_tokio lint python)

[ $# -gt 0 ] || suites+=(scala_pekko scala_akka24 java_vthreads)  # the JVM runtime points of issue 29
failed=()
passed=()
run_suite() {
  local name="$1"; shift
  printf '\n=== %s: %s\n' "$name" "$*"
  local t0=$SECONDS
  if "$@"; then passed+=("$name ($((SECONDS - t0)) s)"); else failed+=("$name"); fi
}

for s in "${suites[@]}"; do
  case "$s" in
    go)     run_suite go     bash -c 'scripts/build.sh go && cd src/go && go vet ./... &&
                                      { f="$(gofmt -l .)"; [ -z "$f" ] || { printf "gofmt -l lists:\n%s\n" "$f"; exit 1; }; } &&
                                      go test -count=1 ./...' ;;
    # dialyzer: the first run on a machine builds the base PLT (~5 min on 2 busy cores; cached
    # in ~/.cache/rebar3), later runs ~20 s; bounded so a stuck build cannot hang the suite
    erlang) run_suite erlang bash -c 'cd src/erlang && rebar3 eunit && timeout 1200 rebar3 dialyzer' ;;
    scala)  run_suite scala  bash -c 'cd src/scala && mvn -q -B test' ;;
    java)   run_suite java   bash -c 'cd src/java && mvn -q -B test' ;;
    scala_actors) run_suite scala_actors bash -c 'cd src/scala_actors && mvn -q -B test' ;;
    scala_pekko) run_suite scala_pekko bash -c 'cd src/scala_pekko && mvn -q -B test' ;;
    scala_akka24) run_suite scala_akka24 bash -c 'cd src/scala_akka24 && mvn -q -B test' ;;
    # on JDK 25, the JDK its cli.json entry names (surefire's -Djvm; serverbench.jdks finds it)
    java_vthreads) run_suite java_vthreads bash -c 'j="$(PYTHONPATH=src/python "$0" -c "from serverbench import jdks; print(jdks.find_java(25))")" &&
                                      cd src/java_vthreads && mvn -q -B test -Djvm="$j"' "$VPY" ;;
    # tiny: the parser against cli.json, the payload rule, each benchmark at toy sizes (~1 s)
    rust_tokio) run_suite rust_tokio bash -c 'scripts/build.sh rust_tokio && cd src/rust_tokio &&
                                      cargo fmt --check && cargo test --quiet --release --locked' ;;
    lint)   run_suite lint   bash -c '"$0" -m ruff check src/python tests/python &&
                                      "$0" -m ruff format --check src/python tests/python &&
                                      "$0" -m mypy && "$0" -m serverbench docs --check' "$VPY" ;;
    # the conformance suite (tests/python/conformance) drives the built programs: build first
    python) scripts/build.sh || true
            eval "pyargs=(${PYTEST_ARGS:-})"
            run_suite python "$VPY" -m pytest -q -p no:cacheprovider "${pyargs[@]}" ;;
    *) printf 'test: error: unknown suite %q (known: python, go, erlang, scala, java, scala_actors, rust_tokio, scala_pekko, scala_akka24, java_vthreads, lint)\n' "$s" >&2; exit 2 ;;
  esac
done

printf '\n=== test suites\n'
for p in "${passed[@]}"; do printf '  ok      %s\n' "$p"; done
for f in "${failed[@]}"; do printf '  FAILED  %s\n' "$f"; done
[ ${#failed[@]} -eq 0 ]
