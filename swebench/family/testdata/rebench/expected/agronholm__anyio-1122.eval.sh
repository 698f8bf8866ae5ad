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
LANG=C.UTF-8 LC_ALL=C.UTF-8 pip install -e .
git checkout 0123abcd0123abcd0123abcd0123abcd0123abcd tests/test_taskgroups.py tests/data.json docs/versionhistory.rst
git apply -v - <<'EOF_114329324912'
diff --git a/tests/test_taskgroups.py b/tests/test_taskgroups.py
index 1111111..2222222 100644
--- a/tests/test_taskgroups.py
+++ b/tests/test_taskgroups.py
@@ -1,1 +1,2 @@
 x
+y
diff --git a/tests/data.json b/tests/data.json
index 1111111..2222222 100644
--- a/tests/data.json
+++ b/tests/data.json
@@ -1,1 +1,2 @@
 x
+y
diff --git a/docs/versionhistory.rst b/docs/versionhistory.rst
index 1111111..2222222 100644
--- a/docs/versionhistory.rst
+++ b/docs/versionhistory.rst
@@ -1,1 +1,2 @@
 x
+y

EOF_114329324912
: '>>>>> Start Test Output'
LANG=C.UTF-8 LC_ALL=C.UTF-8 pytest --no-header -rA --tb=line --color=no -p no:cacheprovider -W ignore::DeprecationWarning tests/test_taskgroups.py docs/versionhistory.rst
: '>>>>> End Test Output'
git checkout 0123abcd0123abcd0123abcd0123abcd0123abcd tests/test_taskgroups.py tests/data.json docs/versionhistory.rst
