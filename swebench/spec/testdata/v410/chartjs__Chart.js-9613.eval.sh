#!/bin/bash
set -uxo pipefail
cd /testbed
git config --global --add safe.directory /testbed
cd /testbed
git checkout fedcba9876543210fedcba9876543210fedcba98 test/specs/core.layouts.tests.js
mkdir -p test/fixtures
curl -o test/fixtures/bar.png https://example.test/bar.png
chmod 777 test/fixtures/bar.png
mkdir -p .
curl -o top.png https://example.test/top.png
chmod 777 top.png
git apply --verbose --reject - <<'EOF_114329324912'
diff --git a/test/specs/core.layouts.tests.js b/test/specs/core.layouts.tests.js
index 1111111..2222222 100644
--- a/test/specs/core.layouts.tests.js
+++ b/test/specs/core.layouts.tests.js
@@ -1 +1 @@
-a
+b
diff --git a/test/fixtures/bar.png b/test/fixtures/bar.png
new file mode 100644
index 0000000..e69de29
--- /dev/null
+++ b/test/fixtures/bar.png
@@ -0,0 +1 @@
+x

EOF_114329324912
: '>>>>> Start Test Output'
npm install
npm run build
xvfb-run --server-args="-screen 0 1280x1024x24 -ac :99" su chromeuser -c "./node_modules/.bin/cross-env NODE_ENV=test ./node_modules/.bin/karma start ./karma.conf.js --single-run --coverage --grep --auto-watch false"
: '>>>>> End Test Output'
git checkout fedcba9876543210fedcba9876543210fedcba98 test/specs/core.layouts.tests.js
