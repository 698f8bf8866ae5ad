package pytestparse

//go:generate bash testdata/capture.sh

import (
	"bufio"
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
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

// capture is one line of testdata/captures.list: a run of the stub suite.
type capture struct {
	name  string
	check string // "full" or "partial", see captures.list
	args  string
}

func readCaptures(t testing.TB) []capture {
	t.Helper()
	f, err := os.Open("testdata/captures.list")
	require.NoError(t, err)
	defer f.Close()
	var out []capture
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Split(line, "|")
		require.Len(t, fields, 4, "captures.list line %q", line)
		out = append(out, capture{
			name:  strings.TrimSpace(fields[0]),
			check: strings.TrimSpace(fields[1]),
			args:  strings.TrimSpace(fields[3]),
		})
	}
	require.NoError(t, sc.Err())
	require.NotEmpty(t, out)
	return out
}

func marshalReport(t testing.TB, r *Report) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	require.NoError(t, enc.Encode(r))
	return buf.Bytes()
}

// checkGolden compares got with the golden file, or rewrites it with -update.
func checkGolden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, got, 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "missing golden file; run go test ./pytestparse -update")
	assert.Equal(t, string(want), string(got), "golden %s differs; run go test ./pytestparse -update and review the diff", path)
}

// TestGoldenCaptures parses every capture of a real pytest run and compares
// the report with its golden JSON file.
func TestGoldenCaptures(t *testing.T) {
	for _, c := range readCaptures(t) {
		t.Run(c.name, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata", "captures", c.name+".txt"))
			require.NoError(t, err, "missing capture; run testdata/capture.sh")
			r := ParseBytes(data)
			checkGolden(t, filepath.Join("testdata", "golden", c.name+".json"), marshalReport(t, r))
		})
	}
}

// TestGoldenHandmade covers the forms no capture can produce (other pytest
// versions, plugins that are not installed, damaged logs): each
// testdata/handmade/NAME.log has its report in NAME.json.
func TestGoldenHandmade(t *testing.T) {
	logs, err := filepath.Glob(filepath.Join("testdata", "handmade", "*.log"))
	require.NoError(t, err)
	require.NotEmpty(t, logs)
	for _, path := range logs {
		name := strings.TrimSuffix(filepath.Base(path), ".log")
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(path)
			require.NoError(t, err)
			r := ParseBytes(data)
			checkGolden(t, strings.TrimSuffix(path, ".log")+".json", marshalReport(t, r))
		})
	}
}

// TestCapturesCrossCheck checks the parsed tests against pytest's own closing
// line in every capture that has one: equal counts where every outcome is
// printed with its node id, never more where only some are.
func TestCapturesCrossCheck(t *testing.T) {
	checked := 0
	for _, c := range readCaptures(t) {
		t.Run(c.name, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata", "captures", c.name+".txt"))
			require.NoError(t, err)
			r := ParseBytes(data)
			if !r.Summary.Seen {
				require.Equal(t, "partial", c.check, "a full capture must end with a closing line")
				return
			}
			checked++
			got := r.ReportedCounts()
			if got[Skipped] == 0 {
				// Without -v, pytest folds skips by location: no node ids.
				for _, g := range r.SkipGroups {
					got[Skipped] += g.Count
				}
			}
			for _, o := range Outcomes() {
				want := r.Summary.Count(o)
				if c.check == "full" {
					assert.Equal(t, want, got[o], "%s: parsed %s vs closing line", c.args, o)
				} else {
					assert.LessOrEqual(t, got[o], want, "%s: parsed %s vs closing line", c.args, o)
				}
			}
			// One verdict per test, the most severe outcome it was reported with.
			sum := 0
			for _, n := range r.Counts() {
				sum += n
			}
			assert.Equal(t, len(r.Tests), sum)
			for _, tc := range r.Tests {
				assert.True(t, tc.Reported.Has(tc.Outcome), tc.ID)
				for _, o := range tc.Reported.Outcomes() {
					assert.LessOrEqual(t, severity[o], severity[tc.Outcome], tc.ID)
				}
			}
		})
	}
	assert.Positive(t, checked)
}

