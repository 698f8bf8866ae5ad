#!/bin/sh
# Regenerates rows.jsonl, logs/, expected.json, profiles.json and
# ../../swesmith_profiles.go: the fixtures, then
# SWE-smith's harness at the pinned commit (over SWE-bench's swebench
# package at v4.0.1, the release current at that commit) on them.
#   SWESMITH_GIT=/path/to/SWE-smith/.git SWEBENCH_GIT=/path/to/SWE-bench/.git sh regenerate.sh
# (clones or bare mirrors of https://github.com/SWE-bench/SWE-smith and
# https://github.com/SWE-bench/SWE-bench; /usr/bin/python3 with
# python3-unidiff). PYTHONHASHSEED is fixed: get_test_command lists the
# FAIL_TO_PASS files through a set, whose order is the hash seed's.
set -eu
SMITH_COMMIT=c5b45e5623b8ddcdc5740b6679343f87f33940a2
SWEBENCH_COMMIT=af0938cfc35e21e9b8153cbabfe4ad8d824bb3d7
cd "$(dirname "$0")"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/smith" "$tmp/swebench"
git --git-dir="${SWESMITH_GIT:?set SWESMITH_GIT}" archive "$SMITH_COMMIT" swesmith | tar -x -C "$tmp/smith"
git --git-dir="${SWEBENCH_GIT:?set SWEBENCH_GIT}" archive "$SWEBENCH_COMMIT" swebench | tar -x -C "$tmp/swebench"
rm -rf logs && /usr/bin/python3 rows.py
PYTHONHASHSEED=0 /usr/bin/python3 upstream.py "$tmp/smith" "$tmp/swebench"
/usr/bin/python3 profiles_go.py && gofmt -w ../../swesmith_profiles.go
