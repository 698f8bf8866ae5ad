package hostile_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/internal/swebenchtest"
	"github.com/swebox/swebox/internal/testenv"
)

// TestEvalHostileNames: the eval command rejects hostile names and broken
// input files with a message naming what is wrong (and for files, where),
// exits non-zero and writes nothing; a model name it can make safe is used
// under its safe name, inside the run's directories.
func TestEvalHostileNames(t *testing.T) {
	bin := swebenchtest.BuildEval(t)
	demo := swebenchtest.ExportDemo(t, bin)
	first := demo.Rows[0]
	type testCase struct {
		name string
		// dataset and predictions are written to files when set; else the
		// demo's are used.
		dataset, predictions string
		args                 []string
		code                 int
		message              []string
	}
	row := func(edit func(map[string]any)) string {
		m := map[string]any{}
		for k, v := range first.Instance {
			m[k] = v
		}
		edit(m)
		return jsonLine(t, m)
	}
	pred := func(edit func(map[string]any)) string {
		m := map[string]any{}
		for k, v := range first.Prediction {
			m[k] = v
		}
		edit(m)
		return jsonLine(t, m)
	}
	cases := []testCase{
		{name: "run id with dotdot", args: []string{"--run_id", "../escape"}, code: 2, message: []string{"--run_id", "path separator"}},
		{name: "run id absolute", args: []string{"--run_id", "/tmp/escape"}, code: 2, message: []string{"--run_id"}},
		{name: "run id too long", args: []string{"--run_id", longName}, code: 2, message: []string{"--run_id", "longer than"}},
		{name: "instance id with dotdot", code: 1, message: []string{"d.jsonl:2: field \"instance_id\""},
			dataset: row(func(m map[string]any) {}) + "\n" + row(set("instance_id", "../../escape")) + "\n"},
		{name: "instance ids differing in case", code: 1, message: []string{"d.jsonl", strings.ToUpper(first.ID)},
			dataset: row(func(m map[string]any) {}) + "\n" + row(set("instance_id", strings.ToUpper(first.ID))) + "\n"},
		{name: "model with NUL", code: 1, message: []string{"p.jsonl:1: field \"model_name_or_path\"", "NUL"},
			predictions: pred(set("model_name_or_path", "m\x00")) + "\n"},
		{name: "truncated dataset", code: 1, message: []string{"d.jsonl:1"},
			dataset: row(func(m map[string]any) {})[:40]},
		{name: "prediction patch of wrong type", code: 1, message: []string{"p.jsonl:1: field \"model_patch\""},
			predictions: pred(set("model_patch", 7)) + "\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			ds, ps := filepath.Join(demo.Dir, "dataset.jsonl"), filepath.Join(demo.Dir, "predictions.jsonl")
			if tc.dataset != "" {
				ds = filepath.Join(dir, "d.jsonl")
				require.NoError(t, os.WriteFile(ds, []byte(tc.dataset), 0o644))
			}
			if tc.predictions != "" {
				ps = filepath.Join(dir, "p.jsonl")
				require.NoError(t, os.WriteFile(ps, []byte(tc.predictions), 0o644))
			}
			work := filepath.Join(dir, "cwd")
			require.NoError(t, os.Mkdir(work, 0o755))
			args := append([]string{"-d", ds, "-p", ps, "--repos", demo.Repos, "--run_id", "run"}, tc.args...)
			cmd := exec.Command(bin, args...)
			cmd.Dir = work
			cmd.Env = append(os.Environ(), "TMPDIR="+work)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			err := cmd.Run()
			var xe *exec.ExitError
			require.True(t, errors.As(err, &xe), "exits non-zero: %v\n%s", err, stderr.String())
			assert.Equal(t, tc.code, xe.ExitCode(), stderr.String())
			for _, m := range tc.message {
				assert.Contains(t, stderr.String(), m)
			}
			entries, err := os.ReadDir(work)
			require.NoError(t, err)
			assert.Empty(t, entries, "nothing is written")
		})
	}

	t.Run("model made safe", func(t *testing.T) {
		testenv.Client(t) // skips without an engine
		dir := t.TempDir()
		ps := filepath.Join(dir, "p.jsonl")
		require.NoError(t, os.WriteFile(ps, []byte(pred(set("model_name_or_path", "../../escape"))+"\n"), 0o644))
		work := filepath.Join(dir, "a", "b", "cwd")
		require.NoError(t, os.MkdirAll(work, 0o755))
		cmd := exec.Command(bin, "-d", filepath.Join(demo.Dir, "dataset.jsonl"), "-p", ps, "--repos", demo.Repos,
			"--run_id", "run", "-i", first.ID, "--timeout", "60")
		cmd.Dir = work
		cmd.Env = append(os.Environ(), "TMPDIR="+work, "XDG_CACHE_HOME="+filepath.Join(work, "cache"))
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
		assert.FileExists(t, filepath.Join(work, "logs", "run_evaluation", "run", "..__..__escape", first.ID, "report.json"))
		assert.FileExists(t, filepath.Join(work, "..__..__escape.run.json"))
		var outside []string
		_ = filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
			if err == nil && !info.IsDir() && !strings.HasPrefix(p, work+string(filepath.Separator)) && p != ps {
				outside = append(outside, p)
			}
			return nil
		})
		assert.Empty(t, outside, "nothing is written outside the working directory")
	})
}

func jsonLine(t *testing.T, m map[string]any) string {
	t.Helper()
	b, err := json.Marshal(m)
	require.NoError(t, err)
	return string(b)
}
