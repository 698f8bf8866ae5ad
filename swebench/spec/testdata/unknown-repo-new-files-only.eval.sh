#!/bin/bash
set -uxo pipefail
cd /testbed
git config --global --add safe.directory /testbed
cd /testbed
git status
git show
git -c core.fileMode=false diff 0123456789abcdef0123456789abcdef01234567
git checkout 0123456789abcdef0123456789abcdef01234567 
git apply -v - <<'EOF_114329324912'
diff --git a/tests/test_new.py b/tests/test_new.py
new file mode 100644
--- /dev/null
+++ b/tests/test_new.py
@@ -0,0 +1 @@
+def test_a(): pass

EOF_114329324912
: '>>>>> Start Test Output'
pytest -rA tests/test_new.py
SWEBENCH_TEST_EXIT_CODE=$?
: '>>>>> End Test Output'
echo ">>>>> Test Exit Code: $SWEBENCH_TEST_EXIT_CODE"
git checkout 0123456789abcdef0123456789abcdef01234567 
