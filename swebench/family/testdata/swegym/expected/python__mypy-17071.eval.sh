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
python -m pip install -r test-requirements.txt; python -m pip install -e .; hash -r
git checkout 0123abcd0123abcd0123abcd0123abcd0123abcd test-data/unit/check-x.test
git apply -v - <<'EOF_114329324912'
diff --git a/test-data/unit/check-x.test b/test-data/unit/check-x.test
index 1111111..2222222 100644
--- a/test-data/unit/check-x.test
+++ b/test-data/unit/check-x.test
@@ -1,1 +1,2 @@
 x
+[case testOne]

EOF_114329324912
pytest -rA -k "testOne"
git checkout 0123abcd0123abcd0123abcd0123abcd0123abcd test-data/unit/check-x.test
