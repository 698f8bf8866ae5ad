#!/bin/sh
# Regenerates rows.jsonl, logs/ and expected.json: the fixtures, then
# Multi-SWE-bench's own harness code at the pinned commit run on them.
#   MSB_GIT=/path/to/multi-swe-bench/.git sh regenerate.sh
# (a clone or bare mirror of https://github.com/multi-swe-bench/multi-swe-bench).
set -eu
COMMIT=24f493f8a103e72312ded4f6b9c89f081d69cb09
cd "$(dirname "$0")"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
git --git-dir="${MSB_GIT:?set MSB_GIT}" archive "$COMMIT" multi_swe_bench | tar -x -C "$tmp"
python3 rows.py
python3 upstream.py "$tmp"
