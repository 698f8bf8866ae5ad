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
git checkout 0123abcd0123abcd0123abcd0123abcd0123abcd Tests/test_seq.py
git apply -v - <<'EOF_114329324912'
diff --git a/Tests/test_seq.py b/Tests/test_seq.py
index 1111111..2222222 100644
--- a/Tests/test_seq.py
+++ b/Tests/test_seq.py
@@ -1,1 +1,2 @@
 x
+y

EOF_114329324912
: '>>>>> Start Test Output'
LANG=C.UTF-8 LC_ALL=C.UTF-8 pytest --no-header -rA --tb=line --color=no -p no:cacheprovider -W ignore::DeprecationWarning Tests/test_seq.py
: '>>>>> End Test Output'
git checkout 0123abcd0123abcd0123abcd0123abcd0123abcd Tests/test_seq.py
