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
python -m pip install --upgrade pip wheel GitPython; python -m pip install "cython<3.0.0" && python -m pip install --no-build-isolation pyyaml==5.4.1; python -m pip install git+https://github.com/iterative/mock-ssh-server.git || true; python -m pip install -r tests/requirements.txt || true; python -m pip install -r test-requirements.txt || true; python -m pip install -e ".[tests,dev,all_remotes,all,testing]"; python -m pip install "numpy<=1.20"; python -m pip install "pytest<8";
git checkout 0123abcd0123abcd0123abcd0123abcd0123abcd tests/func/test_x.py
git apply -v - <<'EOF_114329324912'
diff --git a/tests/func/test_x.py b/tests/func/test_x.py
index 1111111..2222222 100644
--- a/tests/func/test_x.py
+++ b/tests/func/test_x.py
@@ -1,1 +1,2 @@
 x
+y

EOF_114329324912
pytest -rA tests/func/test_x.py
git checkout 0123abcd0123abcd0123abcd0123abcd0123abcd tests/func/test_x.py
