#!/usr/bin/env bash
# slurm-local.sh: a real Slurm cluster on this machine, for tests: Debian's
# slurm-wlm (slurmctld and one slurmd per node, each started with -N NAME on
# a port of its own) and munge, with a key made for the cluster.
#
#   scripts/slurm-local.sh up [--nodes N]   start munged, slurmctld and N slurmd (default 2)
#   scripts/slurm-local.sh env              print export SLURM_CONF=... SWEBOX_TEST_SLURM_CONF=...
#   scripts/slurm-local.sh down             stop everything and remove every trace
#   scripts/slurm-local.sh node kill NAME   kill node NAME's slurmd and the job steps it ran
#                                           (their processes included), as a node dies
#   scripts/slurm-local.sh node start NAME  start node NAME's slurmd again (ReturnToService=2
#                                           makes the node usable as soon as it registers)
#   scripts/slurm-local.sh check-clean      fail if anything of the cluster is left
#
# Nodes are named n1..nN, all on 127.0.0.1 (Slurm's multiple-slurmd layout);
# no cgroup is used (proctrack/linuxproc, task/none), so it runs on cgroup v1
# and v2 hosts alike. Everything the cluster writes lives under
# $SWEBOX_SLURM_RUN (default /run/swebox-slurm): the configuration, munge's
# key and socket, the controller's state, the nodes' spool directories and
# the logs. `up` is idempotent (a cluster that answers is left as it is) and
# `down` removes the directory with every process. The controller listens on
# $SWEBOX_SLURM_PORT (default 6917), node nI on that port + 100 + I. A second
# cluster on the same machine takes another SWEBOX_SLURM_RUN and
# SWEBOX_SLURM_PORT (e.g. /run/swebox-slurm-c and 6927); every command of
# this script then touches only its own daemons and jobs' processes.
set -euo pipefail

RUN=${SWEBOX_SLURM_RUN:-/run/swebox-slurm}
CTLD_PORT=${SWEBOX_SLURM_PORT:-6917}
NODE_PORT0=$((CTLD_PORT + 100))
CONF=$RUN/slurm.conf
export PATH=$PATH:/usr/sbin:/sbin
export SLURM_CONF=$CONF

