#!/usr/bin/env bash
# Build the native benchmark programs to the paths spec/cli.json names.
# usage: scripts/build.sh [--dry-run] [LANGUAGE|FOLDER|all ...]
#   --dry-run prints "FOLDER KIND NEEDS SOURCES..." for each folder it would build, and builds
#             nothing. NEEDS is what the build needs to work there, comma-separated: a compiled
#             folder's tool (mvn, go, rebar3, cargo, gcc), or the languages of an interpreted
#             folder whose commands it checks. scripts/setup.sh installs what provides them.
#   LANGUAGE  a language of spec/cli.json: builds the folder its executable lives in (src/<folder>/);
#             in an interpreted folder only this language's runtime is checked
#   FOLDER    such a folder by name (scala builds scala_akka and scala; python_servers its three servers)
#   all       every such folder, interpreted ones too (what set-up provides by default)
#   (default: every folder with something to compile)
# How a folder is built follows from what it holds, so a new language needs no line here:
# pom.xml (Maven), go.mod (Go), rebar.config (rebar3), Cargo.toml (cargo), *.c (gcc). A folder
# with none of them (node.js, the Python servers) is run, not built: its runtime is checked by
# asking its languages' commands for --version. A folder is rebuilt only when a source file
# is newer than its output.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
log() { printf 'build: %s\n' "$*" >&2; }
# spec/cli.json is read with Python's json (set-up has made sure a Python 3 is there)
PY="${SERVERBENCH_PYTHON:-python3}"
command -v "$PY" >/dev/null 2>&1 || PY="$ROOT/.venv/bin/python"

# up_to_date OUTPUT PATH...: OUTPUT exists and no file under the PATHs is newer.
up_to_date() {
  local out="$1"; shift
  [ -e "$out" ] || return 1
  [ -z "$(find "$@" -type f -newer "$out" -print -quit 2>/dev/null)" ]
}

# resolve ARG...: one line per folder to build, "FOLDER EXECUTABLE LANGUAGE...", in the order
# first asked for: the languages asked for that are in it, or all of them (spec/cli.json's
# languages whose executable is in it) when the folder was asked by name or as `all`; exit 2
# with one error line for an argument that is neither a language nor such a folder. Only
# these languages' runtimes are checked, so a profile that runs ngircd needs no InspIRCd.
resolve() {
  "$PY" - "$ROOT/spec/cli.json" "$@" <<'PY'
import json, sys
languages = json.load(open(sys.argv[1], encoding="utf-8"))["languages"]
folders = {}  # folder -> (executable, [languages])
for name, spec in languages.items():
    folder = spec["executable"].split("/")[1]
    folders.setdefault(folder, (spec["executable"], []))[1].append(name)
wanted = {}  # folder -> the languages asked for in it
for arg in sys.argv[2:]:
    for word in folders if arg == "all" else [arg]:
        folder = languages[word]["executable"].split("/")[1] if word in languages else word
        if folder not in folders:
            sys.exit(f"build: error: unknown language {word!r} (known: {', '.join(languages)}; "
                     f"or a folder: {', '.join(folders)}; or all)")
        wanted.setdefault(folder, set()).update([word] if word in languages else folders[folder][1])
for folder, asked in wanted.items():
    exe, names = folders[folder]
    print(folder, exe, *(n for n in names if n in asked))
PY
}

# --- one builder per kind of folder ----------------------------------------------------

