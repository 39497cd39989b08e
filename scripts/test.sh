#!/usr/bin/env bash
# The test command: set-up (so it works on a fresh machine), then every suite, every tier.
# Every suite runs even if an earlier one failed; the exit status is non-zero if any failed.
#
# usage: scripts/test.sh [--fast] [SUITE ...]
#   (no argument)  set-up, then every suite below: what CI (.ci/run) runs
#   --fast         no set-up and no build (but Go's, a no-op when up to date): the pytest
#                  unit tier and each language's own unit tests whose toolchain is present
#                  (needs .venv; ~2-6 min)
#   SUITE          a language folder of src/ (one that scripts/build.sh compiles; its
#                  --dry-run lists them; c has no unit tests of its own), lint, python,
#                  python-unit or python-integration (python: every tier;
#                  python-integration: every tier but the unit one)
# Extra pytest arguments can be passed with PYTEST_ARGS (e.g. PYTEST_ARGS="-k claims").
#
# The language suites build as they test (a JVM suite's `mvn package` compiles, tests and
# writes the jar once), so set-up skips the build and the Python suites come last: the
# process-level conformance suite and the end-to-end tests need the built programs.
#
# On 2 CPUs the whole command takes about as long as its work keeps both CPUs busy, so the
# waits are filled: (1) set-up's longest step, the Python environment (.venv from
# requirements.lock, the kernel, JDK 25), is needed by none of the suites up to scala_akka24;
# when every toolchain is already installed (set-up would install none) it runs in the
# background beside them, and the first suite that needs it waits for it. (2) The language
# suites and lint run two at a time (SUITE_JOBS), each one's output shown whole when it ends.
# (3) The Python tests run as two groups: those that measure nothing (no native program, or
# one whose output alone is checked: tests/python/conftest.py, marker shares_cpu) on every
# CPU, the longest first; then the native tests that assert times or CPU shares, one at a
# time, with nothing else running.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

fast=0
if [ "${1:-}" = --fast ]; then fast=1; shift; fi

have() { command -v "$1" >/dev/null 2>&1; }
VPY="$ROOT/.venv/bin/python"
[ "${SERVERBENCH_NO_VENV:-0}" = 1 ] && VPY="$(command -v python3)"

