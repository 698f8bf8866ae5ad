package logparse_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/swebench/harness"
	"github.com/swebox/swebox/swebench/logparse"
)

var update = flag.Bool("update", false, "rewrite golden files from the current output")

// capturesFor names the parsers each family of captures is read with.
var capturesFor = map[string][]string{
	"pytest_":   {"pytest", "pytest_options", "pytest_v2", "matplotlib", "seaborn"},
	"unittest_": {"django"},
	"sympy_":    {"sympy"},
}

// TestGoldenCaptures parses the output of real runners (testdata/captures,
// written by testdata/capture.sh in the test image) with every parser that
// reads that runner, under both rule sets, and compares with
// testdata/golden/<capture>.json.
func TestGoldenCaptures(t *testing.T) {
	paths, err := filepath.Glob("testdata/captures/*.log")
	require.NoError(t, err)
	require.NotEmpty(t, paths, "run testdata/capture.sh")
	for _, path := range paths {
		name := strings.TrimSuffix(filepath.Base(path), ".log")
		t.Run(name, func(t *testing.T) {
			raw, err := os.ReadFile(path)
			require.NoError(t, err)
			var parsers []string
			for prefix, names := range capturesFor {
				if strings.HasPrefix(name, prefix) {
					parsers = names
				}
			}
			require.NotEmpty(t, parsers, "no parser family for %s", name)
			got := map[string]any{}
			for _, parser := range parsers {
				for _, rules := range []harness.Rules{harness.V4, harness.V5} {
					m, err := logparse.Parse(parser, string(raw), rules)
					key := parser + "/" + string(rules)
					if err != nil {
						got[key] = "error: " + err.Error()
						continue
					}
					got[key] = m
				}
			}
			compareGolden(t, filepath.Join("testdata", "golden", name+".json"), got)
		})
	}
}

func compareGolden(t *testing.T, path string, v any) {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	require.NoError(t, enc.Encode(v))
	if *update {
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, buf.Bytes(), 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "golden file missing: run go test -update")
	assert.Equal(t, string(want), buf.String())
}

