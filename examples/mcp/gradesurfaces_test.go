package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/internal/swebenchtest"
	"github.com/swebox/swebox/swebench"
	"github.com/swebox/swebox/swebench/dataset"
	"github.com/swebox/swebox/swebench/harness"
)

// gradeLogsDir holds dataset rows and the real captured logs of their test
// runs (see its generate.py): with markers and without (harness 2.x), and a
// 5.0.2 next 1.27 row, whose parser the row's version chooses.
var gradeLogsDir = filepath.Join("..", "..", "swebench", "testdata", "gradelogs")

// TestGradeSurfacesAgree grades every log of gradeLogsDir through the three
// surfaces that grade (the evaluator's rewrite mode, `eval grade` and the
// swebench_grade_log tool) and demands the same report.json from each, with
// the pinned verdicts.
func TestGradeSurfacesAgree(t *testing.T) {
	c := engine(t) // the MCP server starts only with an engine
	datasetPath := filepath.Join(gradeLogsDir, "dataset.jsonl")
	rows, err := dataset.LoadDataset(datasetPath)
	require.NoError(t, err)
	var expected map[string]bool
	b, err := os.ReadFile(filepath.Join(gradeLogsDir, "expected.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &expected))
	require.Len(t, expected, len(rows))
	logPath := func(id string) string { return filepath.Join(gradeLogsDir, "logs", id+".txt") }

	// The evaluator: rewrite mode over the logs planted in a run's log dir.
	dir := t.TempDir()
	cfg := swebench.Config{Dataset: rows, RunID: "surfaces", LogDir: filepath.Join(dir, "logs"), ReportDir: dir,
		Rules: harness.V5, RewriteReports: true}
	for _, r := range rows {
		patch := "diff --git a/x b/x\n"
		cfg.Predictions = append(cfg.Predictions, dataset.Prediction{InstanceID: r.InstanceID, ModelNameOrPath: "m", ModelPatch: &patch})
		d := filepath.Join(cfg.LogDir, "run_evaluation", cfg.RunID, "m", r.InstanceID)
		require.NoError(t, os.MkdirAll(d, 0o755))
		log, err := os.ReadFile(logPath(r.InstanceID))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(d, "test_output.txt"), log, 0o644))
	}
	res, err := swebench.Evaluate(context.Background(), cfg)
	require.NoError(t, err)
	fromEvaluator := map[string]map[string]any{}
	for _, ir := range res.Instances {
		require.NotNil(t, ir.Report, "%s: %s", ir.InstanceID, ir.Error)
		fromEvaluator[ir.InstanceID] = inner(t, ir.Report.Encode(), ir.InstanceID)
	}

	evalBin := swebenchtest.BuildEval(t)
	s := startStdio(t, baseArgs(c, "--test_feedback", "--dataset", datasetPath), nil)
	ids := make([]string, 0, len(rows))
	for _, r := range rows {
		ids = append(ids, r.InstanceID)
	}
	sort.Strings(ids)
	for _, id := range ids {
		t.Run(id, func(t *testing.T) {
			want := fromEvaluator[id]
			require.NotNil(t, want, "the evaluator graded %s", id)
			assert.Equal(t, expected[id], want["resolved"], "the evaluator's verdict")

			var stdout, stderr bytes.Buffer
			cmd := exec.Command(evalBin, "grade", "--dataset_name", datasetPath, "--instance_id", id, "--log", logPath(id), "--grading", "v5")
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			require.NoError(t, cmd.Run(), stderr.String())
			assert.Equal(t, want, inner(t, stdout.Bytes(), id), "eval grade")

			log, err := os.ReadFile(logPath(id))
			require.NoError(t, err)
			g, _ := callOK[gradeOut](t, s.cs, "swebench_grade_log", map[string]any{"instance_id": id, "log": string(log)})
			assert.Equal(t, want, g.Report, "swebench_grade_log")
			assert.Equal(t, expected[id], g.Resolved)
		})
	}
}

// inner is the report of id in a report.json document, decoded as JSON.
func inner(t *testing.T, doc []byte, id string) map[string]any {
	t.Helper()
	var m map[string]map[string]any
	require.NoError(t, json.Unmarshal(doc, &m), "%s", doc)
	require.Contains(t, m, id)
	return m[id]
}
