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
sed -i 's|isort@git+git://github.com/timothycrosley/isort|isort@git+https://github.com/timothycrosley/isort|g' requirements/dev.txt; { tail -n1 requirements/requirements.txt | grep -q "." && echo ""; } >> requirements/requirements.txt; echo "pip==24.0" >> requirements/requirements.txt;pip install "pip==24.0"; pip install -r requirements/dev.txt; pip install -e .;
git checkout 0123abcd0123abcd0123abcd0123abcd0123abcd 
git apply -v - <<'EOF_114329324912'
diff --git a/tests/test_new.py b/tests/test_new.py
new file mode 100644
index 0000000..2222222
--- /dev/null
+++ b/tests/test_new.py
@@ -0,0 +1,1 @@
+y

EOF_114329324912
pytest -rA --tb=long tests/test_new.py
git checkout 0123abcd0123abcd0123abcd0123abcd0123abcd 
