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
python -m pip install 'numpy<2'; python -m pip install -ve . --no-build-isolation -Ceditable-verbose=true; pip uninstall pytest-qt -y;
git checkout 0123abcd0123abcd0123abcd0123abcd0123abcd pandas/tests/io/test_x.py ci/deps.yml
git apply -v - <<'EOF_114329324912'
diff --git a/pandas/tests/io/test_x.py b/pandas/tests/io/test_x.py
index 1111111..2222222 100644
--- a/pandas/tests/io/test_x.py
+++ b/pandas/tests/io/test_x.py
@@ -1,1 +1,2 @@
 x
+y
diff --git a/ci/deps.yml b/ci/deps.yml
index 1111111..2222222 100644
--- a/ci/deps.yml
+++ b/ci/deps.yml
@@ -1,1 +1,2 @@
 x
+y
diff --git a/pandas/tests/io/data/tips_csv b/pandas/tests/io/data/tips_csv
new file mode 100644
index 0000000..2222222
--- /dev/null
+++ b/pandas/tests/io/data/tips_csv
@@ -0,0 +1,1 @@
+y
diff --git a/pandas/tests/io/test_new.py b/pandas/tests/io/test_new.py
new file mode 100644
index 0000000..2222222
--- /dev/null
+++ b/pandas/tests/io/test_new.py
@@ -0,0 +1,1 @@
+y

EOF_114329324912
pytest -rA --tb=long pandas/tests/io/test_x.py pandas/tests/io/test_new.py
git checkout 0123abcd0123abcd0123abcd0123abcd0123abcd pandas/tests/io/test_x.py ci/deps.yml
