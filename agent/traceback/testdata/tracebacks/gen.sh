#!/bin/sh
# Regenerates the *.stderr files: each script's stderr under the test image's
# python3, run as the sandbox runs code (network none, read-only root).
#   agent/traceback/testdata/tracebacks/gen.sh [IMAGE]
set -e
cd "$(dirname "$0")"
image=${1:-${SWEBOX_TEST_IMAGE:-swebox/python:bookworm}}
for f in *.py; do
  docker run --rm --network none --read-only --user 1000:1000 -v "$PWD:/workspace:ro" -w /workspace \
    "$image" python3 "/workspace/$f" 2>"${f%.py}.stderr" >/dev/null || true
done
