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
git checkout 0123abcd0123abcd0123abcd0123abcd0123abcd astropy/io/tests/test_a.py
git apply -v - <<'EOF_114329324912'
diff --git a/astropy/io/tests/test_a.py b/astropy/io/tests/test_a.py
index 1111111..2222222 100644
--- a/astropy/io/tests/test_a.py
+++ b/astropy/io/tests/test_a.py
@@ -1,1 +1,2 @@
 x
+y

EOF_114329324912
: '>>>>> Start Test Output'
LANG=C.UTF-8 LC_ALL=C.UTF-8 pytest -rA -vv -o console_output_style=classic astropy/io/tests/test_a.py
: '>>>>> End Test Output'
git checkout 0123abcd0123abcd0123abcd0123abcd0123abcd astropy/io/tests/test_a.py
