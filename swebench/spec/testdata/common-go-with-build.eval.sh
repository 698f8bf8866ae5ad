#!/bin/bash
set -uxo pipefail
cd /testbed
git config --global --add safe.directory /testbed
cd /testbed
git checkout 0123456789abcdef0123456789abcdef01234567 context_test.go
git apply --verbose --reject - <<'EOF_114329324912'
diff --git a/context_test.go b/context_test.go
--- a/context_test.go
+++ b/context_test.go
@@ -1 +1,2 @@
 package gin
+// x

EOF_114329324912
go build ./...
: '>>>>> Start Test Output'
go test -v ./...
SWEBENCH_TEST_EXIT_CODE=$?
: '>>>>> End Test Output'
echo ">>>>> Test Exit Code: $SWEBENCH_TEST_EXIT_CODE"
git checkout 0123456789abcdef0123456789abcdef01234567 context_test.go
