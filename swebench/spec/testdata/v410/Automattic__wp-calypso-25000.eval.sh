#!/bin/bash
set -uxo pipefail
cd /testbed
git config --global --add safe.directory /testbed
cd /testbed
git checkout 89abcdef0123456789abcdef0123456789abcdef client/my-sites/test/index.jsx README.md
git apply --verbose --reject - <<'EOF_114329324912'
diff --git a/client/my-sites/test/index.jsx b/client/my-sites/test/index.jsx
index 1111111..2222222 100644
--- a/client/my-sites/test/index.jsx
+++ b/client/my-sites/test/index.jsx
@@ -1 +1 @@
-a
+b
diff --git a/README.md b/README.md
index 1111111..2222222 100644
--- a/README.md
+++ b/README.md
@@ -1 +1 @@
-a
+b

EOF_114329324912
: '>>>>> Start Test Output'
./node_modules/.bin/jest --verbose -c=test/client/jest.config.json 'client/my-sites/test/index.jsx'
: '>>>>> End Test Output'
git checkout 89abcdef0123456789abcdef0123456789abcdef client/my-sites/test/index.jsx README.md
