package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/swebench/dataset"
	"github.com/swebox/swebox/swebench/taskrepo"
)

// toBuild is 5.0.2's get_dataset_from_preds: a task with a non-empty
// prediction and no report.json in the run yet.
func TestToBuildIsWhatUpstreamBuildsBeforeEval(t *testing.T) {
	logDir := t.TempDir()
	o := runOptions{LogDir: logDir, RunID: "r1", PredictionsPath: "preds.jsonl"}
	tasks := []taskrepo.Task{{ID: "a__b-1"}, {ID: "a__b-2"}, {ID: "a__b-3"}, {ID: "a__b-4"}}
	patch, empty := "diff --git a/x b/x\n", ""
	preds := []dataset.Prediction{
		{InstanceID: "a__b-1", ModelNameOrPath: "org/model", ModelPatch: &patch},
		{InstanceID: "a__b-2", ModelNameOrPath: "org/model", ModelPatch: &empty},
		{InstanceID: "a__b-3", ModelNameOrPath: "org/model", ModelPatch: &patch},
	}
	done := filepath.Join(logDir, "run_evaluation", "r1", "org__model", "a__b-3")
	require.NoError(t, os.MkdirAll(done, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(done, "report.json"), []byte("{}"), 0o644))
	var got []string
	for _, tk := range toBuild(o, tasks, preds) {
		got = append(got, tk.ID)
	}
	assert.Equal(t, []string{"a__b-1"}, got, "2 has an empty patch, 3 a report, 4 no prediction")
	o.PredictionsPath = "gold"
	got = nil
	for _, tk := range toBuild(o, tasks, nil) {
		got = append(got, tk.ID)
	}
	assert.Equal(t, []string{"a__b-1", "a__b-2", "a__b-3", "a__b-4"}, got, "gold: every task (no gold report yet)")
}

// With --kubeconfig, --namespace none and --task_repo are refused before
// anything runs: no engine or cluster is contacted (the kubeconfig does not
// exist) and no log directory is made.
func TestKubernetesBuildsRefusedBeforeAnythingRuns(t *testing.T) {
	for _, args := range [][]string{
		{"--kubeconfig", "/nonexistent/kubeconfig", "-n", "none", "-p", "gold", "--run_id", "r"},
		{"--kubeconfig", "/nonexistent/kubeconfig", "--task_repo", "../../swebench/imagebuild/testdata/taskrepo", "-p", "gold", "--run_id", "r"},
	} {
		work := t.TempDir()
		t.Chdir(work)
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), args, nil, &stdout, &stderr)
		assert.Equal(t, exitUsage, code, stderr.String())
		assert.Contains(t, stderr.String(), "with --kubeconfig")
		assert.Contains(t, stderr.String(), "a registry the cluster pulls from")
		entries, err := os.ReadDir(work)
		require.NoError(t, err)
		assert.Empty(t, entries, "nothing written")
	}
}
