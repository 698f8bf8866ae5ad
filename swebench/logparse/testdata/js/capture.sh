#!/usr/bin/env bash
# Regenerates the Mocha captures of testdata/js with Debian's mocha package
# (apt-get install mocha; Mocha 10.1.0 in bookworm) on the host:
#
#   swebench/logparse/testdata/js/capture.sh
#   go test ./swebench/logparse/ -run TestJavaScriptV5Runners -update
#
# Each scenario runs like an official eval script (bash with `set -uxo
# pipefail`), so traced commands such as `+ ./node_modules/.bin/mocha ...`
# and `+ cd ../..` appear in the output as the parsers expect. Durations
# vary from run to run; the slow test sleeps long enough to always print one.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -r "$here/suites/mocha/." "$work/"
mkdir -p "$work/node_modules/.bin"
ln -s "$(command -v mocha)" "$work/node_modules/.bin/mocha"
# Debian's mocha finds its modules through NODE_PATH when node is not
# Debian's own build.
export NODE_PATH=${NODE_PATH:-/usr/share/nodejs}
export NODE_OPTIONS="--require $work/log-symbols-shim.js"
export FORCE_COLOR=0

capture() { # name, then the eval script body
  local name=$1
  shift
  printf '%s\n' 'set -uxo pipefail' "$@" > "$work/eval.sh"
  (cd "$work" && bash eval.sh > "$work/out.log" 2>&1) || true
  # The scratch directory's name changes from run to run.
  sed "s#$work#/testbed#g" "$work/out.log" > "$here/$name.log"
}

capture mocha_spec "./node_modules/.bin/mocha --reporter spec test/markup.test.js"
capture mocha_spec_lighthouse 'echo "running 1 test files"' "./node_modules/.bin/mocha --reporter spec test/markup.test.js"
capture mocha_json_prism "./node_modules/.bin/mocha tests/run.js --reporter json"
capture mocha_json_lighthouse "./node_modules/.bin/mocha --reporter json test/markup.test.js"
capture mocha_json_cypress "cd packages/server" "../../node_modules/.bin/mocha --reporter json test/routes.test.js" "cd ../.." \
  "./node_modules/.bin/mocha --reporter json tests/run.js" "cd ../.."
