#!/usr/bin/env bash
# Build the native benchmark programs to the paths spec/cli.json names.
# usage: scripts/build.sh [go|erlang|scala|java|scala_actors|c|rust_tokio|scala_pekko|scala_akka24|java_vthreads|nodejs|python_servers ...]
#        (default: the compiled ten)
# A language is rebuilt only when a source file is newer than its output.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
log() { printf 'build: %s\n' "$*" >&2; }

# up_to_date OUTPUT DIR...: OUTPUT exists and no file under DIRs is newer.
up_to_date() {
  local out="$1"; shift
  [ -e "$out" ] || return 1
  [ -z "$(find "$@" -type f -newer "$out" -print -quit 2>/dev/null)" ]
}

# The Go, Erlang and Scala parsers read spec/cli.json built into the program: Go embeds
# a copy (gitignored) that this refreshes before every build; `go test` checks it is current.
sync_go_spec() {
  cmp -s "$ROOT/spec/cli.json" "$ROOT/src/go/internal/cli/cli.json" ||
    cp "$ROOT/spec/cli.json" "$ROOT/src/go/internal/cli/cli.json"
}

build_go() {
  local d="$ROOT/src/go"
  sync_go_spec
  # GOEXPERIMENT is unset for the default build, so that a stray export cannot change its GC
  if ! up_to_date "$d/bin/serverbench" "$d/go.mod" "$d/cmd" "$d/internal"; then
    log "go build -> src/go/bin/serverbench"
    (cd "$d" && env -u GOEXPERIMENT go build -o bin/serverbench ./cmd/serverbench)
  fi
  build_go_nogreenteagc
}

# The same program without the Green Tea GC (spec/cli.json languages.go.settings.gc): the
# collector is chosen at build time, so the runtime setting is a second build. Go < 1.25
# has no Green Tea to switch off; then it is not built and the setting is refused.
build_go_nogreenteagc() {
  local d="$ROOT/src/go" out="bin/serverbench-nogreenteagc"
  if up_to_date "$d/$out" "$d/go.mod" "$d/cmd" "$d/internal"; then return; fi
  local minor
  minor="$(go env GOVERSION | sed -n 's/^go1\.\([0-9]*\).*/\1/p')"
  if [ -z "$minor" ] || [ "$minor" -lt 25 ]; then
    log "go $(go env GOVERSION) has no Green Tea GC: src/go/$out not built"
    return
  fi
  log "GOEXPERIMENT=nogreenteagc go build -> src/go/$out"
  (cd "$d" && GOEXPERIMENT=nogreenteagc go build -o "$out" ./cmd/serverbench)
}

build_erlang() {
  local d="$ROOT/src/erlang"
  # rebar.config's pre-compile hook builds spec/cli.json into the escript (include/, gitignored)
  if up_to_date "$d/_build/default/bin/serverbench" "$d/rebar.config" "$d/src" "$ROOT/spec/cli.json"; then return; fi
  log "rebar3 escriptize -> src/erlang/_build/default/bin/serverbench"
  (cd "$d" && rebar3 escriptize >/dev/null)
}

build_scala() {
  local d="$ROOT/src/scala"
  if up_to_date "$d/target/serverbench.jar" "$d/pom.xml" "$d/src/main" "$ROOT/spec/cli.json"; then return; fi
  log "mvn package -> src/scala/target/serverbench.jar"
  (cd "$d" && mvn -q -B -DskipTests package)
}

# java and scala_actors implement pingping only; cli.json is built into their jars.
build_java() {
  local d="$ROOT/src/java"
  if up_to_date "$d/target/serverbench-java.jar" "$d/pom.xml" "$d/src/main" "$ROOT/spec/cli.json"; then return; fi
  log "mvn package -> src/java/target/serverbench-java.jar"
  (cd "$d" && mvn -q -B -DskipTests package)
}

build_scala_actors() {  # also compiles src/java's shared serverbench.jvm sources
  local d="$ROOT/src/scala_actors"
  if up_to_date "$d/target/serverbench-scala-actors.jar" "$d/pom.xml" "$d/src/main" "$ROOT/src/java/src/main" "$ROOT/spec/cli.json"; then return; fi
  log "mvn package -> src/scala_actors/target/serverbench-scala-actors.jar"
  (cd "$d" && mvn -q -B -DskipTests package)
}

