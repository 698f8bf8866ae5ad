#!/usr/bin/env bash
# Regenerates testdata/captures/*.txt: runs the stub suite under testdata/suite
# with the pytest of the test image, once per line of captures.list.
#
#   pytestparse/testdata/capture.sh            (or: go generate ./pytestparse)
#
# The image comes from $SWEBOX_TEST_IMAGE (default swebox/python:bookworm). The
# suite is mounted read-only, with no network. Durations and object addresses
# are normalised so that re-running changes as little as possible; xdist runs
# still differ in order from run to run.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
image=${SWEBOX_TEST_IMAGE:-swebox/python:bookworm}
out=$here/captures
mkdir -p "$out"

normalise() {
  sed -E \
    -e 's/ in [0-9]+\.[0-9]+s( \([0-9:]+\))?/ in 0.01s/g' \
    -e 's/0x[0-9a-f]{6,}/0x0123456789ab/g' \
    -e 's/^([0-9]+\.[0-9]+)s (setup|call|teardown) /0.00s \2 /' \
    -e 's/^(created: |\[gw[0-9]+\] linux Python [0-9.]+ cwd: ).*$/\1.../' \
    -e 's/^(\[gw[0-9]+\] Python [0-9.]+ \().*$/\1...)/'
}

while IFS='|' read -r name check env args; do
  name=$(echo "$name" | xargs)
  case "$name" in ''|'#'*) continue ;; esac
  env=$(echo "$env" | xargs)
  args=$(echo "$args" | xargs -0 | sed -E 's/^ +| +$//g')
  envflags=()
  kill_after=""
  for kv in $env; do
    case "$kv" in
      KILL_AFTER=*) kill_after=${kv#KILL_AFTER=} ;;
      *) envflags+=(-e "$kv") ;;
    esac
  done
  cmd="python3 -m pytest -p no:cacheprovider $args"
  if [ -n "$kill_after" ]; then
    # A run killed in the middle of a test: the log ends without a newline.
    cmd="timeout -s KILL $kill_after $cmd"
  fi
  echo "capture: $name: $cmd" >&2
  docker run --rm --network none \
    -e COLUMNS=80 -e PYTHONDONTWRITEBYTECODE=1 -e PYTHONHASHSEED=0 "${envflags[@]}" \
    -v "$here/suite:/suite:ro" -w /suite \
    "$image" bash -c "$cmd" >"$out/$name.raw" 2>&1 || true
  normalise <"$out/$name.raw" >"$out/$name.txt"
  # sed adds a final newline; a killed run must keep its unterminated last line.
  if [ -n "$(tail -c1 "$out/$name.raw")" ]; then
    printf '%s' "$(cat "$out/$name.txt")" >"$out/$name.txt"
  fi
  rm -f "$out/$name.raw"
done <"$here/captures.list"