# Maven: the jar the spec names; sources are the folder's, its parent POM's (<parent>'s
# <relativePath>, by default ../pom.xml: the versions and plugins of every JVM jar) and any
# folder its pom.xml compiles in too (${project.basedir}/../<folder>/... : the one Scala
# tree, src/java's shared sources), so a change there rebuilds every jar made from it.
maven_sources() {
  local d="$1" parent
  printf '%s\n' "$d/pom.xml" "$d/src/main"
  if grep -q '<parent>' "$d/pom.xml"; then
    parent="$(sed -n 's|.*<relativePath>\(.*\)</relativePath>.*|\1|p' "$d/pom.xml" | head -n 1)"
    parent="$d/${parent:-../pom.xml}"
    [ -d "$parent" ] && parent="$parent/pom.xml"
    realpath -m "$parent"
  fi
  { grep -o '${project.basedir}/\.\./[A-Za-z0-9_][A-Za-z0-9_]*' "$d/pom.xml" || true; } |
    sed 's|${project.basedir}/\.\./||' | sort -u | while read -r f; do printf '%s\n' "$ROOT/src/$f/src/main"; done
}
build_maven() {
  local d="$1" out="$2"
  local -a sources
  mapfile -t sources < <(maven_sources "$d")
  if up_to_date "$out" "${sources[@]}" "$ROOT/spec/cli.json"; then return; fi
  log "mvn package -> ${out#"$ROOT/"}"
  (cd "$d" && mvn -q -B -DskipTests package)
}

# Go reads spec/cli.json from an embedded copy (gitignored) refreshed before every build;
# `go test` checks it is current. GOEXPERIMENT is unset for the default build, so that a
# stray export cannot change its GC. The second program is the same code without the Green
# Tea GC (spec/cli.json languages.go.settings.gc): the collector is chosen at build time. Go
# < 1.25 has no Green Tea to switch off; then it is not built and the setting is refused.
build_go() {
  local d="$1" out="$2" minor
  cmp -s "$ROOT/spec/cli.json" "$d/internal/cli/cli.json" || cp "$ROOT/spec/cli.json" "$d/internal/cli/cli.json"
  if ! up_to_date "$out" "$d/go.mod" "$d/cmd" "$d/internal"; then
    log "go build -> ${out#"$ROOT/"}"
    (cd "$d" && env -u GOEXPERIMENT go build -o "$out" ./cmd/serverbench)
  fi
  if up_to_date "$out-nogreenteagc" "$d/go.mod" "$d/cmd" "$d/internal"; then return; fi
  minor="$(go env GOVERSION | sed -n 's/^go1\.\([0-9]*\).*/\1/p')"
  if [ -z "$minor" ] || [ "$minor" -lt 25 ]; then
    log "go $(go env GOVERSION) has no Green Tea GC: ${out#"$ROOT/"}-nogreenteagc not built"
    return
  fi
  log "GOEXPERIMENT=nogreenteagc go build -> ${out#"$ROOT/"}-nogreenteagc"
  (cd "$d" && GOEXPERIMENT=nogreenteagc go build -o "$out-nogreenteagc" ./cmd/serverbench)
}

# rebar.config's pre-compile hook builds spec/cli.json into the escript (include/, gitignored).
build_rebar3() {
  local d="$1" out="$2"
  if up_to_date "$out" "$d/rebar.config" "$d/src" "$ROOT/spec/cli.json"; then return; fi
  log "rebar3 escriptize -> ${out#"$ROOT/"}"
  (cd "$d" && rebar3 escriptize >/dev/null)
}

# cargo with the committed Cargo.lock (--locked: a changed dependency fails instead of
# silently re-resolving); crates come from the registry on the first build.
build_cargo() {
  local d="$1" out="$2" bin
  bin="$(basename "$out")"
  if up_to_date "$out" "$d/Cargo.toml" "$d/Cargo.lock" "$d/build.rs" "$d/src" "$ROOT/spec/cli.json"; then return; fi
  need_runtime "$(basename "$d")" cargo --version
  log "cargo build --release --locked -> ${out#"$ROOT/"}"
  (cd "$d" && cargo build --quiet --release --locked && mkdir -p "$(dirname "$out")" &&
    install -m 755 "target/release/$bin" "$out")
}

