#!/usr/bin/env bash
# The reproduction in one command: set-up -> build -> the sweep in ONE harness process
# (python -m serverbench run) -> the notebooks, analysis only (papermill) -> the report.
# Exits non-zero when any claim's verdict is 'error'. See README.md.
set -euo pipefail

usage() {
  cat <<'USAGE'
usage: ./run_all.sh [--profile NAME|FILE.toml] [--piece NAME] [--no-run] [--sweep-id ID]
                    [--languages L1,L2,...] [--no-reference] [--no-pdf]
                    [--allow-dirty] [--help]

  --profile P     sweep profile (default: quick); `python -m serverbench profiles`
                  lists every profile with its runs and estimated duration
  --piece NAME    one piece of a profile with [pieces] (the paper's: one session on one
                  machine each), into its own sweep <profile>-<piece>-<time>
  --no-run        run no benchmark: re-render tables, figures and the report from the
                  raw logs already in data/raw (the newest sweep of the profile, or --sweep-id);
                  needs the Python environment only (no toolchain, no build, no root)
  --sweep-id ID   the sweep to write or read (data/raw/ID); giving an existing one
                  resumes it, skipping runs already recorded ok
  --languages L   comma-separated subset of the languages in spec/cli.json; set-up
                  checks and builds only their toolchains (without it: only those of
                  the languages the profile, or its --piece, runs: `python -m serverbench
                  profiles --needs P [--piece NAME]`)
  --no-reference  do not overlay the paper's own values on the figures
  --no-pdf        write paper/report.html only (no chromium needed)
  --allow-dirty   record a sweep although tracked files differ from the commit
                  (refused by default: the manifest's commit would not say what ran;
                  what the pipeline writes, paper/ and data/, does not count)

Outputs: data/raw/<sweep-id>/ (raw logs), data/processed/<sweep-id>/ (tables),
paper/figures/ (PNG, PDF), paper/report.html, paper/executed/ (executed notebooks).
Exit status: 0 when every step succeeded, non-zero otherwise (also when a claim's
verdict in data/processed/<sweep-id>/claims.csv is 'error').
USAGE
}

profile=quick; piece=""; run=1; sweep_id=""; languages=""; reference=1; pdf=1; allow_dirty=0
while [ $# -gt 0 ]; do
  case "$1" in
    -h|--help) usage; exit 0 ;;
    --profile) [ $# -ge 2 ] || { echo "error: --profile needs a value" >&2; exit 2; }; profile="$2"; shift 2 ;;
    --profile=*) profile="${1#*=}"; shift ;;
    --piece) [ $# -ge 2 ] || { echo "error: --piece needs a value" >&2; exit 2; }; piece="$2"; shift 2 ;;
    --piece=*) piece="${1#*=}"; shift ;;
    --sweep-id) [ $# -ge 2 ] || { echo "error: --sweep-id needs a value" >&2; exit 2; }; sweep_id="$2"; shift 2 ;;
    --sweep-id=*) sweep_id="${1#*=}"; shift ;;
    --languages) [ $# -ge 2 ] || { echo "error: --languages needs a value" >&2; exit 2; }; languages="$2"; shift 2 ;;
    --languages=*) languages="${1#*=}"; shift ;;
    --no-run) run=0; shift ;;
    --no-reference) reference=0; shift ;;
    --no-pdf) pdf=0; shift ;;
    --allow-dirty) allow_dirty=1; shift ;;
    *) echo "error: unknown argument '$1' (see ./run_all.sh --help)" >&2; exit 2 ;;
  esac
done

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$ROOT"
t0=$SECONDS

echo "== set-up and build"
[ "$pdf" = 1 ] || export SERVERBENCH_NO_PDF=1
# The Python environment first: it says which languages the profile runs (clients and
# socket servers), so set-up checks and builds only their toolchains.
SERVERBENCH_PYTHON_ONLY=1 ./scripts/setup.sh
VPY="$ROOT/.venv/bin/python"
[ "${SERVERBENCH_NO_VENV:-0}" = 1 ] && VPY="$(command -v python3)"
if [ "$run" = 1 ]; then
  needs="$languages"
  [ -n "$needs" ] || needs="$("$VPY" -m serverbench profiles --needs "$profile" ${piece:+--piece "$piece"})"
  echo "== toolchains and builds for: $needs"
  SERVERBENCH_LANGUAGES="$needs" ./scripts/setup.sh
fi

if [ "$run" = 1 ]; then
  if [ -z "$sweep_id" ]; then
    name="$(basename "$profile")"
    sweep_id="${name%.toml}${piece:+-$piece}-$(date -u +%Y%m%dT%H%M%SZ)"
  fi
  run_args=(run --profile "$profile" --sweep-id "$sweep_id")
  [ -n "$piece" ] && run_args+=(--piece "$piece")
  [ -n "$languages" ] && run_args+=(--languages "$languages")
  [ "$allow_dirty" = 1 ] && run_args+=(--allow-dirty)
  echo "== sweep $sweep_id (profile: $profile): one harness process"
  "$VPY" -m serverbench "${run_args[@]}"
elif [ -z "$sweep_id" ]; then
  sweep_id="$("$VPY" -c 'import sys; from serverbench.harness import latest_sweep
p = latest_sweep(sys.argv[1].rsplit("/", 1)[-1].removesuffix(".toml"))
print(p.name if p else "")' "$profile")"
  [ -n "$sweep_id" ] || { echo "error: no sweep of profile '$profile' under data/raw to re-render (drop --no-run)" >&2; exit 2; }
fi

nb_args=(notebooks --profile "$profile" --no-run --sweep-id "$sweep_id")
[ -n "$languages" ] && nb_args+=(--languages "$languages")
[ "$reference" = 1 ] || nb_args+=(--no-reference)
[ "$pdf" = 1 ] || nb_args+=(--no-pdf)
echo "== figures and report of $sweep_id (analysis only)"
"$VPY" -m serverbench "${nb_args[@]}"

claims="${SERVERBENCH_DATA:-${SERVERBENCH_ROOT:-.}/data}/processed/$sweep_id/claims.csv"  # as paths.processed_dir()
if [ ! -f "$claims" ]; then
  "$VPY" -m serverbench process "$sweep_id" >/dev/null
fi
echo "== claims ($claims)"
errors="$("$VPY" -c 'import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], encoding="utf-8", newline="")))
bad = [r["id"] for r in rows if r["verdict"].strip() == "error"]
print(" ".join(bad))' "$claims")"

echo "== done in $((SECONDS - t0)) s"
if [ -n "$errors" ]; then
  echo "error: the verdict of claim(s) $errors is 'error' (see $claims and paper/report.html)" >&2
  exit 1
fi
