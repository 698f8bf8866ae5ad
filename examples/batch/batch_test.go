// Package batch holds the batch scripts' tests; the scripts are the package's
// content (see README.md).
package batch

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/internal/swebenchtest"
	"github.com/swebox/swebox/internal/testenv"
	"github.com/swebox/swebox/swebench/grade"
)

// script runs one of the scripts with $EVAL set and returns its combined
// output and exit status.
func script(t *testing.T, eval, name string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command("bash", append([]string{name}, args...)...)
	cmd.Env = append(os.Environ(), "EVAL="+eval)
	out, err := cmd.CombinedOutput()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else {
		require.NoError(t, err)
	}
	return string(out), code
}

func requireBash(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash is not installed")
	}
}

// engineHost returns the address of a Docker engine that answers, or skips
// the test (also when the test image is missing).
func engineHost(t *testing.T) string {
	t.Helper()
	return testenv.Client(t).Host()
}

// exportDemo writes the demo's dataset, predictions and repository.
func exportDemo(t *testing.T, eval string) (dataset, preds, repos string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "demo")
	out, err := exec.Command(eval, "demo", "--export", dir).CombinedOutput()
	require.NoError(t, err, string(out))
	return filepath.Join(dir, "dataset.jsonl"), filepath.Join(dir, "predictions.jsonl"), filepath.Join(dir, "repos")
}

func imageFlags() []string {
	if img := os.Getenv("SWEBOX_TEST_IMAGE"); img != "" {
		return []string{"--image", img}
	}
	return nil
}

func readRunReport(t *testing.T, path string) grade.RunReport {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var r grade.RunReport
	require.NoError(t, r.UnmarshalJSON(b))
	return r
}

// Three shards of the demo with gold patches on one machine: every instance
// resolves, the merged report counts all of them once, and the merged log
// tree holds every instance's report.json.
func TestRunShardsGold(t *testing.T) {
	if testing.Short() {
		t.Skip("runs containers")
	}
	requireBash(t)
	engineHost(t)
	eval := swebenchtest.BuildEval(t)
	ds, _, repos := exportDemo(t, eval)
	out := filepath.Join(t.TempDir(), "out")

	args := append([]string{"run-shards.sh", "-n", "3", "-o", out, "--",
		"-d", ds, "-p", "gold", "--repos", repos, "--run_id", "gold3", "--timeout", "60", "--max_workers", "2"}, imageFlags()...)
	text, code := script(t, eval, args[0], args[1:]...)
	t.Log(text)
	require.Equal(t, 0, code)
	for i := 1; i <= 3; i++ {
		assert.Contains(t, text, "shard "+string(rune('0'+i))+"/3: ")
	}

	rep := readRunReport(t, filepath.Join(out, "gold.gold3.json"))
	assert.Equal(t, 7, rep.TotalInstances)
	assert.Equal(t, 7, rep.ResolvedInstances)
	assert.Empty(t, rep.ErrorIDs)
	entries, err := filepath.Glob(filepath.Join(out, "logs", "run_evaluation", "gold3", "gold", "*", "report.json"))
	require.NoError(t, err)
	assert.Len(t, entries, 7)
}

// A shard that fails (its engine does not answer) stops the merge; rerunning
// with a working engine resumes the finished shard (its instances are
// skipped) and completes the other.
func TestRunShardsResumeAfterFailure(t *testing.T) {
	if testing.Short() {
		t.Skip("runs containers")
	}
	requireBash(t)
	host := engineHost(t)
	eval := swebenchtest.BuildEval(t)
	ds, preds, repos := exportDemo(t, eval)
	out := filepath.Join(t.TempDir(), "out")
	flags := append([]string{"--", "-d", ds, "-p", preds, "--repos", repos, "--run_id", "resume",
		"-i", "swebox__demo-1,swebox__demo-2,swebox__demo-3,swebox__demo-5"}, imageFlags()...)

	first := append([]string{"-n", "2", "-o", out, "-H", host, "-H", "unix:///nonexistent/docker.sock"}, flags...)
	text, code := script(t, eval, "run-shards.sh", first...)
	t.Log(text)
	require.Equal(t, 1, code)
	assert.Contains(t, text, "shard 2/2: failed")
	assert.Contains(t, text, "1 of 2 shards failed")
	assert.NoFileExists(t, filepath.Join(out, "swebox-demo.resume.json"), "no merge after a failure")

	// merge-shards.sh refuses the incomplete run on its own too.
	text, code = script(t, eval, "merge-shards.sh", out)
	assert.Equal(t, 1, code)
	assert.Contains(t, text, "shard 2/2 did not finish")

	second := append([]string{"-n", "2", "-o", out, "-H", host}, flags...)
	text, code = script(t, eval, "run-shards.sh", second...)
	t.Log(text)
	require.Equal(t, 0, code)
	log1, err := os.ReadFile(filepath.Join(out, "shard-1-of-2", "eval.log"))
	require.NoError(t, err)
	assert.Contains(t, string(log1), "report.json from an earlier run", "shard 1 resumes")
	assert.NotContains(t, string(log1), "unresolved (FAIL_TO_PASS", "shard 1 runs nothing again")

	rep := readRunReport(t, filepath.Join(out, "swebox-demo.resume.json"))
	assert.Equal(t, 4, rep.TotalInstances)
	assert.Equal(t, []string{"swebox__demo-1"}, rep.ResolvedIDs)
	assert.Equal(t, []string{"swebox__demo-2", "swebox__demo-3"}, rep.UnresolvedIDs)
	assert.Equal(t, []string{"swebox__demo-5"}, rep.EmptyPatchIDs)
}

