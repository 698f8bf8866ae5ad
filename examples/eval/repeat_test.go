package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/swebench"
)

// --repeat 2 on the demo's deterministic instances: every run gives the
// same verdict, the summary says nothing flipped and names flaky.json, which
// lists no instance; the official files are the first run's.
func TestDemoRepeat(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs containers")
	}
	skipWithoutEngine(t)
	logDir := t.TempDir()
	args := append([]string{"demo", "--log_dir", logDir, "--run_id", "repeat", "--repeat", "2", "-i", "swebox__demo-1", "swebox__demo-2"}, imageArgs()...)
	var out bytes.Buffer
	code := run(context.Background(), args, nil, &out, &out)
	t.Log(out.String())
	require.Equal(t, exitOK, code)
	assert.Contains(t, out.String(), "demo: all 2 verdicts are the expected ones.")
	assert.Contains(t, out.String(), "repeats: 0 verdicts flipped, 0 tests changed status in 0 instances")
	assert.NotContains(t, out.String(), "FLAKY")

	dir := filepath.Join(logDir, "run_evaluation", "repeat", demoModel)
	b, err := os.ReadFile(filepath.Join(dir, swebench.FlakyFile))
	require.NoError(t, err)
	assert.Contains(t, out.String(), filepath.Join(dir, swebench.FlakyFile))
	var rep swebench.FlakyReport
	require.NoError(t, json.Unmarshal(b, &rep))
	assert.Equal(t, 2, rep.Repeat)
	assert.Empty(t, rep.Instances)
	for _, id := range []string{"swebox__demo-1", "swebox__demo-2"} {
		first, err := os.ReadFile(filepath.Join(dir, id, "report.json"))
		require.NoError(t, err)
		second, err := os.ReadFile(filepath.Join(dir, id, "swebox_repeat", "2", "report.json"))
		require.NoError(t, err)
		assert.Equal(t, string(first), string(second), "%s: both runs graded the same", id)
	}
}

func TestFlakyNote(t *testing.T) {
	type testCase struct {
		name string
		r    swebench.Repeats
		want string
	}
	for _, tc := range []testCase{
		{"verdict", swebench.Repeats{Outcomes: []swebench.Outcome{"resolved", "unresolved"}, VerdictFlipped: true}, "FLAKY VERDICT: resolved, unresolved"},
		{"tests", swebench.Repeats{Outcomes: []swebench.Outcome{"unresolved", "unresolved"}, FlakyTests: make([]swebench.FlakyTest, 2)}, "2 flaky tests"},
	} {
		t.Run(tc.name, func(t *testing.T) { assert.Equal(t, tc.want, flakyNote(&tc.r)) })
	}
}

func TestRepeatFlag(t *testing.T) {
	type testCase struct {
		name string
		args []string
		want int
		err  string
	}
	for _, tc := range []testCase{
		{"default once", nil, 1, ""},
		{"three", []string{"--repeat", "3"}, 3, ""},
		{"zero", []string{"--repeat", "0"}, 0, "--repeat must be at least 1"},
		{"with rewrite", []string{"--repeat", "2", "--rewrite_reports", "true"}, 0, "--repeat \"2\" conflicts with --rewrite_reports: the first runs the tests again, the second runs none"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, err := parseRunFlags(defaultRunOptions(), append(tc.args, "-p", "gold", "--run_id", "r"))
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, o.Repeat)
		})
	}
}
