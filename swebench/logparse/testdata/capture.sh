#!/usr/bin/env bash
# Regenerates the captured test-runner output used by the golden tests of
# swebench/logparse and swebench/grade, with real runners in the test image:
#
#   swebench/logparse/testdata/capture.sh
#   go test ./swebench/logparse/ ./swebench/grade/ -update
#
# For every scenario it writes
#   logparse/testdata/captures/<name>.log   the test command's output (stdout+stderr)
#   grade/testdata/logs/<name>.v4.txt       test_output.txt of a v4.1.0-style eval.sh
#   grade/testdata/logs/<name>.v5.txt       the same with v5's exit-code lines
# The eval scripts run under `set -uxo pipefail` like the official ones, so
# the markers appear as `+ : '>>>>> Start Test Output'`. Containers run with
# --network none and are removed.
set -euo pipefail

image=${SWEBOX_TEST_IMAGE:-swebox/python:bookworm}
here=$(cd "$(dirname "$0")" && pwd)
captures=$here/captures
logs=$here/../../grade/testdata/logs
mkdir -p "$captures" "$logs"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# name | suite directory | test command
scenarios=(
  "pytest_ra|pytest|pytest -rA tests"
  "pytest_noheader|pytest|pytest --no-header -rA tests"
  "pytest_classic|pytest|pytest -rA -vv -o console_output_style=classic --tb=no tests"
  "pytest_color|pytest|pytest -rA --color=yes tests"
  "pytest_collect_error|pytest|pytest -rA broken"
  "pytest_all_pass|pytest|pytest -rA tests/sub -k 'test_numbers and not 2'"
  "unittest_verbose|unittest|python3 -m unittest -v app.tests"
  "sympy_verbose|sympy|PYTHONWARNINGS='ignore::UserWarning,ignore::SyntaxWarning' python3 sympy_bin_test.py"
)

run() { # suite script-file
  docker run --rm --network none \
    -v "$here/suites/$1:/src:ro" -v "$work:/scripts:ro" \
    "$image" bash -c 'cp -r /src /testbed && cd /testbed && exec /bin/bash /scripts/'"$2"' 2>&1'
}

for row in "${scenarios[@]}"; do
  IFS='|' read -r name suite cmd <<<"$row"
  printf 'cd /testbed\n%s\n' "$cmd" >"$work/$name.cmd.sh"
  printf '#!/bin/bash\nset -uxo pipefail\ncd /testbed\n: %s\n%s\n: %s\n' \
    "'>>>>> Start Test Output'" "$cmd" "'>>>>> End Test Output'" >"$work/$name.v4.sh"
  printf '#!/bin/bash\nset -uxo pipefail\ncd /testbed\n: %s\n%s\nSWEBENCH_TEST_EXIT_CODE=$?\n: %s\necho ">>>>> Test Exit Code: $SWEBENCH_TEST_EXIT_CODE"\n' \
    "'>>>>> Start Test Output'" "$cmd" "'>>>>> End Test Output'" >"$work/$name.v5.sh"
  run "$suite" "$name.cmd.sh" >"$captures/$name.log" || true
  run "$suite" "$name.v4.sh" >"$logs/$name.v4.txt" || true
  run "$suite" "$name.v5.sh" >"$logs/$name.v5.txt" || true
  echo "captured $name" >&2
done
