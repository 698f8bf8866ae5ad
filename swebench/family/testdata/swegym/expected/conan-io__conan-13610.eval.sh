#!/bin/bash
set -xo pipefail
source /opt/miniconda3/bin/activate
conda activate testbed
cd /testbed
export PYTHONPATH=${PYTHONPATH:-}:$(pwd)
git config --global --add safe.directory /testbed
cd /testbed
git status
git show
git diff 0123abcd0123abcd0123abcd0123abcd0123abcd
source /opt/miniconda3/bin/activate
conda activate testbed
echo 'cython<3' > /tmp/constraint.txt; export PIP_CONSTRAINT=/tmp/constraint.txt; python -m pip install -r conans/requirements.txt; python -m pip install -r conans/requirements_server.txt; python -m pip install -r conans/requirements_dev.txt 
git checkout 0123abcd0123abcd0123abcd0123abcd0123abcd conans/test/unittests/test_x.py
git apply -v - <<'EOF_114329324912'
diff --git a/conans/test/unittests/test_x.py b/conans/test/unittests/test_x.py
index 1111111..2222222 100644
--- a/conans/test/unittests/test_x.py
+++ b/conans/test/unittests/test_x.py
@@ -1,1 +1,2 @@
 x
+y

EOF_114329324912
pytest -n0 -rA conans/test/unittests/test_x.py
git checkout 0123abcd0123abcd0123abcd0123abcd0123abcd conans/test/unittests/test_x.py
