#!/bin/bash
set -uxo pipefail
cd /testbed
: ">>>>> Start Test Output"
pytest -rA tests/test_a.py
: ">>>>> End Test Output"