# echo_flood: the C server + load generator; node.js and the Python servers
# need no build, only their runtimes (scripts/setup.sh installs gcc, node, twisted, eventlet).
build_c() {
  local d="$ROOT/src/c"
  if up_to_date "$d/bin/serverbench-c" "$d"/*.c "$d"/*.h; then return; fi
  log "gcc -> src/c/bin/serverbench-c"
  mkdir -p "$d/bin"
  ${CC:-gcc} -O2 -Wall -Wextra -std=gnu11 -pthread -o "$d/bin/serverbench-c" "$d"/*.c -lm
}
# scala_pekko: one jar for scala_pekko, scala_pekko_jdk25 and
# scala_pekko_jdk25_compact (the runtime points differ only in the java that runs it).
build_scala_pekko() {
  local d="$ROOT/src/scala_pekko"
  if up_to_date "$d/target/serverbench-pekko.jar" "$d/pom.xml" "$d/src/main" "$ROOT/spec/cli.json"; then return; fi
  log "mvn package -> src/scala_pekko/target/serverbench-pekko.jar"
  (cd "$d" && mvn -q -B -DskipTests package)
}

# scala_akka24: the paper's own Akka 2.4.12 on Scala 2.11.12, the same program.
build_scala_akka24() {
  local d="$ROOT/src/scala_akka24"
  if up_to_date "$d/target/serverbench-akka24.jar" "$d/pom.xml" "$d/src/main" "$ROOT/spec/cli.json"; then return; fi
  log "mvn package -> src/scala_akka24/target/serverbench-akka24.jar"
  (cd "$d" && mvn -q -B -DskipTests package)
}

# java_vthreads: compiled for Java 17 with src/java's shared sources (any JDK 17+ javac),
# run on JDK 25 (its cli.json entry; serverbench.jdks finds that java).
build_java_vthreads() {
  local d="$ROOT/src/java_vthreads"
  if up_to_date "$d/target/serverbench-java-vthreads.jar" "$d/pom.xml" "$d/src/main" "$ROOT/src/java/src/main" "$ROOT/spec/cli.json"; then return; fi
  log "mvn package -> src/java_vthreads/target/serverbench-java-vthreads.jar"
  (cd "$d" && mvn -q -B -DskipTests package)
}

need_runtime() {  # need_runtime LANG COMMAND...: the runtime answers, else say how to get it
  local l="$1"; shift
  "$@" >/dev/null 2>&1 || { printf 'build: error: %s needs `%s` to work (run scripts/setup.sh)\n' "$l" "$*" >&2; exit 1; }
}

# rust_tokio: cargo with the committed Cargo.lock (--locked: a changed dependency fails
# instead of silently re-resolving); crates come from the registry on the first build.
build_rust_tokio() {
  local d="$ROOT/src/rust_tokio"
  if up_to_date "$d/bin/serverbench-rust-tokio" "$d/Cargo.toml" "$d/Cargo.lock" "$d/build.rs" "$d/src" "$ROOT/spec/cli.json"; then return; fi
  need_runtime rust_tokio cargo --version
  log "cargo build --release --locked -> src/rust_tokio/bin/serverbench-rust-tokio"
  (cd "$d" && cargo build --quiet --release --locked && mkdir -p bin &&
    install -m 755 target/release/serverbench-rust-tokio bin/serverbench-rust-tokio)
}

langs=("$@")
[ ${#langs[@]} -gt 0 ] || langs=(go erlang scala java scala_actors c rust_tokio)
[ $# -gt 0 ] || langs+=(scala_pekko scala_akka24 java_vthreads)  # the JVM runtime points
for l in "${langs[@]}"; do
  case "$l" in
    go) build_go ;;
    erlang) build_erlang ;;
    scala|scala_akka) build_scala ;;
    java) build_java ;;
    scala_actors) build_scala_actors ;;
    scala_pekko|scala_pekko_jdk25|scala_pekko_jdk25_compact) build_scala_pekko ;;
    java_vthreads) build_java_vthreads ;;
    scala_akka24) build_scala_akka24 ;;
    c) build_c ;;
    rust_tokio) build_rust_tokio ;;
    nodejs) need_runtime nodejs node --version ;;
    python_servers|twisted|eventlet|python_threads)
      need_runtime "$l" "$ROOT/src/python_servers/serverbench-py" python_threads --version ;;
    *) printf 'build: error: unknown language %q (known: go, erlang, scala, java, scala_actors, c, rust_tokio, scala_pekko, scala_akka24, java_vthreads, nodejs, python_servers)\n' "$l" >&2; exit 2 ;;
  esac
done
