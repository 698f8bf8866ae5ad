#!/bin/bash
set -uxo pipefail
source /opt/miniconda3/bin/activate
conda activate testbed
cd /testbed
sed -i '/en_US.UTF-8/s/^# //g' /etc/locale.gen && locale-gen
export LANG=en_US.UTF-8
export LANGUAGE=en_US:en
export LC_ALL=en_US.UTF-8
git config --global --add safe.directory /testbed
cd /testbed
git status
git show
git -c core.fileMode=false diff 0123456789abcdef0123456789abcdef01234567
source /opt/miniconda3/bin/activate
conda activate testbed
python -m pip install -e .
git checkout 0123456789abcdef0123456789abcdef01234567 tests/admin_views/tests.py
git apply -v - <<'EOF_114329324912'
diff --git a/tests/admin_views/tests.py b/tests/admin_views/tests.py
--- a/tests/admin_views/tests.py
+++ b/tests/admin_views/tests.py
@@ -1,3 +1,4 @@
 import os
+import re
 
 x = 1
diff --git a/tests/admin_views/fixtures/new.json b/tests/admin_views/fixtures/new.json
new file mode 100644
--- /dev/null
+++ b/tests/admin_views/fixtures/new.json
@@ -0,0 +1 @@
+[]

EOF_114329324912
: '>>>>> Start Test Output'
./tests/runtests.py --verbosity 2 --settings=test_sqlite --parallel 1 admin_views.tests
SWEBENCH_TEST_EXIT_CODE=$?
: '>>>>> End Test Output'
echo ">>>>> Test Exit Code: $SWEBENCH_TEST_EXIT_CODE"
git checkout 0123456789abcdef0123456789abcdef01234567 tests/admin_views/tests.py
