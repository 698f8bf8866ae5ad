#!/bin/sh
# Regenerates rows.jsonl, logs/ and expected.json: the fixtures, then
# SWE-bench-Live's own evaluation.py at the pinned commit graded on them.
#   LIVE_GIT=/path/to/SWE-bench-Live/.git sh regenerate.sh
# (a clone or bare mirror of https://github.com/microsoft/SWE-bench-Live).
set -eu
COMMIT=70ec57e852e3f2d195790fe71f553e272c691833
cd "$(dirname "$0")"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
git --git-dir="${LIVE_GIT:?set LIVE_GIT}" archive "$COMMIT" evaluation | tar -x -C "$tmp"
mkdir -p logs && python3 rows.py
python3 upstream.py "$tmp/evaluation"
