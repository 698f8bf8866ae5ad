#!/bin/bash
set -e

echo "CALC_ENV=$CALC_ENV"

run_all_tests() {
  echo "Running all tests..."
  python -m pytest -v -p no:cacheprovider tests 2>&1
}

run_selected_tests() {
  local test_files=("$@")
  echo "Running selected tests: ${test_files[@]}"
  python -m pytest -v -p no:cacheprovider "${test_files[@]}" 2>&1
}

if [ $# -eq 0 ]; then
  run_all_tests
  exit $?
fi

if [[ "$1" == *","* ]]; then
  IFS=',' read -r -a TEST_FILES <<< "$1"
else
  TEST_FILES=("$@")
fi

run_selected_tests "${TEST_FILES[@]}"
