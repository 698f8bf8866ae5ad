package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/internal/testenv"
	"github.com/swebox/swebox/swebench"
	"github.com/swebox/swebox/swebench/grade"
	"github.com/swebox/swebox/swebench/harness"
)

// The logs under testdata/logs are test_output.txt files of a demo run
// (go run ./examples/eval), with the report.json the evaluator wrote for
// them.

func writeDemoDataset(t *testing.T) string {
	t.Helper()
	b, err := readDemoFile(demoDatasetFile)
	require.NoError(t, err)
	p := filepath.Join(t.TempDir(), demoDatasetFile)
	require.NoError(t, os.WriteFile(p, b, 0o644))
	return p
}

func TestGradeVerb(t *testing.T) {
	ds := writeDemoDataset(t)
	type testCase struct {
		name       string
		id         string
		grading    string
		wantStderr string
		golden     string // report.json the evaluator wrote; "" to skip
	}
	cases := []testCase{
		{name: "unresolved F2P", id: "swebox__demo-2", grading: "v5", wantStderr: "unresolved (FAIL_TO_PASS 1/2, PASS_TO_PASS 5/5)", golden: "swebox__demo-2.report.json"},
		{name: "P2P regression", id: "swebox__demo-3", grading: "v5", wantStderr: "unresolved (FAIL_TO_PASS 1/1, PASS_TO_PASS 4/5)", golden: "swebox__demo-3.report.json"},
		{name: "v4 rules", id: "swebox__demo-3", grading: "v4", wantStderr: "unresolved (FAIL_TO_PASS 1/1, PASS_TO_PASS 4/5)"},
		{name: "timed out log has no end marker", id: "swebox__demo-6", grading: "v5", wantStderr: "log unusable (missing_markers)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			log := filepath.Join("testdata", "logs", tc.id+".test_output.txt")
			code := run(context.Background(), []string{"grade", "--dataset_name", ds, "--instance_id", tc.id, "--log", log, "--grading", tc.grading}, nil, &stdout, &stderr)
			require.Equal(t, exitOK, code, stderr.String())
			assert.Contains(t, stderr.String(), tc.wantStderr)

			var r grade.InstanceReport
			require.NoError(t, r.UnmarshalJSON(stdout.Bytes()))
			assert.Equal(t, tc.id, r.InstanceID)
			assert.Equal(t, harness.Rules(tc.grading), r.Rules)
			if tc.golden != "" {
				want, err := os.ReadFile(filepath.Join("testdata", "logs", tc.golden))
				require.NoError(t, err)
				assert.Equal(t, string(want)+"\n", stdout.String(), "the grade verb and the evaluator must write the same report.json")
			}
		})
	}
}

