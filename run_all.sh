#!/usr/bin/env bash
# The reproduction in one command: set-up -> build -> sweep and the three figure
# notebooks (papermill) -> the report (nbconvert). See README.md.
set -euo pipefail

usage() {
  cat <<'USAGE'
usage: ./run_all.sh [--profile smoke|quick|paper|FILE.toml] [--no-run] [--sweep-id ID]
                    [--languages erlang,go,scala_akka] [--no-reference] [--help]

  --profile P     sweep profile (default: quick, about 15 minutes on 2 cores;
                  smoke: about 2 minutes; paper: the paper's full parameters, many hours)
  --no-run        run no benchmark: re-render tables, figures and the report from the
                  raw logs already in data/raw (the newest sweep of the profile, or --sweep-id)
  --sweep-id ID   the sweep to write or read (data/raw/ID); giving an existing one
                  resumes it, skipping runs already recorded ok
  --languages L   comma-separated subset of erlang,go,scala_akka
  --no-reference  do not overlay the paper's own values on the figures

Outputs: data/raw/<sweep-id>/ (raw logs), data/processed/<sweep-id>/ (tables),
paper/figures/ (PNG, PDF), paper/report.html, paper/executed/ (executed notebooks).
Exit status: 0 when every step succeeded, non-zero otherwise.
USAGE
}

profile=quick; run=1; sweep_id=""; languages=""; reference=1
while [ $# -gt 0 ]; do
  case "$1" in
    -h|--help) usage; exit 0 ;;
    --profile) [ $# -ge 2 ] || { echo "error: --profile needs a value" >&2; exit 2; }; profile="$2"; shift 2 ;;
    --profile=*) profile="${1#*=}"; shift ;;
    --sweep-id) [ $# -ge 2 ] || { echo "error: --sweep-id needs a value" >&2; exit 2; }; sweep_id="$2"; shift 2 ;;
    --sweep-id=*) sweep_id="${1#*=}"; shift ;;
    --languages) [ $# -ge 2 ] || { echo "error: --languages needs a value" >&2; exit 2; }; languages="$2"; shift 2 ;;
    --languages=*) languages="${1#*=}"; shift ;;
    --no-run) run=0; shift ;;
    --no-reference) reference=0; shift ;;
    *) echo "error: unknown argument '$1' (see ./run_all.sh --help)" >&2; exit 2 ;;
  esac
done

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$ROOT"
t0=$SECONDS

echo "== set-up and build"
if [ "$run" = 1 ]; then
  ./scripts/setup.sh
else
  # Re-rendering needs the Python environment only.
  SERVERBENCH_SKIP_BUILD=1 ./scripts/setup.sh
fi
VPY="$ROOT/.venv/bin/python"
[ "${SERVERBENCH_NO_VENV:-0}" = 1 ] && VPY="$(command -v python3)"

args=(notebooks --profile "$profile")
[ -n "$sweep_id" ] && args+=(--sweep-id "$sweep_id")
[ -n "$languages" ] && args+=(--languages "$languages")
[ "$run" = 1 ] || args+=(--no-run)
[ "$reference" = 1 ] || args+=(--no-reference)

echo "== sweep, figures and report (profile: $profile$([ "$run" = 1 ] || echo ', no new runs'))"
"$VPY" -m serverbench "${args[@]}"

echo "== done in $((SECONDS - t0)) s"
