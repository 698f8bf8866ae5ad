#!/usr/bin/env bash
# Runs shard I of N of an evaluation on this machine, into OUT/shard-I-of-N/:
# the shard's run report, its per-instance logs (logs/), the eval output
# (eval.log) and its exit status (status). Copy that directory back and merge
# it with merge-shards.sh. Rerunning the same command resumes: instances that
# already have a report.json are skipped.
#
#   run-shard.sh [-o OUT] [-H DOCKER_HOST] [-q] I N -- EVAL_FLAGS...
#
#   -o OUT    parent directory of the shard directory (default: shards)
#   -H HOST   Docker engine of this shard (default: DOCKER_HOST or the local socket)
#   -q        write the eval output only to eval.log, then print one summary line
#   EVAL_FLAGS are the eval command's flags: -d, -p and --run_id at least; the
#   same on every shard. The script adds --shard, --report_dir and --log_dir.
#   The eval binary is $EVAL (default: eval on PATH).
set -euo pipefail

usage() { sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }

EVAL=${EVAL:-eval}
out=shards host="" quiet=0
while getopts "o:H:qh" opt; do
  case $opt in
    o) out=$OPTARG ;;
    H) host=$OPTARG ;;
    q) quiet=1 ;;
    *) usage ;;
  esac
done
shift $((OPTIND - 1))
[ $# -ge 2 ] || usage
i=$1 n=$2
shift 2
[ "${1:-}" = "--" ] && shift
case "$i/$n" in
  *[!0-9/]* | /* | */) echo "run-shard: I and N must be numbers, got $i $n" >&2; exit 2 ;;
esac
if [ "$i" -lt 1 ] || [ "$i" -gt "$n" ]; then
  echo "run-shard: want 1 <= I <= N, got $i $n" >&2
  exit 2
fi

dir=$out/shard-$i-of-$n
mkdir -p "$dir"
rm -f "$dir/status"
args=("$@" --shard "$i/$n" --report_dir "$dir" --log_dir "$dir/logs")
if [ -n "$host" ]; then
  args+=(--docker_host "$host")
fi

if [ "$quiet" = 1 ]; then
  "$EVAL" "${args[@]}" >"$dir/eval.log" 2>&1 &
else
  "$EVAL" "${args[@]}" > >(tee "$dir/eval.log") 2>&1 &
fi
pid=$!
# SIGTERM or SIGINT to this script reach eval, which then removes its
# containers and keeps its finished reports.
trap 'kill -TERM "$pid" 2>/dev/null || true' INT TERM
set +e
wait "$pid"
code=$?
while kill -0 "$pid" 2>/dev/null; do # a trapped signal ends wait early
  wait "$pid"
  code=$?
done
set -e
trap - INT TERM
echo "$code" >"$dir/status"

summary=$(grep -E '^[0-9]+ instances: |nothing to do' "$dir/eval.log" | tail -1 || true)
if [ "$code" = 0 ]; then
  echo "shard $i/$n: ${summary:-done}"
else
  echo "shard $i/$n: failed with exit status $code; see $dir/eval.log; rerun the same command to resume" >&2
  if [ "$quiet" = 1 ]; then
    tail -5 "$dir/eval.log" | sed "s|^|  shard $i/$n: |" >&2
  fi
fi
exit "$code"
