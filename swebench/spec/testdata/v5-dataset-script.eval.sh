#!/bin/bash
set -uxo pipefail
cd /testbed
cp /assets/a.png tests/a.png
: '>>>>> Start Test Output'
pytest -rA t.py
SWEBENCH_TEST_EXIT_CODE=$?
: '>>>>> End Test Output'
echo ">>>>> Test Exit Code: $SWEBENCH_TEST_EXIT_CODE"
git checkout 0123456789abcdef0123456789abcdef01234567 t.py
