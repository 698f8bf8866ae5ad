package logparse_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/swebench/harness"
	"github.com/swebox/swebox/swebench/logparse"
)

// TestReleaseDifferences parses the same log under both rule sets for every
// rule that differs between SWE-bench 4.1.0 and 5.0.2, so neither rule set
// borrows the other's behaviour. Each case states both results and must
// tell the releases apart; a case marked same is the control that shows
// the rule agrees where the runner's output is ordinary.
//
// Logs under testdata/java are real Maven 3.8.7 output (testdata/java/
// capture.sh); testdata/captures are real pytest runs. Gradle and Jest are
// not installable offline here, so their logs are written by hand in the
// format the official eval scripts make those runners print (Gradle's
// testLogging as set up by the official pre_install patch, one
// "pkg.Class > method STATUS" per test; Jest --verbose's "✓ title (3 ms)").
func TestReleaseDifferences(t *testing.T) {
	type testCase struct {
		name   string
		parser string
		target logparse.Target
		log    string // inline log, or "file:<path under testdata>"
		v4, v5 logparse.StatusMap
		v4Err  bool // 4.1.0 raises
		same   bool
	}
	const (
		numbers = "demo.ParserTest#parsesNumbers"
		signs   = "demo.ParserTest#rejectsSigns"
		hex     = "demo.ParserTest#parsesHex"
	)
	fifo := logparse.StatusMap{numbers: logparse.PASSED, signs: logparse.FAILED, hex: logparse.PASSED}
	gradle := "+ ./gradlew test --tests org.apache.lucene.index.TestIndexWriter\n" +
		"> Task :lucene:core:test\n" +
		"org.apache.lucene.index.TestIndexWriter > testDocCount PASSED\n" +
		"org.apache.lucene.index.TestIndexWriter > testMaxThreadPriority\n" +
		"WARNING: A terminally deprecated method in java.lang.System has been called\n" +
		"FAILED\n" +
		"org.apache.lucene.index.TestIndexWriter > testFlushWithNoMerging SKIPPED\n"
	jest := "+ npx jest --verbose src/__tests__/Map.ts\n" +
		"PASS src/__tests__/Map.ts\n" +
		"  Map\n" +
		"    ✓ converts from object  (3 ms)\n" +
		"    ✕ merges deeply  (12 ms)\n" +
		"    ✓ iterates\n"
	for _, tc := range []testCase{
		{name: "maven sequential runs agree", parser: "maven", log: "file:java/maven_sequential.log",
			v4: fifo, v5: fifo, same: true},
		{name: "maven trace before output: 4.1.0 gives every result to the last name", parser: "maven",
			log: "file:java/maven_streams_trace_first.log",
			v4:  logparse.StatusMap{hex: logparse.PASSED}, v5: fifo},
		{name: "maven output before trace: 4.1.0 names nothing, 5.0.2 pairs at the end", parser: "maven",
			log: "file:java/maven_streams_output_first.log",
			v4:  logparse.StatusMap{"---NO TEST NAME FOUND YET---": logparse.PASSED}, v5: fifo},
		{name: "gradle status on its own line is 5.0.2 only", parser: "gradle_custom", log: gradle,
			v4: logparse.StatusMap{"org.apache.lucene.index.TestIndexWriter > testDocCount": logparse.PASSED},
			v5: logparse.StatusMap{
				"org.apache.lucene.index.TestIndexWriter > testDocCount":          logparse.PASSED,
				"org.apache.lucene.index.TestIndexWriter > testMaxThreadPriority": logparse.FAILED,
			}},
		{name: "gradle name line must not start with >", parser: "gradle_custom",
			log: "> Task :test > run\nPASSED\n", v4: logparse.StatusMap{}, v5: logparse.StatusMap{}, same: true},
		{name: "jest keeps the space before the timing under 4.1.0", parser: "jest", log: jest,
			v4: logparse.StatusMap{"converts from object ": logparse.PASSED, "merges deeply ": logparse.FAILED, "iterates": logparse.PASSED},
			v5: logparse.StatusMap{"converts from object": logparse.PASSED, "merges deeply": logparse.FAILED, "iterates": logparse.PASSED}},
		{name: "immutable-js 2006 reads jest by its release's rule", parser: "immutable_js",
			target: logparse.Target{InstanceID: "immutable-js__immutable-js-2006"}, log: jest,
			v4: logparse.StatusMap{"converts from object ": logparse.PASSED, "merges deeply ": logparse.FAILED, "iterates": logparse.PASSED},
			v5: logparse.StatusMap{"converts from object": logparse.PASSED, "merges deeply": logparse.FAILED, "iterates": logparse.PASSED}},
		{name: "pytest skip summary is a test under 4.1.0", parser: "pytest",
			log: "SKIPPED [1] tests/test_stub.py:12: not today\nPASSED tests/test_stub.py::test_ok\n",
			v4:  logparse.StatusMap{"[1]": logparse.SKIPPED, "tests/test_stub.py::test_ok": logparse.PASSED},
			v5:  logparse.StatusMap{"tests/test_stub.py::test_ok": logparse.PASSED}},
		{name: "pytest_v2 keeps whole names with spaces under 5.0.2", parser: "pytest_v2",
			log: "PASSED tests/test_stub.py::test_param[a b]\nFAILED tests/test_stub.py::test_x - assert 1 - 2\n",
			v4:  logparse.StatusMap{"tests/test_stub.py::test_param[a": logparse.PASSED, "tests/test_stub.py::test_x": logparse.FAILED},
			v5:  logparse.StatusMap{"tests/test_stub.py::test_param[a b]": logparse.PASSED, "tests/test_stub.py::test_x": logparse.FAILED}},
		{name: "seaborn bare status line raises under 4.1.0", parser: "seaborn", log: "FAILED\nPASSED t.py::a\n",
			v4Err: true, v5: logparse.StatusMap{"t.py::a": logparse.PASSED}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			log := tc.log
			if path, ok := strings.CutPrefix(log, "file:"); ok {
				raw, err := os.ReadFile(filepath.Join("testdata", path))
				require.NoError(t, err)
				log = string(raw)
			}
			v4, err := logparse.ParseTarget(tc.parser, log, harness.V4, tc.target)
			if tc.v4Err {
				require.ErrorIs(t, err, logparse.ErrParserRaised)
			} else {
				require.NoError(t, err)
				assert.Equal(t, tc.v4, v4, "4.1.0")
			}
			v5, err := logparse.ParseTarget(tc.parser, log, harness.V5, tc.target)
			require.NoError(t, err)
			assert.Equal(t, tc.v5, v5, "5.0.2")
			if tc.same {
				assert.Equal(t, v4, v5)
			} else if !tc.v4Err {
				assert.NotEqual(t, v4, v5, "the log must tell the releases apart")
			}
		})
	}
}
