package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/pytestparse"
)

const parseLog = `============================= test session starts ==============================
collected 4 items

tests/test_x.py::test_ok PASSED                                          [ 25%]
tests/test_x.py::test_p[a - "b" <c>] FAILED                              [ 50%]
tests/test_x.py::test_fix PASSED                                         [ 75%]
tests/test_x.py::test_fix ERROR                                          [ 75%]

=========================== short test summary info ============================
FAILED tests/test_x.py::test_p[a - "b" <c>] - AssertionError: tab	and \ back
ERROR tests/test_x.py::test_fix - RuntimeError: teardown
=========== 1 failed, 2 passed, 1 warning, 1 error, 2 subtests passed in 0.12s ============
`

func TestRunParse(t *testing.T) {
	dir := t.TempDir()
	logFile := filepath.Join(dir, "test_output.txt")
	require.NoError(t, os.WriteFile(logFile, []byte(parseLog), 0o644))
	cut := strings.Join(strings.Split(parseLog, "\n")[:5], "\n")

	const wantJSON = `{"tests": [` +
		`{"id": "tests/test_x.py::test_ok", "outcome": "passed", "message": ""}, ` +
		`{"id": "tests/test_x.py::test_p[a - \"b\" <c>]", "outcome": "failed", "message": "AssertionError: tab\tand \\ back"}, ` +
		`{"id": "tests/test_x.py::test_fix", "outcome": "error", "message": "RuntimeError: teardown"}], ` +
		`"summary": {"passed": 2, "failed": 1, "error": 1, "skipped": 0, "xfailed": 0, "xpassed": 0, "warnings": 1, "subtests passed": 2}}` + "\n"

	type testCase struct {
		name       string
		args       []string
		stdin      string
		code       int
		stdout     string
		stderrHas  string
		stderrNone bool
	}
	cases := []testCase{
		{name: "stdin, json", stdin: parseLog, code: exitOK, stdout: wantJSON, stderrNone: true},
		{name: "file argument", args: []string{logFile}, code: exitOK, stdout: wantJSON, stderrNone: true},
		{name: "dash is stdin", args: []string{"-"}, stdin: parseLog, code: exitOK, stdout: wantJSON, stderrNone: true},
		{name: "summary format counts parsed tests", args: []string{"--format", "summary"}, stdin: parseLog, code: exitOK,
			stdout: `{"passed": 1, "failed": 1, "error": 1, "skipped": 0, "xfailed": 0, "xpassed": 0}` + "\n", stderrNone: true},
		{name: "flag after the file", args: []string{logFile, "-format=summary"}, code: exitOK,
			stdout: `{"passed": 1, "failed": 1, "error": 1, "skipped": 0, "xfailed": 0, "xpassed": 0}` + "\n", stderrNone: true},
		{name: "cut-off log counts parsed tests", stdin: cut, code: exitOK,
			stdout: `{"tests": [{"id": "tests/test_x.py::test_ok", "outcome": "passed", "message": ""}, ` +
				`{"id": "tests/test_x.py::test_p[a - \"b\" <c>]", "outcome": "failed", "message": ""}], ` +
				`"summary": {"passed": 1, "failed": 1, "error": 0, "skipped": 0, "xfailed": 0, "xpassed": 0}}` + "\n",
			stderrHas: "no closing line"},
		{name: "empty input", code: exitOK,
			stdout:    `{"tests": [], "summary": {"passed": 0, "failed": 0, "error": 0, "skipped": 0, "xfailed": 0, "xpassed": 0}}` + "\n",
			stderrHas: "no closing line"},
		{name: "missing file", args: []string{filepath.Join(dir, "nope.txt")}, code: exitFailure, stderrHas: "nope.txt"},
		{name: "bad format", args: []string{"--format", "xml"}, code: exitUsage, stderrHas: "want json or summary"},
		{name: "two files", args: []string{logFile, logFile}, code: exitUsage, stderrHas: "one log at most"},
		{name: "unknown flag", args: []string{"--verbose"}, code: exitUsage, stderrHas: "eval parse"},
		{name: "help", args: []string{"-h"}, code: exitOK, stdout: parseUsage, stderrNone: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := runParse(tc.args, strings.NewReader(tc.stdin), &stdout, &stderr)
			assert.Equal(t, tc.code, code, "stderr: %s", stderr.String())
			assert.Equal(t, tc.stdout, stdout.String())
			if tc.stderrNone {
				assert.Empty(t, stderr.String())
			}
			assert.Contains(t, stderr.String(), tc.stderrHas)
		})
	}
}

// TestRunParseCaptures checks the command on the real pytest captures of
// package pytestparse: valid JSON, the same tests as the library, and the
// closing line's counts as the summary.
func TestRunParseCaptures(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("..", "..", "pytestparse", "testdata", "captures", "*.txt"))
	require.NoError(t, err)
	require.NotEmpty(t, paths)
	for _, path := range paths {
		t.Run(filepath.Base(path), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			require.Equal(t, exitOK, runParse([]string{path}, nil, &stdout, &stderr), stderr.String())
			var got struct {
				Tests []struct {
					ID      string `json:"id"`
					Outcome string `json:"outcome"`
					Message string `json:"message"`
				} `json:"tests"`
				Summary map[string]int `json:"summary"`
			}
			require.NoError(t, json.Unmarshal(stdout.Bytes(), &got), stdout.String())
			data, err := os.ReadFile(path)
			require.NoError(t, err)
			r := pytestparse.ParseBytes(data)
			require.Len(t, got.Tests, len(r.Tests))
			for i, tc := range r.Tests {
				assert.Equal(t, tc.ID, got.Tests[i].ID)
				assert.Equal(t, tc.Outcome.String(), got.Tests[i].Outcome)
				assert.Equal(t, tc.Message, got.Tests[i].Message)
			}
			want := r.Counts()
			if r.Summary.Seen {
				want = r.Summary.Counts()
			}
			for _, o := range pytestparse.Outcomes() {
				assert.Equal(t, want[o], got.Summary[o.String()], o.String())
			}
		})
	}
}