build_gcc() {
  local d="$1" out="$2"
  if up_to_date "$out" "$d"/*.c "$d"/*.h; then return; fi
  log "gcc -> ${out#"$ROOT/"}"
  mkdir -p "$(dirname "$out")"
  ${CC:-gcc} -O2 -Wall -Wextra -std=gnu11 -pthread -o "$out" "$d"/*.c -lm
}

need_runtime() {  # need_runtime NAME COMMAND...: the runtime answers, else say how to get it
  local l="$1"; shift
  "$@" >/dev/null 2>&1 || { printf 'build: error: %s needs `%s` to work (run scripts/setup.sh)\n' "$l" "$*" >&2; exit 1; }
}

# A folder run by an interpreter: each language's command (spec/cli.json, up to its first
# option) answers --version, which needs the runtime and the language's own libraries.
check_runtimes() {
  local exe="$1" lang; shift
  for lang in "$@"; do
    local -a cmd
    mapfile -t cmd < <("$PY" - "$ROOT/spec/cli.json" "$lang" "$ROOT/$exe" <<'PY'
import json, sys
command = json.load(open(sys.argv[1], encoding="utf-8"))["languages"][sys.argv[2]]["command"]
for word in command:
    if word.startswith("-"):
        break
    print(word.replace("{exe}", sys.argv[3]))
PY
)
    need_runtime "$lang" "${cmd[@]}" --version
  done
}

kind_of() {  # kind_of DIR: how the folder is built (maven, go, rebar3, cargo, gcc) or run (interpreted)
  local d="$1"
  if [ -f "$d/pom.xml" ]; then echo maven
  elif [ -f "$d/go.mod" ]; then echo go
  elif [ -f "$d/rebar.config" ]; then echo rebar3
  elif [ -f "$d/Cargo.toml" ]; then echo cargo
  elif compgen -G "$d/*.c" >/dev/null; then echo gcc
  else echo interpreted
  fi
}

needs_of() {  # needs_of KIND LANGUAGE...: what the folder's build needs (--dry-run's NEEDS)
  local kind="$1"; shift
  case "$kind" in
    maven) echo mvn ;;
    interpreted) local IFS=,; echo "$*" ;;  # the languages whose commands check_runtimes runs
    *) echo "$kind" ;;  # go, rebar3, cargo, gcc: the tool is named as the kind
  esac
}

build_folder() {  # build_folder FOLDER EXECUTABLE LANGUAGE...
  local d="$ROOT/src/$1" out="$ROOT/$2" kind; shift 2
  kind="$(kind_of "$d")"
  if [ "$dry_run" = 1 ]; then
    local -a sources=()
    [ "$kind" = maven ] && mapfile -t sources < <(maven_sources "$d")
    echo "$(basename "$d") $kind $(needs_of "$kind" "$@") ${sources[*]//"$ROOT/"/}"
    return
  fi
  case "$kind" in
    maven) build_maven "$d" "$out" ;;
    go) build_go "$d" "$out" ;;
    rebar3) build_rebar3 "$d" "$out" ;;
    cargo) build_cargo "$d" "$out" ;;
    gcc) build_gcc "$d" "$out" ;;
    interpreted) check_runtimes "${out#"$ROOT/"}" "$@" ;;
  esac
}

compiled() {  # the folders with something to compile (the default)
  local f
  for f in "$ROOT"/src/*/; do
    [ "$(kind_of "$f")" = interpreted ] || basename "$f"
  done
}

dry_run=0
if [ "${1:-}" = --dry-run ]; then dry_run=1; shift; fi
args=("$@")
if [ ${#args[@]} -eq 0 ]; then mapfile -t args < <(compiled); fi
plan="$(resolve "${args[@]}")" || exit 2
# The plan is read on fd 3 and the builders get no stdin: rebar3 (an Erlang shell) reads
# stdin, and on fd 0 it swallowed the rest of the plan, so nothing after it was built.
while read -r folder exe langs <&3; do
  [ -n "$folder" ] || continue
  # shellcheck disable=SC2086  # the languages, one word each
  build_folder "$folder" "$exe" $langs </dev/null
done 3<<< "$plan"
