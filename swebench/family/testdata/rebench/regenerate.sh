#!/bin/sh
# Regenerates rows.jsonl, logs/, expected.json and expected/: the fixtures,
# then SWE-rebench's fork of the harness at the pinned commit on them.
#   REBENCH_GIT=/path/to/SWE-bench-fork/.git sh regenerate.sh
# (a clone or bare mirror of https://github.com/SWE-rebench/SWE-bench-fork;
# /usr/bin/python3 with python3-unidiff and python3-packaging).
set -eu
COMMIT=39316f79cd51c144fb0c62c157ef4739e7653577
cd "$(dirname "$0")"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
git --git-dir="${REBENCH_GIT:?set REBENCH_GIT}" archive "$COMMIT" swebench | tar -x -C "$tmp"
rm -rf logs expected && mkdir -p logs && /usr/bin/python3 rows.py
/usr/bin/python3 upstream.py "$tmp"
