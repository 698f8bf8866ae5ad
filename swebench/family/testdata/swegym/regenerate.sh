#!/bin/sh
# Regenerates rows.jsonl, logs/, expected.json, expected/ and specs.json:
# the fixtures, then SWE-Gym's fork of the harness at the pinned commit on
# them.
#   SWEGYM_GIT=/path/to/SWE-Bench-Fork/.git sh regenerate.sh
# (a clone or bare mirror of https://github.com/SWE-Gym/SWE-Bench-Fork;
# /usr/bin/python3, nothing else: the fork's network, Docker and dataset
# modules are stubbed).
set -eu
COMMIT=242429c188fcfd06aad13fce9a54d450470bf0ac
cd "$(dirname "$0")"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
git --git-dir="${SWEGYM_GIT:?set SWEGYM_GIT}" archive "$COMMIT" swebench | tar -x -C "$tmp"
rm -rf logs expected && mkdir -p logs && /usr/bin/python3 rows.py
/usr/bin/python3 upstream.py "$tmp"