// merge-shards.sh checks the shard set before merging; no engine needed.
func TestMergeShardsRefuses(t *testing.T) {
	requireBash(t)
	eval := swebenchtest.BuildEval(t)
	report := func(ids ...string) []byte {
		in := grade.RunInput{Predictions: map[string]grade.Prediction{}, Reports: map[string][]byte{}}
		for _, id := range ids {
			in.Dataset = append(in.Dataset, id)
			in.Predictions[id] = grade.Prediction{}
			in.Reports[id] = []byte(`{"` + id + `": {"patch_is_None": false, "patch_exists": true, "patch_successfully_applied": true, "resolved": false}}`)
		}
		return grade.BuildRunReport(in).Encode()
	}
	shard := func(root, name, status string, files map[string][]byte) string {
		d := filepath.Join(root, name)
		require.NoError(t, os.MkdirAll(d, 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(d, "status"), []byte(status+"\n"), 0o644))
		for f, b := range files {
			require.NoError(t, os.WriteFile(filepath.Join(d, f), b, 0o644))
		}
		return d
	}
	type testCase struct {
		name  string
		setup func(root string)
		code  int
		want  string
	}
	cases := []testCase{
		{"missing shard", func(root string) {
			shard(root, "shard-1-of-2", "0", map[string][]byte{"m.r.json": report("a")})
		}, 1, "shard 2/2 is missing"},
		{"failed shard", func(root string) {
			shard(root, "shard-1-of-2", "0", map[string][]byte{"m.r.json": report("a")})
			shard(root, "shard-2-of-2", "130", nil)
		}, 1, "shard 2/2 did not finish (status 130)"},
		{"different runs", func(root string) {
			shard(root, "shard-1-of-2", "0", map[string][]byte{"m.r.json": report("a")})
			shard(root, "shard-2-of-2", "0", map[string][]byte{"m.other.json": report("b")})
		}, 1, "shards name different runs"},
		{"overlapping shards", func(root string) {
			shard(root, "shard-1-of-2", "0", map[string][]byte{"m.r.json": report("a", "b")})
			shard(root, "shard-2-of-2", "0", map[string][]byte{"m.r.json": report("b")})
		}, 1, "both hold instance b"},
		{"an empty shard is fine", func(root string) {
			shard(root, "shard-1-of-2", "0", map[string][]byte{"m.r.json": report("a")})
			shard(root, "shard-2-of-2", "0", nil)
		}, 0, "run report: "},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			tc.setup(root)
			text, code := script(t, eval, "merge-shards.sh", root)
			assert.Equal(t, tc.code, code, text)
			assert.Contains(t, text, tc.want)
			if tc.code == 0 {
				assert.FileExists(t, filepath.Join(root, "m.r.json"))
			}
		})
	}
}

// The scripts refuse bad arguments with their usage.
func TestScriptUsage(t *testing.T) {
	requireBash(t)
	type testCase struct {
		name string
		args []string
		want string
	}
	cases := []testCase{
		{"run-shard without I N", []string{"run-shard.sh"}, "run-shard.sh [-o OUT]"},
		{"run-shard out of range", []string{"run-shard.sh", "3", "2", "--", "-p", "gold"}, "want 1 <= I <= N"},
		{"run-shards bad n", []string{"run-shards.sh", "-n", "x", "--", "-p", "gold"}, "-n wants a positive number"},
		{"run-shards without flags", []string{"run-shards.sh", "-n", "2"}, "run-shards.sh [-n N]"},
		{"merge-shards without dirs", []string{"merge-shards.sh"}, "merge-shards.sh [-o OUT]"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			text, code := script(t, "false", tc.args[0], tc.args[1:]...)
			assert.Equal(t, 2, code, text)
			assert.True(t, strings.Contains(text, tc.want), text)
		})
	}
}
