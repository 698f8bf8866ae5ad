package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/internal/swebenchtest"
	"github.com/swebox/swebox/internal/testenv"
	"github.com/swebox/swebox/swebench/dataset/hub/hubtest"
	"github.com/swebox/swebox/swebench/harness"
)

// hubRow is a dataset row as the Hub's Parquet export stores it: every
// column a string, the test lists JSON-encoded.
type hubRow struct {
	Repo                   string `parquet:"repo"`
	InstanceID             string `parquet:"instance_id"`
	BaseCommit             string `parquet:"base_commit"`
	Patch                  string `parquet:"patch"`
	TestPatch              string `parquet:"test_patch"`
	ProblemStatement       string `parquet:"problem_statement"`
	HintsText              string `parquet:"hints_text"`
	CreatedAt              string `parquet:"created_at"`
	Version                string `parquet:"version"`
	FailToPass             string `parquet:"FAIL_TO_PASS"`
	PassToPass             string `parquet:"PASS_TO_PASS"`
	EnvironmentSetupCommit string `parquet:"environment_setup_commit"`
}

// TestSwitchCommand runs the command of the README's "Switching from the
// official harness" section, word for word, on a row of an official
// repository (pytest-dev/pytest, served as SWE-bench/SWE-bench_Lite by a
// local Hub): it runs in the official image, named as upstream names it
// (built here from the test project, so nothing needs pulling), not in
// workspace mode. The same command with --workspace is refused before
// anything runs, naming the repository and the ways out.
func TestSwitchCommand(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	require.NoError(t, err)
	const command = "./eval -d SWE-bench/SWE-bench_Lite -p preds.jsonl --run_id r1"
	require.Contains(t, string(readme), "`"+command+"`", "the README's switch command")
	args := strings.Fields(command)[1:]

	c := testenv.Client(t)
	p := swebenchtest.NewProject(t)
	session := c.Session()
	id := "pytest-dev__pytest-" + strings.ToLower(session[len(session)-6:])
	image := harness.InstanceImage(id, harness.DefaultNamespace, harness.DefaultTag)
	has, err := c.HasImage(context.Background(), image)
	require.NoError(t, err)
	require.False(t, has, "%s exists already; the test would remove it", image)
	swebenchtest.BuildTestbedImage(t, c, filepath.Join(p.Sources, "swebox-test__calc"), image)

	inst := p.Instance(id)
	inst.Repo, inst.Version = "pytest-dev/pytest", "5.4"
	list := func(l []string) string { b, _ := json.Marshal(l); return string(b) }
	var pq bytes.Buffer
	require.NoError(t, parquet.Write(&pq, []hubRow{{Repo: inst.Repo, InstanceID: id, BaseCommit: inst.BaseCommit, Patch: inst.Patch,
		TestPatch: inst.TestPatch, Version: inst.Version, FailToPass: list(inst.FailToPass), PassToPass: list(inst.PassToPass),
		EnvironmentSetupCommit: inst.BaseCommit}}))
	srv := hubtest.NewServer(t)
	srv.SetSplit("SWE-bench/SWE-bench_Lite", "test", pq.Bytes())
	t.Setenv("HF_ENDPOINT", srv.URL)
	t.Setenv("HF_TOKEN", "")
	t.Setenv("SWEBOX_CACHE", t.TempDir())

	dir := t.TempDir()
	t.Chdir(dir)
	pred, err := json.Marshal(map[string]any{"instance_id": id, "model_name_or_path": "m", "model_patch": inst.Patch})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile("preds.jsonl", append(pred, '\n'), 0o644))

	var stdout, stderr bytes.Buffer
	code := run(context.Background(), args, nil, &stdout, &stderr)
	require.Equal(t, exitOK, code, "stdout:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
	assert.Contains(t, stderr.String(), "run r1: prebuilt mode,")
	assert.NotContains(t, stderr.String()+stdout.String(), "workspace mode")
	log, err := os.ReadFile(filepath.Join(dir, "logs", "run_evaluation", "r1", "m", id, "run_instance.log"))
	require.NoError(t, err)
	assert.Contains(t, string(log), "in "+image+" (prebuilt mode")
	report := swebenchtest.RunReport(t, filepath.Join(dir, "m.r1.json"))
	assert.Equal(t, []string{id}, swebenchtest.IDs(report, "resolved_ids"), "the gold patch resolves in the official image")

	stdout.Reset()
	stderr.Reset()
	code = run(context.Background(), append(args[:len(args)-1], "r2", "--workspace"), nil, &stdout, &stderr)
	assert.Equal(t, exitFailure, code)
	for _, want := range []string{"pytest-dev/pytest", "official prebuilt images", "--namespace none", "--image_map"} {
		assert.Contains(t, stderr.String(), want)
	}
	assert.NoDirExists(t, filepath.Join(dir, "logs", "run_evaluation", "r2"), "refused before anything runs")
}
