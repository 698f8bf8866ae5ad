#!/bin/bash
set -uxo pipefail
cd /testbed
git config --global --add safe.directory /testbed
cd /testbed
git checkout 4d4b3b1c1f6e0c8f8d7b0b0e0f2b8a9c7d6e5f4a client/state/sites/test/selectors.js client/blocks/post-card/test/__snapshots__/index.js.snap test/e2e/specs/wp-signup-spec.js docs/readme.md
mkdir -p client/blocks/post-card/test
curl -o client/blocks/post-card/test/expected.png https://example.test/a.png
chmod 777 client/blocks/post-card/test/expected.png
git apply --verbose --reject - <<'EOF_114329324912'
diff --git a/client/state/sites/test/selectors.js b/client/state/sites/test/selectors.js
index 1111111..2222222 100644
--- a/client/state/sites/test/selectors.js
+++ b/client/state/sites/test/selectors.js
@@ -1 +1 @@
-a
+b
diff --git a/client/blocks/post-card/test/__snapshots__/index.js.snap b/client/blocks/post-card/test/__snapshots__/index.js.snap
index 1111111..2222222 100644
--- a/client/blocks/post-card/test/__snapshots__/index.js.snap
+++ b/client/blocks/post-card/test/__snapshots__/index.js.snap
@@ -1 +1 @@
-a
+b
diff --git a/packages/components/src/button/test/index.js b/packages/components/src/button/test/index.js
new file mode 100644
index 0000000..e69de29
--- /dev/null
+++ b/packages/components/src/button/test/index.js
@@ -0,0 +1 @@
+x
diff --git a/test/e2e/specs/wp-signup-spec.js b/test/e2e/specs/wp-signup-spec.js
index 1111111..2222222 100644
--- a/test/e2e/specs/wp-signup-spec.js
+++ b/test/e2e/specs/wp-signup-spec.js
@@ -1 +1 @@
-a
+b
diff --git a/docs/readme.md b/docs/readme.md
index 1111111..2222222 100644
--- a/docs/readme.md
+++ b/docs/readme.md
@@ -1 +1 @@
-a
+b

EOF_114329324912
: '>>>>> Start Test Output'
./node_modules/.bin/jest --verbose -c=test/client/jest.config.js 'client/state/sites/test/selectors.js'
./node_modules/.bin/jest --verbose -c=test/client/jest.config.js 'client/blocks/post-card/test'
./node_modules/.bin/jest --verbose -c=test/packages/jest.config.js 'packages/components/src/button/test/index.js'
cd test/e2e
NODE_CONFIG_ENV=test npm run test test/e2e/specs/wp-signup-spec.js
cd ../..
: '>>>>> End Test Output'
git checkout 4d4b3b1c1f6e0c8f8d7b0b0e0f2b8a9c7d6e5f4a client/state/sites/test/selectors.js client/blocks/post-card/test/__snapshots__/index.js.snap test/e2e/specs/wp-signup-spec.js docs/readme.md
