#!/bin/bash
set -xo pipefail
source /opt/miniconda3/bin/activate
conda activate testbed
cd /testbed
git config --global --add safe.directory /testbed
cd /testbed
git status
git show
git diff 0123abcd0123abcd0123abcd0123abcd0123abcd
source /opt/miniconda3/bin/activate
conda activate testbed
python -m pip install -r test-requirements.txt; python -m pip install -e .; pip install pytest pytest-xdist; hash -r;
git checkout 0123abcd0123abcd0123abcd0123abcd0123abcd test-data/unit/check-classes.test
git apply -v - <<'EOF_114329324912'
diff --git a/test-data/unit/check-classes.test b/test-data/unit/check-classes.test
index 1111111..2222222 100644
--- a/test-data/unit/check-classes.test
+++ b/test-data/unit/check-classes.test
@@ -1,1 +1,2 @@
 x
+[case testFooBar]
+[case testBaz_python2]

EOF_114329324912
pytest -n0 -rA -k "testFooBar or testBaz_python2"
git checkout 0123abcd0123abcd0123abcd0123abcd0123abcd test-data/unit/check-classes.test
