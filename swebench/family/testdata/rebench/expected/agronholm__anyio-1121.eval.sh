#!/bin/bash
set -uxo pipefail
source /opt/miniconda3/bin/activate
conda activate testbed
cd /testbed
export ANYIO_BACKEND=asyncio
git config --global --add safe.directory /testbed
cd /testbed
git status
git show
git -c core.fileMode=false diff 0123abcd0123abcd0123abcd0123abcd0123abcd
source /opt/miniconda3/bin/activate
conda activate testbed
LANG=C.UTF-8 LC_ALL=C.UTF-8 pip install -e .
git checkout 0123abcd0123abcd0123abcd0123abcd0123abcd tests/test_taskgroups.py tests/test_old.py
git apply -v - <<'EOF_114329324912'
diff --git a/tests/test_taskgroups.py b/tests/test_taskgroups.py
index 1111111..2222222 100644
--- a/tests/test_taskgroups.py
+++ b/tests/test_taskgroups.py
@@ -1,1 +1,2 @@
 x
+y
diff --git a/tests/test_new.py b/tests/test_new.py
new file mode 100644
index 0000000..2222222
--- /dev/null
+++ b/tests/test_new.py
@@ -0,0 +1,1 @@
+y
diff --git a/tests/test_old.py b/tests/test_old.py
deleted file mode 100644
index 2222222..0000000
--- a/tests/test_old.py
+++ /dev/null
@@ -1,1 +0,0 @@
-x

EOF_114329324912
: '>>>>> Start Test Output'
LANG=C.UTF-8 LC_ALL=C.UTF-8 pytest -rA -p no:cacheprovider tests/test_taskgroups.py tests/test_new.py
: '>>>>> End Test Output'
git checkout 0123abcd0123abcd0123abcd0123abcd0123abcd tests/test_taskgroups.py tests/test_old.py
