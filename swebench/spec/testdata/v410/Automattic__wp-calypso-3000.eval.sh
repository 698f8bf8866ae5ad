#!/bin/bash
set -uxo pipefail
cd /testbed
git config --global --add safe.directory /testbed
cd /testbed
git checkout 0123456789abcdef0123456789abcdef01234567 client/lib/url/test/index.js
git apply --verbose --reject - <<'EOF_114329324912'
diff --git a/client/lib/url/test/index.js b/client/lib/url/test/index.js
index 1111111..2222222 100644
--- a/client/lib/url/test/index.js
+++ b/client/lib/url/test/index.js
@@ -1 +1 @@
-a
+b

EOF_114329324912
: '>>>>> Start Test Output'
npm run test-client --verbose 'client/lib/url/test/index.js'
: '>>>>> End Test Output'
git checkout 0123456789abcdef0123456789abcdef01234567 client/lib/url/test/index.js
