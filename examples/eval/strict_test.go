package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/swebench"
	"github.com/swebox/swebox/swebench/grade"
)

// --strict selects the library's strict grading; without it grading is
// the official one.
func TestStrictFlag(t *testing.T) {
	type testCase struct {
		name string
		args []string
		want swebench.GradingMode
	}
	for _, tc := range []testCase{
		{name: "default", args: []string{"-p", "gold", "--run_id", "r1"}, want: swebench.GradingOfficial},
		{name: "strict", args: []string{"-p", "gold", "--run_id", "r1", "--strict"}, want: swebench.GradingStrict},
		{name: "strict with v4 rules", args: []string{"-p", "gold", "--run_id", "r1", "--grading", "v4", "--strict"}, want: swebench.GradingStrict},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, err := parseRunFlags(defaultRunOptions(), tc.args)
			require.NoError(t, err)
			assert.Equal(t, tc.want, runConfig(o).GradingMode)
		})
	}
}

// eval grade --strict applies strict grading's log rules to one log: a
// log of demo-2 with a PASSED line forged after the FAILED one for the
// same FAIL_TO_PASS test resolves under official v4 grading (the last line
// wins) and not under --strict, which names the rule on stderr and in
// report.json; the log as captured keeps its verdict under --strict.
func TestGradeVerbStrict(t *testing.T) {
	ds := writeDemoDataset(t)
	const id, f2p = "swebox__demo-2", "tests/test_numbers.py::test_clamp_none_means_unbounded"
	orig, err := os.ReadFile(filepath.Join("testdata", "logs", id+".test_output.txt"))
	require.NoError(t, err)
	failed := "FAILED " + f2p + " - TypeError: '>...\n"
	require.Contains(t, string(orig), failed)
	forged := filepath.Join(t.TempDir(), "forged.txt")
	require.NoError(t, os.WriteFile(forged, []byte(strings.Replace(string(orig), failed, failed+"PASSED "+f2p+"\n", 1)), 0o644))
	original := filepath.Join("testdata", "logs", id+".test_output.txt")

	type testCase struct {
		name     string
		log      string
		strict   bool
		resolved bool
		stderr   string // "" when strict grading must find nothing
	}
	for _, tc := range []testCase{
		{name: "forged official", log: forged, resolved: true},
		{name: "forged strict", log: forged, strict: true, resolved: false,
			stderr: "refused by conflicting-lines: the log reports " + f2p + " both passing and failing"},
		{name: "captured strict", log: original, strict: true, resolved: false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := []string{"grade", "-d", ds, "--instance_id", id, "--log", tc.log, "--grading", "v4"}
			if tc.strict {
				args = append(args, "--strict")
			}
			var stdout, stderr bytes.Buffer
			require.Equal(t, exitOK, run(context.Background(), args, nil, &stdout, &stderr), stderr.String())
			var r grade.InstanceReport
			require.NoError(t, r.UnmarshalJSON(stdout.Bytes()))
			assert.Equal(t, tc.resolved, r.Resolved, stderr.String())
			if !tc.strict {
				assert.Nil(t, r.Notes.Strict, "official grading writes no strict note")
				assert.NotContains(t, stdout.String(), `"strict"`)
				return
			}
			require.NotNil(t, r.Notes.Strict)
			assert.Equal(t, "log", r.Notes.Strict.Channel)
			if tc.stderr == "" {
				assert.Empty(t, r.Notes.Strict.Findings)
				return
			}
			assert.True(t, r.Notes.Strict.OfficialResolved)
			assert.Contains(t, stderr.String(), tc.stderr)
			assert.Contains(t, strings.Join(r.Notes.Strict.Findings, "\n"), tc.stderr)
		})
	}
}

// Strict grading's log rules grade the demo logs under testdata/logs,
// under both releases' rules, each with a strict note. All three are
// unresolved officially (a failing test, a regression, a timeout), and
// strict grading never resolves what official grading does not, so this
// shows the rules read these logs, not that they keep a resolution.
func TestStrictRulesOnDemoLogs(t *testing.T) {
	ds := writeDemoDataset(t)
	logs, err := filepath.Glob(filepath.Join("testdata", "logs", "*.test_output.txt"))
	require.NoError(t, err)
	require.NotEmpty(t, logs)
	unchanged, graded := 0, 0
	for _, log := range logs {
		id := strings.TrimSuffix(filepath.Base(log), ".test_output.txt")
		for _, rules := range []string{"v4", "v5"} {
			off, err := gradeLog(ds, "test", id, log, rules, "", swebench.GradingOfficial)
			require.NoError(t, err)
			st, err := gradeLog(ds, "test", id, log, rules, "", swebench.GradingStrict)
			require.NoError(t, err)
			require.NotNil(t, st.Notes.Strict, id)
			graded++
			if assert.Equal(t, off.Resolved, st.Resolved, "%s %s: %v", id, rules, st.Notes.Strict.Findings) {
				unchanged++
			}
		}
	}
	t.Logf("strict log rules: %d of %d demo logs keep their official verdict", unchanged, graded)
}
