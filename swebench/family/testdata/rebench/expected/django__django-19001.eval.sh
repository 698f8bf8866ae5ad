#!/bin/bash
set -uxo pipefail
source /opt/miniconda3/bin/activate
conda activate testbed
cd /testbed
git config --global --add safe.directory /testbed
cd /testbed
git status
git show
git -c core.fileMode=false diff 0123abcd0123abcd0123abcd0123abcd0123abcd
source /opt/miniconda3/bin/activate
conda activate testbed
LANG=C.UTF-8 LC_ALL=C.UTF-8 python -m pip install -e .
git checkout 0123abcd0123abcd0123abcd0123abcd0123abcd tests/admin_views/tests.py
git apply -v - <<'EOF_114329324912'
diff --git a/tests/admin_views/tests.py b/tests/admin_views/tests.py
index 1111111..2222222 100644
--- a/tests/admin_views/tests.py
+++ b/tests/admin_views/tests.py
@@ -1,1 +1,2 @@
 x
+y

EOF_114329324912
: '>>>>> Start Test Output'
LANG=C.UTF-8 LC_ALL=C.UTF-8 ./tests/runtests.py --verbosity 2 admin_views.tests
: '>>>>> End Test Output'
git checkout 0123abcd0123abcd0123abcd0123abcd0123abcd tests/admin_views/tests.py