# Whether set-up would install no toolchain (what it checks for the default languages, and a
# JDK 25), so that it may run beside the suites that use them.
toolchains_ready() {
  local t
  for t in erl rebar3 go cargo javac java mvn gcc node python3; do have "$t" || return 1; done
  for t in ngircd inspircd; do have "$t" || [ -x "/usr/sbin/$t" ] || return 1; done
  [ "${SERVERBENCH_NO_PDF:-0}" = 1 ] || have chromium || return 1
  [ "$(java -version 2>&1 | awk -F'"' '/version/ {split($2, v, "."); print (v[1] == "1" ? v[2] : v[1]); exit}')" -ge 17 ] \
    2>/dev/null || return 1
  erl -noshell -eval 'case code:which(eunit) of non_existing -> halt(1); _ -> halt(0) end.' >/dev/null 2>&1 || return 1
  PYTHONPATH="$ROOT/src/python" python3 -c 'from serverbench import jdks; jdks.find_java(25)' >/dev/null 2>&1
}
setup_pid=""
setup_log=""
join_setup() {  # wait for a set-up running in the background; show its output; stop if it failed
  [ -n "$setup_pid" ] || return 0
  local rc=0
  wait "$setup_pid" || rc=$?
  setup_pid=""
  printf '\n=== set-up (in the background since the start)\n'
  cat "$setup_log"
  rm -f "$setup_log"
  if [ "$rc" != 0 ]; then printf 'test: error: set-up failed (exit %s)\n' "$rc" >&2; exit "$rc"; fi
}
if [ "$fast" = 1 ]; then
  [ -x "$VPY" ] || { printf 'test: error: --fast needs the environment: run scripts/setup.sh once\n' >&2; exit 2; }
elif toolchains_ready; then
  setup_log="$(mktemp)"
  ( r=0; SERVERBENCH_SKIP_BUILD=1 "$ROOT/scripts/setup.sh" || r=$?; echo "set-up ended at $SECONDS s"; exit "$r" ) >"$setup_log" 2>&1 &
  setup_pid=$!
  printf 'test: set-up runs in the background (every toolchain is installed); its output follows later\n'
else
  SERVERBENCH_SKIP_BUILD=1 "$ROOT/scripts/setup.sh"
fi

# The language suites: one per folder of src/ that scripts/build.sh compiles (its --dry-run
# names each with its kind and tool), run by that kind's own tools, so that a new language's folder
# brings its suite with it; c has no unit-test runner (the process-level conformance suite
# runs its cases). A Maven folder's tests run on the lowest JDK any of its languages runs on
# (spec/cli.json's `jdk`, else 17): java_vthreads' on 25, found through the Python
# environment (serverbench.jdks), so that suite waits for set-up and the others need not.
declare -A kind_of=() tool_of=() test_jdk=()
lang_suites=()
while read -r folder kind tool _; do
  [ "$kind" = gcc ] && continue
  kind_of[$folder]="$kind"
  tool_of[$folder]="$tool"
  lang_suites+=("$folder")
done < <(scripts/build.sh --dry-run)
PY3="$(command -v python3 || echo "$VPY")"
while read -r folder jdk; do test_jdk[$folder]="$jdk"; done < <("$PY3" - spec/cli.json <<'PY'
import json, sys
jdks = {}
for spec in json.load(open(sys.argv[1], encoding="utf-8"))["languages"].values():
    if "jdk" in spec:
        folder = spec["executable"].split("/")[1]
        jdks[folder] = min(jdks.get(folder, spec["jdk"]), spec["jdk"])
for folder, jdk in jdks.items():
    print(folder, jdk)
PY
)
all=("${lang_suites[@]}" lint python)
suites=("$@")
if [ ${#suites[@]} -eq 0 ]; then
  if [ "$fast" = 1 ]; then suites=("${lang_suites[@]}" python-unit); else suites=("${all[@]}"); fi
fi

# While set-up runs in the background, the suites that do not need it go first: the first one
# that needs it (lint, a Maven folder tested on a JDK newer than 17) waits for set-up, and
# with it the launch of every suite after it, which left a CPU idle for about 2 minutes of a
# fresh clone's CI. Each group keeps its order.
needs_setup() { [ -z "${kind_of[$1]:-}" ] || [ "${test_jdk[$1]:-17}" -gt 17 ]; }
if [ -n "$setup_pid" ]; then
  early=() late=()
  for s in "${suites[@]}"; do if needs_setup "$s"; then late+=("$s"); else early+=("$s"); fi; done
  suites=("${early[@]}" "${late[@]}")
fi

failed=()
passed=()
skipped=()
# cpu_of FILE: the user + system CPU seconds of the ended children in FILE, the output of
# the builtin `times` run in the suite's own subshell (second line, e.g. "1m2.5s 0m3.1s"):
# each suite's summary says what it cost besides how long it took; on 2 CPUs the sum of
# the costs divided by 2 is the floor of the whole command's time.
cpu_of() {
  awk 'NR == 2 { t = 0; for (i = 1; i <= 2; i++) { split($i, a, /[ms]/); t += a[1] * 60 + a[2] } printf "%.0f", t }' "$1" 2>/dev/null
}
run_suite() {
  local name="$1"; shift
  printf '\n=== %s: %s\n' "$name" "$*"
  local t0=$SECONDS rc=0 cpu
  ( r=0; "$@" || r=$?; times >"$bg_dir/$name.times"; exit "$r" ) || rc=$?
  cpu="$(cpu_of "$bg_dir/$name.times")"
  local took="$((SECONDS - t0)) s from ${t0} s, CPU ${cpu:-?} s"
  if [ "$rc" = 0 ]; then passed+=("$name ($took)"); else failed+=("$name ($took)"); fi
}
# The language suites and lint run SUITE_JOBS at a time (default 2): a Scala compiler, a
# dialyzer or a test JVM keeps about one CPU busy, so one suite at a time left a CPU idle
# for much of their 4-5 minutes. Each one's output is shown whole when it ends; its time
# in the summary is its wall time beside the other one.
SUITE_JOBS="${SUITE_JOBS:-2}"
bg_dir="$(mktemp -d)"
declare -A bg_name=()  # pid -> suite
run_suite_bg() {  # run_suite_bg NAME COMMAND...: as run_suite, in the background
  local name="$1"; shift
  while [ "${#bg_name[@]}" -ge "$SUITE_JOBS" ]; do collect_suite; done
  (
    t0=$SECONDS
    printf '\n=== %s: %s\n' "$name" "$*"
    rc=0
    "$@" || rc=$?
    times >"$bg_dir/$name.times"
    echo "$rc $((SECONDS - t0)) $t0" >"$bg_dir/$name.rc"
  ) >"$bg_dir/$name.log" 2>&1 &
  bg_name[$!]="$name"
}
collect_suite() {  # wait for the next background suite to end; show its output, count it
  local pid="" name rc=1 secs="?" from="?" cpu
  wait -n -p pid "${!bg_name[@]}" || true
  [ -n "$pid" ] || return 0
  name="${bg_name[$pid]}"
  unset "bg_name[$pid]"
  cat "$bg_dir/$name.log"
  read -r rc secs from <"$bg_dir/$name.rc" || true
  cpu="$(cpu_of "$bg_dir/$name.times")"
  local took="$secs s from $from s, CPU ${cpu:-?} s"
  if [ "$rc" = 0 ]; then passed+=("$name ($took)"); else failed+=("$name ($took)"); fi
}
collect_suites() { while [ "${#bg_name[@]}" -gt 0 ]; do collect_suite; done; }
cleanup() {
  local p
  for p in "${!bg_name[@]}" $setup_pid; do kill "$p" 2>/dev/null || true; done
  rm -rf "$bg_dir"
}
trap cleanup EXIT
# A JVM suite: `mvn package` runs the tests and writes the jar the Python suites run; with
# --fast only `mvn test` (no jar). MVN_EXTRA: e.g. java_vthreads' JDK 25 for surefire.
jvm_suite() {
  local name="$1" dir="$2"; shift 2
  local goal=package
  [ "$fast" = 1 ] && goal=test
  run_suite_bg "$name" bash -c 'cd "$0" && mvn -q -B "$1" "${@:2}"' "$dir" "$goal" "$@"
}
pytest_suite() {  # pytest_suite NAME MARK-EXPRESSION [PYTEST-ARGS...]
  eval "local pyargs=(${PYTEST_ARGS:-})"
  run_suite "$1" "$VPY" -m pytest -q -p no:cacheprovider --durations=15 -m "$2" "${@:3}" "${pyargs[@]}"
}
# Tests that start no native program, and native tests that measure nothing (shares_cpu:
# they check what a program printed or a notebook showed), run on every CPU (pytest-xdist,
# the longest first); the other native tests run one at a time, so that their timings, CPU
# shares and the harness's interference checks are not disturbed by other tests.
CPUS="$(nproc 2>/dev/null || echo 1)"
# One worker per CPU (PYTEST_WORKERS to change it): with one more on 2 CPUs the shared tier
# took 509 s and 936 CPU-s instead of 441 s and 765 CPU-s (fresh-clone CI, 2-core AMD EPYC).
WORKERS="${PYTEST_WORKERS:-$CPUS}"
UNIT='not (native or notebook or e2e or slow or slurm)'
SHARED='(not native or shares_cpu)'

for s in "${suites[@]}"; do
  kind="${kind_of[$s]:-}"
  jdk="${test_jdk[$s]:-17}"
  # a language suite needs the Python environment only to find a JDK newer than 17
  if needs_setup "$s"; then join_setup; fi
  # --fast: a language whose toolchain is missing is skipped, not failed
  if [ "$fast" = 1 ] && [ -n "$kind" ]; then
    have "${tool_of[$s]}" || { skipped+=("$s"); continue; }
  fi
  case "${kind:-$s}" in
    # built even with --fast: Go's tests read spec/cli.json through the build's embedded copy,
    # and build.sh does nothing when the programs are newer than their sources and the spec
    go)     run_suite_bg "$s" bash -c 'scripts/build.sh "$0" && cd "src/$0" && go vet ./... &&
                                  { f="$(gofmt -l .)"; [ -z "$f" ] || { printf "gofmt -l lists:\n%s\n" "$f"; exit 1; }; } &&
                                  go test -count=1 ./...' "$s" ;;
    # dialyzer: the first run on a machine builds the base PLT (~5 min on 2 busy cores; cached
    # in ~/.cache/rebar3), later runs ~20 s; bounded so a stuck build cannot hang the suite
    rebar3) if [ "$fast" = 1 ]; then run_suite_bg "$s" bash -c 'cd "src/$0" && rebar3 eunit' "$s"
            else run_suite_bg "$s" bash -c 'scripts/build.sh "$0" && cd "src/$0" && rebar3 eunit && timeout 1200 rebar3 dialyzer' "$s"; fi ;;
    # the parser against tests/conformance/parser-cases.json, each benchmark at toy sizes (~1 s)
    cargo)  run_suite_bg "$s" bash -c '{ [ "$1" = 1 ] || scripts/build.sh "$0"; } && cd "src/$0" &&
                                  cargo fmt --check && cargo test --quiet --release --locked' "$s" "$fast" ;;
    maven)  if [ "$jdk" -le 17 ]; then jvm_suite "$s" "src/$s"
            # on a newer JDK (surefire's -Djvm; serverbench.jdks finds it)
            elif j="$(PYTHONPATH=src/python "$VPY" -c 'import sys; from serverbench import jdks; print(jdks.find_java(int(sys.argv[1])))' "$jdk")"; then
              jvm_suite "$s" "src/$s" -Djvm="$j"
            else failed+=("$s (no JDK $jdk: $j)"); fi ;;
    lint)   run_suite_bg lint bash -c '"$0" -m ruff check src/python tests/python &&
                                    "$0" -m ruff format --check src/python tests/python &&
                                    "$0" -m mypy && "$0" -m serverbench docs --check' "$VPY" ;;
    python-unit) collect_suites; pytest_suite python-unit "$UNIT" -n "$CPUS" ;;
    # the other tiers need every program: build what the language suites did not (c, the
    # runtimes of nodejs and the Python servers; the rest is up to date, so this is quick)
    python-integration|python)
            collect_suites
            scripts/build.sh || true
            scripts/build.sh nodejs python_servers || true
            if [ "$s" = python ]; then pytest_suite python "$SHARED" -n "$WORKERS"
            else pytest_suite python-integration "not ($UNIT) and $SHARED" -n "$WORKERS"; fi
            pytest_suite python-native "native and not shares_cpu" -n 0 ;;
    *) printf 'test: error: unknown suite %q (known: %s python-unit python-integration)\n' "$s" "${all[*]}" >&2; exit 2 ;;
  esac
done
collect_suites
join_setup
printf '\n=== test suites\n'
for p in "${passed[@]}"; do printf '  ok      %s\n' "$p"; done
for k in "${skipped[@]}"; do printf '  skipped %s (toolchain not installed)\n' "$k"; done
for f in "${failed[@]}"; do printf '  FAILED  %s\n' "$f"; done
[ ${#failed[@]} -eq 0 ]
