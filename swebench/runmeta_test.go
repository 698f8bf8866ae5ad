package swebench_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/swebench"
	"github.com/swebox/swebox/swebench/dataset"
	"github.com/swebox/swebox/swebench/harness"
)

// TestRunMetadata: under v5 rules a run writes
// logs/run_evaluation/<run_id>/run.json as 5.0.2's write_run_metadata
// does (json.dumps indent=2, ASCII escapes, created_at in UTC seconds), a
// re-grade keeps the task_repo recorded before, and v4 rules write none.
func TestRunMetadata(t *testing.T) {
	type testCase struct {
		name, rules, datasetName, before string
		want                             *regexp.Regexp
	}
	for _, tc := range []testCase{
		{name: "v5 writes run.json", rules: "v5", datasetName: "SWE-bench/SWE-bench_Lite",
			want: regexp.MustCompile(`^\{\n  "dataset": "SWE-bench/SWE-bench_Lite",\n  "split": "test",\n  "task_repo": null,\n  "created_at": "\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00"\n\}\n$`)},
		{name: "names are escaped as json.dumps does", rules: "v5", datasetName: "données/ü.jsonl",
			want: regexp.MustCompile(`^\{\n  "dataset": "donn\\u00e9es/\\u00fc.jsonl",\n`)},
		{name: "a re-grade keeps the recorded task_repo", rules: "v5", datasetName: "d.jsonl",
			before: `{"dataset": "x", "split": "dev", "task_repo": "/tasks/repo", "created_at": "2026-01-01T00:00:00+00:00"}`,
			want:   regexp.MustCompile(`\n  "split": "test",\n  "task_repo": "/tasks/repo",\n`)},
		{name: "v4 writes none", rules: "v4", datasetName: "d.jsonl"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			logs := t.TempDir()
			path := filepath.Join(logs, "run_evaluation", "r1", "run.json")
			if tc.before != "" {
				require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
				require.NoError(t, os.WriteFile(path, []byte(tc.before), 0o644))
			}
			_, err := swebench.Evaluate(context.Background(), swebench.Config{
				Dataset:     []dataset.Instance{{InstanceID: "o__r-1", Repo: "o/r", BaseCommit: "abcd", Version: "1"}},
				Predictions: []dataset.Prediction{{InstanceID: "o__r-1", ModelNameOrPath: "m"}},
				RunID:       "r1", DatasetName: tc.datasetName, Split: "test", Rules: harness.Rules(tc.rules),
				LogDir: logs, ReportDir: t.TempDir(), RewriteReports: true,
			})
			require.NoError(t, err)
			raw, err := os.ReadFile(path)
			if tc.want == nil {
				assert.ErrorIs(t, err, os.ErrNotExist)
				return
			}
			require.NoError(t, err)
			assert.Regexp(t, tc.want, string(raw))
		})
	}
}

// TestRunMetadataMatchesPython reads run.json back with Python's json
// module and writes it again with 5.0.2's json.dumps(..., indent=2) + "\n":
// the bytes must not change.
func TestRunMetadataMatchesPython(t *testing.T) {
	python, err := exec.LookPath("python3")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("python3 is required in CI")
		}
		t.Skip("python3 not found: run.json not compared with json.dumps")
	}
	logs := t.TempDir()
	_, err = swebench.Evaluate(context.Background(), swebench.Config{
		Dataset:     []dataset.Instance{{InstanceID: "o__r-1", Repo: "o/r", BaseCommit: "abcd", Version: "1"}},
		Predictions: []dataset.Prediction{{InstanceID: "o__r-1", ModelNameOrPath: "m"}},
		RunID:       "r1", DatasetName: "tab\t\"quote\" ☃ 😀", Split: "dev", LogDir: logs, ReportDir: t.TempDir(), RewriteReports: true,
	})
	require.NoError(t, err)
	path := filepath.Join(logs, "run_evaluation", "r1", "run.json")
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	out, err := exec.Command(python, "-c", `import json, sys
d = json.load(open(sys.argv[1]))
sys.stdout.write(json.dumps({"dataset": d["dataset"], "split": d["split"], "task_repo": d["task_repo"], "created_at": d["created_at"]}, indent=2) + "\n")`, path).Output()
	require.NoError(t, err)
	assert.Equal(t, string(out), string(raw))
}
