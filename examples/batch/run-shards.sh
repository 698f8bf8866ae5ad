#!/usr/bin/env bash
# Runs an evaluation as N shard processes on this machine, each optionally on
# its own Docker engine, then merges them into one run report and one log
# tree (run-shard.sh for each shard, merge-shards.sh at the end). After a
# failure, rerun the same command: finished instances are skipped.
#
#   run-shards.sh [-n N] [-H DOCKER_HOST]... [-o OUT] -- EVAL_FLAGS...
#
#   -n N      number of shards (default 2)
#   -H HOST   engines, given to the shards in turn (shard I gets host
#             (I-1) mod the count); default DOCKER_HOST or the local socket
#   -o OUT    output directory (default: batch-out)
#   EVAL_FLAGS are the eval command's flags: -d, -p and --run_id at least;
#   --max_workers applies to each shard. The eval binary is $EVAL.
set -euo pipefail

usage() { sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }

here=$(cd "$(dirname "$0")" && pwd)
n=2 out=batch-out hosts=()
while getopts "n:H:o:h" opt; do
  case $opt in
    n) n=$OPTARG ;;
    H) hosts+=("$OPTARG") ;;
    o) out=$OPTARG ;;
    *) usage ;;
  esac
done
shift $((OPTIND - 1))
[ "${1:-}" = "--" ] && shift
[ $# -gt 0 ] || usage
case $n in '' | *[!0-9]* | 0) echo "run-shards: -n wants a positive number, got $n" >&2; exit 2 ;; esac

mkdir -p "$out"
pids=()
for ((i = 1; i <= n; i++)); do
  hostArgs=()
  if [ ${#hosts[@]} -gt 0 ]; then
    hostArgs=(-H "${hosts[$(((i - 1) % ${#hosts[@]}))]}")
  fi
  "$here/run-shard.sh" -q -o "$out" "${hostArgs[@]}" "$i" "$n" -- "$@" &
  pids+=($!)
done

# Stop the shards on Ctrl-C or SIGTERM: each eval removes its containers and
# keeps its finished reports.
trap 'kill -TERM "${pids[@]}" 2>/dev/null; wait; exit 130' INT TERM

failed=0
for p in "${pids[@]}"; do
  wait "$p" || failed=$((failed + 1))
done
if [ "$failed" -gt 0 ]; then
  echo "run-shards: $failed of $n shards failed; fix the cause and rerun the same command to resume" >&2
  exit 1
fi
"$here/merge-shards.sh" -o "$out" "$out"/shard-*-of-"$n"