log() { printf 'slurm-local: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

need() {
  local c
  for c in "$@"; do
    command -v "$c" >/dev/null 2>&1 || die "$c is missing: apt-get install slurm-wlm munge"
  done
}

# pids of the cluster's daemons: processes whose command line names $RUN
# (munged, slurmctld and slurmd are all started with a path under it).
daemon_pids() {
  # The pattern's [/] keeps grep from matching its own command line.
  { grep -lz -- "$RUN[/]" /proc/[0-9]*/cmdline 2>/dev/null || true; } | cut -d/ -f3
}

# pids of the job steps' processes, those of node NODE if given: everything
# a job ran carries SLURM_CONF=$CONF and SLURM_JOB_ID in its environment.
job_pids() {
  local node=${1:-} f
  { grep -lzx -- "SLURM_CONF=$CONF" /proc/[0-9]*/environ 2>/dev/null || true; } | while read -r f; do
    grep -qz '^SLURM_JOB_ID=' "$f" 2>/dev/null || continue
    if [ -n "$node" ] && ! grep -qzx "SLURMD_NODENAME=$node" "$f" 2>/dev/null; then
      continue
    fi
    f=${f#/proc/}
    echo "${f%/environ}"
  done
}

# stepd_pids JOBID...: the slurmstepd processes of these jobs, found by
# their command line "slurmstepd: [JOBID.STEP]" and, since another cluster
# on this machine numbers its jobs alike, by this cluster's SLURM_CONF in
# their environment (slurmd's, which they inherit).
stepd_pids() {
  local id f
  for id in $1; do
    { grep -lz -- "^slurmstepd: \[$id[.]" /proc/[0-9]*/cmdline 2>/dev/null || true; } | while read -r f; do
      grep -qzx -- "SLURM_CONF=$CONF" "${f%/cmdline}/environ" 2>/dev/null || continue
      f=${f#/proc/}
      echo "${f%/cmdline}"
    done
  done
}

answers() {
  [ -f "$CONF" ] && timeout 10 scontrol ping 2>/dev/null | grep -q 'is UP'
}

nodes_idle() {
  local want=$1 n
  n=$(timeout 10 sinfo -h -N -o '%N %t' 2>/dev/null | awk '$2 ~ /^(idle|mix|alloc)/' | wc -l)
  [ "$n" -ge "$want" ]
}

write_conf() {
  local nodes=$1 host i names=""
  host=$(hostname -s)
  mkdir -p "$RUN"/{ctld,spool,log,munge}
  {
    cat <<EOF
# Written by scripts/slurm-local.sh: the Slurm test cluster.
ClusterName=swebox
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$CTLD_PORT
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$RUN/munge/munge.socket
StateSaveLocation=$RUN/ctld
SlurmdSpoolDir=$RUN/spool/%n
SlurmctldPidFile=$RUN/slurmctld.pid
SlurmdPidFile=$RUN/slurmd-%n.pid
SlurmctldLogFile=$RUN/log/slurmctld.log
SlurmdLogFile=$RUN/log/slurmd-%n.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SwitchType=switch/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SlurmdParameters=config_overrides
ReturnToService=2
# A dead node is noticed within seconds, not the default five minutes.
SlurmdTimeout=10
SlurmctldTimeout=10
MessageTimeout=5
KillWait=20
MinJobAge=600
InactiveLimit=0
EOF
    for ((i = 1; i <= nodes; i++)); do
      echo "NodeName=n$i NodeHostname=$host NodeAddr=127.0.0.1 Port=$((NODE_PORT0 + i)) CPUs=2 RealMemory=4000 State=UNKNOWN"
      names+=${names:+,}n$i
    done
    echo "PartitionName=debug Nodes=$names Default=YES MaxTime=INFINITE State=UP OverSubscribe=NO"
  } >"$CONF"
  echo "$nodes" >"$RUN/nodes"
}

start_munge() {
  if [ ! -f "$RUN/munge/munge.key" ]; then
    mungekey --create --keyfile="$RUN/munge/munge.key" >/dev/null 2>&1 ||
      dd if=/dev/urandom of="$RUN/munge/munge.key" bs=1024 count=1 status=none
    chmod 0400 "$RUN/munge/munge.key"
  fi
  chmod 0700 "$RUN/munge"
  munged --force --socket="$RUN/munge/munge.socket" --key-file="$RUN/munge/munge.key" \
    --pid-file="$RUN/munge/munged.pid" --log-file="$RUN/log/munged.log" \
    --seed-file="$RUN/munge/munged.seed" 2>>"$RUN/log/munged.log" ||
    die "munged did not start; see $RUN/log/munged.log"
}

start_node() {
  local name=$1
  mkdir -p "$RUN/spool/$name"
  slurmd -f "$CONF" -N "$name" -L "$RUN/log/slurmd-$name.log" ||
    die "slurmd -N $name did not start; see $RUN/log/slurmd-$name.log"
}

cmd_up() {
  local nodes=2
  while [ $# -gt 0 ]; do
    case $1 in
      --nodes) nodes=$2; shift 2 ;;
      *) die "up: unknown argument $1" ;;
    esac
  done
  [[ $nodes =~ ^[1-9]$ ]] || die "up: --nodes must be 1 to 9, got $nodes"
  need slurmctld slurmd munged sbatch squeue scontrol scancel sinfo
  if answers && [ "$(cat "$RUN/nodes" 2>/dev/null)" = "$nodes" ] && nodes_idle "$nodes"; then
    log "the cluster is up already ($nodes nodes)"
    return 0
  fi
  cmd_down
  write_conf "$nodes"
  start_munge
  slurmctld -f "$CONF" -L "$RUN/log/slurmctld.log" -i ||
    die "slurmctld did not start; see $RUN/log/slurmctld.log"
  local i
  for ((i = 1; i <= nodes; i++)); do start_node "n$i"; done
  for _ in $(seq 1 60); do
    nodes_idle "$nodes" && break
    sleep 0.5
  done
  if ! nodes_idle "$nodes"; then
    sinfo -N >&2 || true
    tail -20 "$RUN/log/slurmctld.log" >&2 || true
    die "the nodes did not come up; logs in $RUN/log"
  fi
  log "up: slurmctld on 127.0.0.1:$CTLD_PORT, nodes n1..n$nodes; eval \"\$($0 env)\""
}

cmd_env() {
  [ -f "$CONF" ] || die "no cluster: run $0 up"
  printf 'export SLURM_CONF=%q\nexport SWEBOX_TEST_SLURM_CONF=%q\n' "$CONF" "$CONF"
}

cmd_node() {
  local what=${1:-} name=${2:-}
  [[ $name =~ ^n[0-9]$ ]] || die "node: want a node name n1..n9, got '$name'"
  case $what in
    kill)
      local pids jobs pf=$RUN/slurmd-$name.pid
      jobs=$(timeout 10 squeue -h -w "$name" -o %A | tr '\n' ' ')
      pids=$( { [ -f "$pf" ] && cat "$pf"; stepd_pids "$jobs"; job_pids "$name"; } | sort -u)
      [ -n "$pids" ] || die "node $name runs nothing"
      # Stopped first, so that none of them sees another die and reports
      # it to the controller (a dead machine reports nothing).
      # shellcheck disable=SC2086
      kill -STOP $pids 2>/dev/null || true
      # shellcheck disable=SC2086
      kill -KILL $pids 2>/dev/null || true
      rm -f "$pf"
      log "killed node $name (jobs ${jobs:-none}; pids $(echo $pids))"
      ;;
    start)
      start_node "$name"
      for _ in $(seq 1 60); do
        timeout 10 sinfo -h -n "$name" -o '%t' 2>/dev/null | grep -Eq '^(idle|mix|alloc)' && return 0
        sleep 0.5
      done
      die "node $name did not come back; see $RUN/log/slurmd-$name.log"
      ;;
    *) die "node: want kill or start" ;;
  esac
}

check_clean() {
  local left
  left=$( { daemon_pids; job_pids; } | sort -u | tr '\n' ' ')
  [ -z "$left" ] || echo "processes $left"
  [ ! -e "$RUN" ] || echo "$RUN"
}

cmd_down() {
  local pids
  # Jobs first, so that their steps end their processes as Slurm does.
  if answers; then
    timeout 10 scancel --full --signal=TERM --user="$(id -un)" 2>/dev/null || true
  fi
  for sig in TERM KILL; do
    pids=$( { daemon_pids; job_pids; } | sort -u)
    [ -n "$pids" ] || break
    # shellcheck disable=SC2086
    kill -$sig $pids 2>/dev/null || true
    for _ in $(seq 1 20); do
      pids=$( { daemon_pids; job_pids; } | sort -u)
      [ -z "$pids" ] && break
      sleep 0.25
    done
  done
  rm -rf "$RUN"
  local left
  left=$(check_clean)
  [ -z "$left" ] || die "down: left behind: $left"
}

case ${1:-} in
  up) shift; cmd_up "$@" ;;
  env) cmd_env ;;
  down) cmd_down ;;
  node) shift; cmd_node "$@" ;;
  check-clean) left=$(check_clean); [ -z "$left" ] || die "left: $left" ;;
  *) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
esac
