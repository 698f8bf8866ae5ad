#!/bin/bash
set -uxo pipefail
cd /testbed
git config --global --add safe.directory /testbed
cd /testbed
echo "No test files to reset"
git apply --verbose --reject - <<'EOF_114329324912'
diff --git a/new_test.go b/new_test.go
new file mode 100644
--- /dev/null
+++ b/new_test.go
@@ -0,0 +1 @@
+package gin

EOF_114329324912
: '>>>>> Start Test Output'
go test -v ./...
: '>>>>> End Test Output'
echo "No test files to reset"
