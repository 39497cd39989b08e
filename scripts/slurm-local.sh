#!/usr/bin/env bash
# A real one-node SLURM cluster on this machine, for the tests and for trying
# `python -m serverbench slurm` without cluster time. No systemd: the daemons are started
# here, their PIDs recorded, and stopped by PID. Everything lives in one state folder.
#
# usage: scripts/slurm-local.sh start|stop|status|env
#   start   install Debian's slurm-wlm if missing (root), write slurm.conf, start slurmctld
#           and slurmd on 127.0.0.1, wait until the node is idle
#   stop    cancel the cluster's jobs, stop both daemons by PID (TERM, then KILL)
#   status  sinfo and squeue of the local cluster
#   env     print `export SLURM_CONF=...` for eval in a shell
#
# Environment:
#   SLURM_LOCAL_DIR        state folder (default: .slurm-local in the repository, gitignored)
#   SLURM_LOCAL_PORT_BASE  slurmctld port; slurmd uses the next one (default 16817)
#   SLURM_LOCAL_MEM_MB     memory the node offers (default: 80 % of MemTotal)
# Auth is auth/none (no munge): the daemons listen on loopback only and serve one user.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DIR="${SLURM_LOCAL_DIR:-$ROOT/.slurm-local}"
PORT="${SLURM_LOCAL_PORT_BASE:-16817}"
CONF="$DIR/slurm.conf"
export SLURM_CONF="$CONF"

log() { printf 'slurm-local: %s\n' "$*" >&2; }
die() { printf 'slurm-local: error: %s\n' "$*" >&2; exit 1; }
have() { command -v "$1" >/dev/null 2>&1; }

pid_alive() { [ -n "${1:-}" ] && kill -0 "$1" 2>/dev/null; }
read_pid() { cat "$DIR/$1.pid" 2>/dev/null || true; }

install_slurm() {
  have slurmctld && have slurmd && have sbatch && return
  [ "$(id -u)" = 0 ] && have apt-get || die "SLURM is not installed. As root: apt-get install -y slurm-wlm"
  log "installing Debian package slurm-wlm"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends slurm-wlm >/dev/null
}

port_free() {
  ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

write_conf() {
  local user cpus mem_mb
  user="$(id -un)"
  cpus="$(nproc)"
  mem_mb="${SLURM_LOCAL_MEM_MB:-$(awk '/^MemTotal:/ {printf "%d", $2 / 1024 * 0.8}' /proc/meminfo)}"
  mkdir -p "$DIR/state" "$DIR/spool" "$DIR/log"
  cat > "$CONF" <<EOF
# Written by scripts/slurm-local.sh: a one-node cluster on loopback.
ClusterName=serverbench-local
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=$PORT
SlurmdPort=$((PORT + 1))
SlurmUser=$user
SlurmdUser=$user
AuthType=auth/none
CredType=cred/none
StateSaveLocation=$DIR/state
SlurmdSpoolDir=$DIR/spool
SlurmctldPidFile=$DIR/slurmctld.pid
SlurmdPidFile=$DIR/slurmd.pid
SlurmctldLogFile=$DIR/log/slurmctld.log
SlurmdLogFile=$DIR/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
MpiDefault=none
ReturnToService=2
SchedulerType=sched/backfill
KillWait=10
NodeName=localhost NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem_mb State=UNKNOWN
PartitionName=local Nodes=localhost Default=YES MaxTime=INFINITE State=UP OverSubscribe=EXCLUSIVE
EOF
}

start() {
  install_slurm
  if pid_alive "$(read_pid slurmctld)" || pid_alive "$(read_pid slurmd)"; then
    log "already running (state in $DIR)"; return
  fi
  port_free "$PORT" || die "port $PORT is in use (set SLURM_LOCAL_PORT_BASE to another port)"
  port_free "$((PORT + 1))" || die "port $((PORT + 1)) is in use (set SLURM_LOCAL_PORT_BASE to another port)"
  write_conf
  # -i: ignore state left by an earlier cluster in the same folder (jobs of a dead cluster).
  slurmctld -f "$CONF" -i
  slurmd -f "$CONF" -N localhost
  local i
  for i in $(seq 1 60); do
    if [ "$(sinfo -h -N -o '%t' 2>/dev/null | head -1)" = idle ]; then
      log "cluster up: slurmctld pid $(read_pid slurmctld), slurmd pid $(read_pid slurmd); export SLURM_CONF=$CONF"
      return
    fi
    sleep 0.5
  done
  tail -n 20 "$DIR/log/slurmctld.log" "$DIR/log/slurmd.log" >&2 || true
  stop
  die "the node did not become idle within 30 s (logs above)"
}

stop_pid() {  # stop_pid NAME: TERM, wait up to 10 s, then KILL
  local name="$1" pid i
  pid="$(read_pid "$name")"
  pid_alive "$pid" || { rm -f "$DIR/$name.pid"; return; }
  # Only a process that really is this daemon (a recycled PID is left alone).
  if ! grep -q "$name" "/proc/$pid/comm" 2>/dev/null; then rm -f "$DIR/$name.pid"; return; fi
  kill -TERM "$pid" 2>/dev/null || true
  for i in $(seq 1 20); do pid_alive "$pid" || break; sleep 0.5; done
  pid_alive "$pid" && kill -KILL "$pid" 2>/dev/null || true
  rm -f "$DIR/$name.pid"
}

stop() {
  [ -f "$CONF" ] || { log "not running (no $CONF)"; return; }
  if pid_alive "$(read_pid slurmctld)"; then
    scancel --full --user="$(id -un)" 2>/dev/null || true
    local i
    for i in $(seq 1 40); do
      [ -z "$(squeue -h -o %i 2>/dev/null)" ] && break
      sleep 0.5
    done
  fi
  stop_pid slurmd
  stop_pid slurmctld
  log "stopped"
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  status) sinfo; squeue ;;
  env) echo "export SLURM_CONF=$CONF" ;;
  *) echo "usage: scripts/slurm-local.sh start|stop|status|env" >&2; exit 2 ;;
esac