// TestCapturesCoverForms makes sure the captures still exercise what the
// parser must handle, so that regenerating them cannot silently drop a case.
func TestCapturesCoverForms(t *testing.T) {
	type testCase struct {
		name    string
		capture string
		check   func(t *testing.T, r *Report)
	}
	cases := []testCase{
		{"teardown error after pass is an error", "v", func(t *testing.T, r *Report) {
			tc := mustTest(t, r, "tests/test_outcomes.py::test_teardown_error_after_pass")
			assert.Equal(t, Error, tc.Outcome)
			assert.Equal(t, OutcomeSet(0).With(Passed).With(Error), tc.Reported)
		}},
		{"teardown error after failure stays a failure", "rA", func(t *testing.T, r *Report) {
			tc := mustTest(t, r, "tests/test_outcomes.py::test_teardown_error_after_fail")
			assert.Equal(t, Failed, tc.Outcome)
			assert.Equal(t, "AssertionErro...", tc.Message)
		}},
		{"summary message beats verbose reason", "v-rA", func(t *testing.T, r *Report) {
			tc := mustTest(t, r, "tests/test_outcomes.py::test_xfail_inline")
			assert.Equal(t, XFailed, tc.Outcome)
			assert.Equal(t, SourceSummary, tc.Source)
			assert.Equal(t, "reason: decided at runtime", tc.Message)
		}},
		{"id containing the separator and brackets", "rA", func(t *testing.T, r *Report) {
			tc := mustTest(t, r, "tests/test_params.py::test_awkward_fail[a - b]")
			assert.Equal(t, Failed, tc.Outcome)
			assert.Equal(t, "AssertionError: asser...", tc.Message)
		}},
		{"id containing a status word and a percentage", "v", func(t *testing.T, r *Report) {
			tc := mustTest(t, r, "tests/test_params.py::test_awkward_pass[ FAILED [ 50%]]")
			assert.Equal(t, Passed, tc.Outcome)
		}},
		{"xpass reason without a dash", "rA", func(t *testing.T, r *Report) {
			tc := mustTest(t, r, "tests/test_params.py::test_awkward_xpass[a - b]")
			assert.Equal(t, XPassed, tc.Outcome)
			assert.Equal(t, "xpass - with dash", tc.Message)
		}},
		{"captured output is not a test", "v-rA", func(t *testing.T, r *Report) {
			for _, tc := range r.Tests {
				assert.NotContains(t, tc.ID, "test_fake.py")
				assert.NotContains(t, tc.ID, "inner/")
			}
			assert.Equal(t, 32, r.Summary.Passed)
		}},
		{"-s output and an inner session", "s-v", func(t *testing.T, r *Report) {
			for _, tc := range r.Tests {
				assert.NotContains(t, tc.ID, "test_fake.py")
				assert.NotContains(t, tc.ID, "inner/")
			}
			tc := mustTest(t, r, "tests/test_output.py::test_prints_status_lines_and_passes")
			assert.Equal(t, Passed, tc.Outcome)
			tc = mustTest(t, r, "tests/test_output.py::test_prints_inner_session_and_passes")
			assert.Equal(t, Passed, tc.Outcome)
			assert.Empty(t, r.Unfinished)
		}},
		{"inherited test under -vv", "vv", func(t *testing.T, r *Report) {
			_, ok := r.Test("tests/test_inherit.py::TestInherited::test_inherited")
			assert.True(t, ok)
		}},
		{"xdist start lines and results", "xdist-v", func(t *testing.T, r *Report) {
			assert.Empty(t, r.Unfinished)
			tc := mustTest(t, r, "tests/test_outcomes.py::test_pass")
			assert.Equal(t, SourceXdist, tc.Source)
			// pytest's default -rfE adds summary lines for errors and failures.
			tc = mustTest(t, r, "tests/test_outcomes.py::test_teardown_error_after_pass")
			assert.Equal(t, SourceSummary, tc.Source)
			assert.Equal(t, Error, tc.Outcome)
		}},
		{"collection error interrupts", "collect-error-v-rA", func(t *testing.T, r *Report) {
			assert.Equal(t, []string{"broken/test_broken.py"}, r.CollectionErrors)
			assert.True(t, r.Interrupted)
			assert.Equal(t, "Interrupted: 1 error during collection", r.InterruptReason)
			tc := mustTest(t, r, "broken/test_broken.py")
			assert.Equal(t, Error, tc.Outcome)
		}},
		{"killed run keeps what it saw", "killed-v", func(t *testing.T, r *Report) {
			assert.False(t, r.Summary.Seen)
			assert.Equal(t, []string{"tests/test_slow.py::test_sleeps_when_asked"}, r.Unfinished)
			assert.NotEmpty(t, r.Tests)
		}},
		{"colours", "color-v-rA", func(t *testing.T, r *Report) {
			assert.True(t, r.Summary.Seen)
			assert.Equal(t, 12, r.Summary.Failed)
			tc := mustTest(t, r, "tests/test_params.py::test_awkward_fail[x] - [y]")
			assert.Equal(t, "AssertionError: assert 'x] - [y' == 'something else'", tc.Message)
		}},
		{"multi-line messages on CI", "ci-rA", func(t *testing.T, r *Report) {
			tc := mustTest(t, r, "tests/test_outcomes.py::test_multiline_message")
			assert.Equal(t, "AssertionError: first line\nsecond line\nthird line", tc.Message)
		}},
		{"nothing selected", "no-tests-v", func(t *testing.T, r *Report) {
			assert.True(t, r.Summary.Seen)
			assert.Positive(t, r.Summary.Deselected)
			assert.Equal(t, r.Collected, r.Summary.Deselected)
			assert.Empty(t, r.Tests)
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata", "captures", tc.capture+".txt"))
			require.NoError(t, err)
			tc.check(t, ParseBytes(data))
		})
	}
}

func mustTest(t *testing.T, r *Report, id string) Test {
	t.Helper()
	tc, ok := r.Test(id)
	require.True(t, ok, "no test %q", id)
	return tc
}

// TestCapturesAgreeAcrossModes checks that the verbose, summary and xdist
// renderings of the same run give the same verdict for each test both show.
func TestCapturesAgreeAcrossModes(t *testing.T) {
	load := func(name string) map[string]Outcome {
		data, err := os.ReadFile(filepath.Join("testdata", "captures", name+".txt"))
		require.NoError(t, err)
		return ParseBytes(data).Outcomes()
	}
	base := load("v-rA")
	for _, name := range []string{"v", "vv", "rA", "q-rA", "tbno-rA", "tbno-v", "v-classic", "v-count", "color-v-rA", "ci-rA", "xdist-v", "xdist-rA", "xdist-v-rA", "xdist-vv-classic", "vv-rA-tbno-classic", "no-header-rA"} {
		t.Run(name, func(t *testing.T) {
			got := load(name)
			var diff []string
			for id, o := range got {
				if want, ok := base[id]; !ok || want != o {
					diff = append(diff, id+": "+o.String()+" vs "+want.String())
				}
			}
			sort.Strings(diff)
			assert.Empty(t, diff)
		})
	}
}
