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
sed -i '/^git+https:\/\/github.com\/Project-MONAI\//d' requirements-dev.txt; python -m pip install types-pkg-resources==0.1.3 pytest; pip install -r requirements-dev.txt;python setup.py develop;
git checkout 0123abcd0123abcd0123abcd0123abcd0123abcd tests/test_x.py
git apply -v - <<'EOF_114329324912'
diff --git a/tests/test_x.py b/tests/test_x.py
index 1111111..2222222 100644
--- a/tests/test_x.py
+++ b/tests/test_x.py
@@ -1,1 +1,2 @@
 x
+y

EOF_114329324912
pytest -rA  tests/test_x.py
git checkout 0123abcd0123abcd0123abcd0123abcd0123abcd tests/test_x.py
