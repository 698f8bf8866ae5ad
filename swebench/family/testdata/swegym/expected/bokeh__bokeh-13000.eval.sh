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
python -m pip install -e .; python -m pip install bokeh_sampledata;
git checkout 0123abcd0123abcd0123abcd0123abcd0123abcd tests/unit/bokeh/test_x.py
git apply -v - <<'EOF_114329324912'
diff --git a/tests/unit/bokeh/test_x.py b/tests/unit/bokeh/test_x.py
index 1111111..2222222 100644
--- a/tests/unit/bokeh/test_x.py
+++ b/tests/unit/bokeh/test_x.py
@@ -1,1 +1,2 @@
 x
+y

EOF_114329324912
pytest -rA -n0 tests/unit/bokeh/test_x.py
git checkout 0123abcd0123abcd0123abcd0123abcd0123abcd tests/unit/bokeh/test_x.py
