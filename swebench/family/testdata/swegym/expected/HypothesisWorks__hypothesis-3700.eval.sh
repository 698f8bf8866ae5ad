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
python -m pip install -r requirements/test.txt; python -m pip install -e hypothesis-python/;
git checkout 0123abcd0123abcd0123abcd0123abcd0123abcd hypothesis-python/tests/cover/test_x.py
git apply -v - <<'EOF_114329324912'
diff --git a/hypothesis-python/tests/cover/test_x.py b/hypothesis-python/tests/cover/test_x.py
index 1111111..2222222 100644
--- a/hypothesis-python/tests/cover/test_x.py
+++ b/hypothesis-python/tests/cover/test_x.py
@@ -1,1 +1,2 @@
 x
+y

EOF_114329324912
pytest -n0 -rA --tb=no --no-header hypothesis-python/tests/cover/test_x.py
git checkout 0123abcd0123abcd0123abcd0123abcd0123abcd hypothesis-python/tests/cover/test_x.py
