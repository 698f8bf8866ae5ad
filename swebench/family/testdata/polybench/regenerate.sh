#!/bin/sh
# Regenerates rows.jsonl, logs/ and expected.json: the fixtures, then
# SWE-PolyBench's own parser classes and scoring at the pinned commit on
# them.
#   POLYBENCH_GIT=/path/to/SWE-PolyBench/.git sh regenerate.sh
# (a clone or bare mirror of https://github.com/amazon-science/SWE-PolyBench;
# /usr/bin/python3, nothing else: docker, pandas, datasets, loguru and
# pydantic are stubbed).
set -eu
COMMIT=9c836c5d7f3cb991934132b77d29e6941d912a07
cd "$(dirname "$0")"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
git --git-dir="${POLYBENCH_GIT:?set POLYBENCH_GIT}" archive "$COMMIT" src/poly_bench_evaluation/constants.py src/poly_bench_evaluation/docker_utils.py \
  src/poly_bench_evaluation/scoring.py src/poly_bench_evaluation/polybench_data.py \
  src/poly_bench_evaluation/parsers | tar -x -C "$tmp"
rm -rf logs && /usr/bin/python3 rows.py
/usr/bin/python3 upstream.py "$tmp"
