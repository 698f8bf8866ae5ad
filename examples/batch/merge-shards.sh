#!/usr/bin/env bash
# Merges the shard directories written by run-shard.sh (on this machine or
# copied from others) into one run: OUT/<model>.<run_id>.json, the official
# run report of the whole run, and OUT/logs/, every instance's logs. Refuses
# when a shard is missing, failed or overlaps another.
#
#   merge-shards.sh [-o OUT] SHARD_DIR...
#   merge-shards.sh [-o OUT] DIR            (DIR holding shard-I-of-N directories)
#
#   -o OUT    where the merged run goes (default: the parent of the shards)
#   The eval binary is $EVAL (default: eval on PATH).
set -euo pipefail

usage() { sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }

EVAL=${EVAL:-eval}
out=""
while getopts "o:h" opt; do
  case $opt in
    o) out=$OPTARG ;;
    *) usage ;;
  esac
done
shift $((OPTIND - 1))
[ $# -ge 1 ] || usage

dirs=()
if [ $# = 1 ] && [ ! -e "$1/status" ]; then
  for d in "$1"/shard-*-of-*; do
    [ -d "$d" ] && dirs+=("$d")
  done
  [ -n "$out" ] || out=$1
else
  dirs=("$@")
  [ -n "$out" ] || out=$(dirname "$1")
fi
if [ ${#dirs[@]} = 0 ]; then
  echo "merge-shards: no shard-I-of-N directory in $1" >&2
  exit 1
fi

# Every shard of one N, each present once, each finished with status 0.
n="" problems=() reports=() name=""
declare -A seen=()
for d in "${dirs[@]}"; do
  base=$(basename "$d")
  if [[ ! $base =~ ^shard-([0-9]+)-of-([0-9]+)$ ]]; then
    problems+=("$d is not a shard-I-of-N directory")
    continue
  fi
  i=${BASH_REMATCH[1]} dn=${BASH_REMATCH[2]}
  if [ -z "$n" ]; then n=$dn; fi
  if [ "$dn" != "$n" ]; then
    problems+=("$d is a shard of $dn, the others of $n")
    continue
  fi
  seen[$i]=1
  status=$(cat "$d/status" 2>/dev/null || echo "missing")
  if [ "$status" != 0 ]; then
    problems+=("shard $i/$n did not finish (status $status); rerun: run-shard.sh $i $n ... (it resumes)")
    continue
  fi
  for r in "$d"/*.json; do
    [ -e "$r" ] || continue # a shard with no instances writes no report
    if [ -n "$name" ] && [ "$(basename "$r")" != "$name" ]; then
      problems+=("$r: shards name different runs ($name)")
    fi
    name=$(basename "$r")
    reports+=("$r")
  done
done
for ((i = 1; i <= ${n:-0}; i++)); do
  [ -n "${seen[$i]:-}" ] || problems+=("shard $i/$n is missing")
done
if [ ${#problems[@]} -gt 0 ]; then
  printf 'merge-shards: %s\n' "${problems[@]}" >&2
  exit 1
fi
if [ ${#reports[@]} = 0 ]; then
  echo "merge-shards: no shard has a run report" >&2
  exit 1
fi

mkdir -p "$out/logs"
"$EVAL" merge -o "$out/$name" "${reports[@]}"
for d in "${dirs[@]}"; do
  if [ -d "$d/logs" ]; then
    cp -R "$d/logs/." "$out/logs/"
  fi
done
echo "run report: $out/$name"
echo "logs:       $out/logs/run_evaluation/"