// TestCapturedFacts pins the facts about the captures that the goldens must
// show, so that a regenerated golden cannot silently lose them.
func TestCapturedFacts(t *testing.T) {
	read := func(name string) string {
		raw, err := os.ReadFile(filepath.Join("testdata", "captures", name+".log"))
		require.NoError(t, err)
		return string(raw)
	}
	parse := func(parser, log string, rules harness.Rules) logparse.StatusMap {
		m, err := logparse.Parse(parser, log, rules)
		require.NoError(t, err)
		return m
	}
	type testCase struct {
		name    string
		capture string
		parser  string
		rules   harness.Rules
		want    map[string]logparse.Status // name -> status; "" means absent
	}
	cases := []testCase{
		{"pytest passes and failures", "pytest_ra", "pytest", harness.V4, map[string]logparse.Status{
			"tests/test_stub.py::test_pass":                     logparse.PASSED,
			"tests/test_stub.py::test_fail":                     logparse.FAILED,
			"tests/test_stub.py::test_error":                    logparse.ERROR,
			"tests/test_stub.py::test_xfail":                    logparse.XFAIL,
			"tests/test_stub.py::test_xpass":                    "",
			"tests/test_stub.py::TestGroup::test_method":        logparse.PASSED,
			"tests/sub/test_deep.py::test_numbers[2]":           logparse.FAILED,
			"tests/test_stub.py::test_mouse[MouseButton.RIGHT]": logparse.FAILED,
		}},
		{"pytest name cut at whitespace", "pytest_ra", "pytest", harness.V4, map[string]logparse.Status{
			"tests/test_stub.py::test_param[a":    logparse.PASSED,
			"tests/test_stub.py::test_param[a b]": "",
			"tests/test_stub.py::test_param[dash": logparse.PASSED,
		}},
		{"pytest v4 records skip summaries as [1]", "pytest_ra", "pytest", harness.V4, map[string]logparse.Status{
			"[1]": logparse.SKIPPED,
		}},
		{"pytest v5 drops skip summaries", "pytest_ra", "pytest", harness.V5, map[string]logparse.Status{
			"[1]": "",
		}},
		{"pytest reads forged lines from captured output", "pytest_ra", "pytest", harness.V4, map[string]logparse.Status{
			"tests/test_stub.py::test_forged": logparse.PASSED,
			"not":                             logparse.Status("ERROR:"),
		}},
		{"pytest_options keeps the last path segment", "pytest_ra", "pytest_options", harness.V4, map[string]logparse.Status{
			"tests/test_stub.py::test_param[/path]":          logparse.PASSED,
			"tests/test_stub.py::test_param[//double/slash]": logparse.PASSED,
			"tests/test_stub.py::test_param[/with*star]":     logparse.PASSED,
		}},
		{"matplotlib replaces MouseButton", "pytest_ra", "matplotlib", harness.V4, map[string]logparse.Status{
			"tests/test_stub.py::test_mouse[1]": logparse.PASSED,
			"tests/test_stub.py::test_mouse[3]": logparse.FAILED,
		}},
		{"seaborn records only passed and failed", "pytest_noheader", "seaborn", harness.V4, map[string]logparse.Status{
			"tests/test_stub.py::test_pass":  logparse.PASSED,
			"tests/test_stub.py::test_fail":  logparse.FAILED,
			"tests/test_stub.py::test_xfail": "",
			"tests/test_stub.py::test_error": "",
		}},
		{"pytest_v2 reads classic verbose lines", "pytest_classic", "pytest_v2", harness.V4, map[string]logparse.Status{
			"tests/test_stub.py::test_pass":              logparse.PASSED,
			"tests/test_stub.py::test_error_in_teardown": logparse.ERROR,
			"tests/test_stub.py::test_param[a":           logparse.PASSED,
		}},
		{"pytest_v2 v5 keys full names", "pytest_ra", "pytest_v2", harness.V5, map[string]logparse.Status{
			"tests/test_stub.py::test_param[a b]":      logparse.PASSED,
			"tests/test_stub.py::test_param[dash - y]": logparse.PASSED,
			"tests/test_stub.py::test_fail":            logparse.FAILED,
		}},
		{"pytest_v2 strips colours", "pytest_color", "pytest_v2", harness.V4, map[string]logparse.Status{
			"tests/test_stub.py::test_pass": logparse.PASSED,
			"tests/test_stub.py::test_fail": logparse.FAILED,
		}},
		{"pytest does not strip colours", "pytest_color", "pytest", harness.V4, map[string]logparse.Status{
			"tests/test_stub.py::test_pass": "",
		}},
		{"django verbose unittest", "unittest_verbose", "django", harness.V4, map[string]logparse.Status{
			"test_ok (app.tests.ModelTests.test_ok)":       logparse.PASSED,
			"test_fail (app.tests.ModelTests.test_fail)":   logparse.FAILED,
			"test_error (app.tests.ModelTests.test_error)": logparse.ERROR,
			"test_skip (app.tests.ModelTests.test_skip)":   logparse.SKIPPED,
			"test_fail":  logparse.FAILED,
			"test_error": logparse.ERROR,
			"Docstring first line is the name Django tests get.":                     logparse.PASSED,
			"--version is equivalent to version":                                     logparse.PASSED,
			"test_system_check (app.tests.InterruptedTests.test_system_check)":       logparse.PASSED,
			"test_server_error (app.tests.InterruptedTests.test_server_error)":       logparse.PASSED,
			"test_testing_against (app.tests.InterruptedTests.test_testing_against)": logparse.PASSED,
			"test_no_migrations (app.tests.MigrationTests.test_no_migrations)":       logparse.PASSED,
			"test_expected_failure (app.tests.ModelTests.test_expected_failure)":     "",
		}},
		{"sympy bin/test", "sympy_verbose", "sympy", harness.V4, map[string]logparse.Status{
			"test_structure": logparse.PASSED,
			"test_equality":  logparse.FAILED,
			"test_immutable": logparse.ERROR,
			"test_known_bug": "",
			"sympy/core/tests/test_basic.py:test_equality":  logparse.FAILED,
			"sympy/core/tests/test_basic.py:test_immutable": logparse.FAILED,
			"test_printmethod":  logparse.PASSED,
			"test_lambdify_cse": "",
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := parse(tc.parser, read(tc.capture), tc.rules)
			keys := make([]string, 0, len(tc.want))
			for k := range tc.want {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				got, ok := m[k]
				if tc.want[k] == "" {
					assert.False(t, ok, "%q should be absent, got %q", k, got)
					continue
				}
				assert.Equal(t, tc.want[k], got, "status of %q", k)
			}
		})
	}
}