func TestGradeVerbErrors(t *testing.T) {
	ds := writeDemoDataset(t)
	log := filepath.Join("testdata", "logs", "swebox__demo-2.test_output.txt")
	type testCase struct {
		name string
		args []string
		code int
		want string
	}
	cases := []testCase{
		{"missing log flag", []string{"--dataset_name", ds, "--instance_id", "swebox__demo-2"}, exitUsage, "are required"},
		{"bad grading", []string{"-d", ds, "--instance_id", "x", "--log", log, "--grading", "v9"}, exitUsage, "--grading must be v4 or v5"},
		{"unknown instance", []string{"-d", ds, "--instance_id", "nope", "--log", log}, exitFailure, "nope"},
		{"missing log file", []string{"-d", ds, "--instance_id", "swebox__demo-2", "--log", "no/such/file"}, exitFailure, "read log"},
		{"positional", []string{"-d", ds, "extra"}, exitUsage, `unexpected argument "extra"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), append([]string{"grade"}, tc.args...), nil, &stdout, &stderr)
			assert.Equal(t, tc.code, code)
			assert.Contains(t, stderr.String(), tc.want)
			assert.Empty(t, stdout.String())
		})
	}
}

// writeShardReport writes the run report of a shard holding ids, each
// resolved, and returns its path.
func writeShardReport(t *testing.T, dir, name string, resolved []string, emptyPatch ...string) string {
	t.Helper()
	in := grade.RunInput{Rules: harness.V5, Predictions: map[string]grade.Prediction{}, Reports: map[string][]byte{}}
	for _, id := range resolved {
		in.Dataset = append(in.Dataset, id)
		in.Predictions[id] = grade.Prediction{}
		in.Reports[id] = []byte(`{"` + id + `": {"patch_is_None": false, "patch_exists": true, "patch_successfully_applied": true, "resolved": true}}`)
	}
	for _, id := range emptyPatch {
		in.Dataset = append(in.Dataset, id)
		in.Predictions[id] = grade.Prediction{EmptyPatch: true}
	}
	p := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(p, grade.BuildRunReport(in).Encode(), 0o644))
	return p
}

func TestMergeVerb(t *testing.T) {
	dir := t.TempDir()
	a := writeShardReport(t, dir, "a.json", []string{"x__y-1", "x__y-3"}, "x__y-5")
	b := writeShardReport(t, dir, "b.json", []string{"x__y-2"})
	c := writeShardReport(t, dir, "c.json", []string{"x__y-3"})

	t.Run("disjoint shards to a file", func(t *testing.T) {
		out := filepath.Join(dir, "merged.json")
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), []string{"merge", a, "-o", out, b}, nil, &stdout, &stderr)
		require.Equal(t, exitOK, code, stderr.String())
		assert.Empty(t, stdout.String())
		data, err := os.ReadFile(out)
		require.NoError(t, err)
		var m grade.RunReport
		require.NoError(t, m.UnmarshalJSON(data))
		assert.Equal(t, 4, m.TotalInstances)
		assert.Equal(t, 3, m.ResolvedInstances)
		assert.Equal(t, 1, m.EmptyPatchInstances)
		assert.Equal(t, []string{"x__y-1", "x__y-2", "x__y-3"}, m.ResolvedIDs)
		assert.Contains(t, stderr.String(), "merged 2 reports: 4 instances, 3 resolved")
	})
	t.Run("a file replaced whole", func(t *testing.T) {
		// A reader of the old report (a script polling it, say) keeps
		// reading the old report whole: -o replaces the file, never
		// rewrites it in place, so neither a reader nor a crash sees part
		// of one.
		out := filepath.Join(dir, "replaced.json")
		old := []byte(`{"old": "report"}`)
		require.NoError(t, os.WriteFile(out, old, 0o644))
		reader, err := os.Open(out)
		require.NoError(t, err)
		defer reader.Close()
		var stdout, stderr bytes.Buffer
		require.Equal(t, exitOK, run(context.Background(), []string{"merge", a, b, "-o", out}, nil, &stdout, &stderr), stderr.String())
		seen, err := io.ReadAll(reader)
		require.NoError(t, err)
		assert.Equal(t, string(old), string(seen), "the open file still holds the old report")
		data, err := os.ReadFile(out)
		require.NoError(t, err)
		var m grade.RunReport
		require.NoError(t, m.UnmarshalJSON(data), "the path holds the new one")
		entries, err := filepath.Glob(filepath.Join(dir, ".replaced.json.tmp-*"))
		require.NoError(t, err)
		assert.Empty(t, entries, "no temporary file is left")
	})
	t.Run("disjoint shards to stdout", func(t *testing.T) {
		var stdout, stderr bytes.Buffer
		require.Equal(t, exitOK, run(context.Background(), []string{"merge", b, a}, nil, &stdout, &stderr), stderr.String())
		var m grade.RunReport
		require.NoError(t, m.UnmarshalJSON(stdout.Bytes()))
		assert.Equal(t, 3, m.ResolvedInstances)
	})
	t.Run("overlapping shards", func(t *testing.T) {
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), []string{"merge", a, b, c}, nil, &stdout, &stderr)
		assert.Equal(t, exitFailure, code)
		assert.Contains(t, stderr.String(), a+" and "+c+" both hold instance x__y-3")
		assert.Empty(t, stdout.String())
	})
	t.Run("no reports", func(t *testing.T) {
		var stdout, stderr bytes.Buffer
		assert.Equal(t, exitUsage, run(context.Background(), []string{"merge"}, nil, &stdout, &stderr))
		assert.Contains(t, stderr.String(), "no report given")
	})
	t.Run("not a report", func(t *testing.T) {
		bad := filepath.Join(dir, "bad.json")
		require.NoError(t, os.WriteFile(bad, []byte("[1, 2]"), 0o644))
		var stdout, stderr bytes.Buffer
		assert.Equal(t, exitFailure, run(context.Background(), []string{"merge", a, bad}, nil, &stdout, &stderr))
		assert.Contains(t, stderr.String(), bad)
	})
}

func TestPruneVerbUsage(t *testing.T) {
	type testCase struct {
		name string
		args []string
		want string
	}
	cases := []testCase{
		{"neither", nil, "give exactly one of --run_id ID and --all"},
		{"both", []string{"--run_id", "r", "--all"}, "give exactly one of --run_id ID and --all"},
		{"positional", []string{"r"}, `unexpected argument "r"`},
		{"kubeconfig and docker_host", []string{"--run_id", "r", "--kubeconfig", "k", "--docker_host", "tcp://h:2375"}, "--kubeconfig and --docker_host choose different engines"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			assert.Equal(t, exitUsage, run(context.Background(), append([]string{"prune"}, tc.args...), nil, &stdout, &stderr))
			assert.Contains(t, stderr.String(), tc.want)
		})
	}
}

func TestRunUsageErrors(t *testing.T) {
	type testCase struct {
		name string
		args []string
		code int
		want string
	}
	cases := []testCase{
		{"unknown flag", []string{"--bogus"}, exitUsage, "flag provided but not defined: -bogus"},
		{"help", []string{"--help"}, exitOK, ""},
		{"help verb", []string{"help"}, exitOK, ""},
		{"demo unknown flag", []string{"demo", "--bogus"}, exitUsage, "flag provided but not defined"},
		{"demo export without dir", []string{"demo", "--export"}, exitUsage, "--export needs a directory"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), tc.args, nil, &stdout, &stderr)
			assert.Equal(t, tc.code, code, stderr.String())
			assert.Contains(t, stderr.String(), tc.want)
			if tc.code == exitOK {
				assert.Contains(t, stdout.String(), "--dataset_name")
			}
		})
	}
}

func TestDemoExport(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "demo")
	var stdout, stderr bytes.Buffer
	require.Equal(t, exitOK, run(context.Background(), []string{"demo", "--export", dir}, nil, &stdout, &stderr), stderr.String())
	for _, p := range []string{demoDatasetFile, demoPredictionsFile, "repos/swebox__demo.git/HEAD"} {
		assert.FileExists(t, filepath.Join(dir, p))
	}
	assert.Contains(t, stdout.String(), "--repos "+filepath.Join(dir, "repos"))
	// A second export into the same directory is refused.
	assert.Equal(t, exitFailure, run(context.Background(), []string{"demo", "-export=" + dir}, nil, &stdout, &stderr))
}

// `eval parse` reaches the parse verb, reading standard input.
func TestParseVerbIsWired(t *testing.T) {
	log := "============================= test session starts ==============================\n" +
		"collected 2 items\n\n" +
		"t.py .F                                                                  [100%]\n\n" +
		"=========================== short test summary info ============================\n" +
		"PASSED t.py::test_a\n" +
		"FAILED t.py::test_b - assert 0\n" +
		"========================= 1 failed, 1 passed in 0.01s =========================\n"
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"parse", "--format", "summary"}, strings.NewReader(log), &stdout, &stderr)
	require.Equal(t, exitOK, code, stderr.String())
	assert.Contains(t, stdout.String(), `"passed": 1, "failed": 1`)
}

// TestPruneRemovesTheRunsWorkspaces: what a run left on this machine (the
// checkouts of a double Ctrl-C under the work directory) goes with
// `eval prune --run_id`, and another run's stays.
func TestPruneRemovesTheRunsWorkspaces(t *testing.T) {
	testenv.Client(t) // an engine to prune
	t.Setenv("TMPDIR", t.TempDir())
	mine := filepath.Join(swebench.DefaultWorkDir(), "r-prune", "org__model", "inst-1")
	other := filepath.Join(swebench.DefaultWorkDir(), "r-other", "org__model", "inst-1")
	for _, d := range []string{mine, other} {
		require.NoError(t, os.MkdirAll(d, 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(d, "setup.py"), []byte("x"), 0o644))
	}
	var stdout, stderr bytes.Buffer
	require.Equal(t, exitOK, run(context.Background(), []string{"prune", "--run_id", "r-prune"}, nil, &stdout, &stderr), stderr.String())
	assert.NoDirExists(t, filepath.Join(swebench.DefaultWorkDir(), "r-prune"))
	assert.DirExists(t, other)
	assert.Contains(t, stdout.String(), "removed "+filepath.Join(swebench.DefaultWorkDir(), "r-prune"))
}
