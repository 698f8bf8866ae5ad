package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/internal/swebenchtest"
)

// A bad predictions file stops the built command before anything runs,
// with a message that names the predictions file, the line and the field.
func TestPredictionsFileErrors(t *testing.T) {
	bin := swebenchtest.BuildEval(t)
	ds, _, repos := exportDemoT(t)
	type testCase struct {
		name, file, content string
		want                string
	}
	cases := []testCase{
		{name: "missing", file: "missing.jsonl",
			want: "eval: open predictions: open PREDS: no such file or directory\n"},
		{name: "empty", file: "empty.jsonl", content: "",
			want: "eval: predictions file PREDS holds no predictions: nothing will run\n"},
		{name: "empty .json", file: "blank.json", content: "\n",
			want: "eval: predictions PREDS: empty file: it holds no predictions, so nothing would run\n"},
		{name: "empty list", file: "empty.json", content: "[]\n",
			want: "eval: predictions file PREDS holds no predictions: nothing will run\n"},
		{name: "list in jsonl", file: "list.jsonl", content: `[{"instance_id": "swebox__demo-1", "model_name_or_path": "m", "model_patch": ""}]` + "\n",
			want: "eval: predictions PREDS:1: a JSON list in a .jsonl file: JSON Lines hold one object per line; rename the file to .json, or write one object per line\n"},
		{name: "lone surrogate", file: "sur.jsonl", content: `{"instance_id": "swebox__demo-1", "model_name_or_path": "m", "model_patch": "x"}` + "\n" +
			`{"instance_id": "swebox__demo-2", "model_name_or_path": "m", "model_patch": "caf\udce9"}` + "\n",
			want: `eval: predictions PREDS:2: field "model_patch": lone surrogate escape \udce9 at byte 4 of the value encodes no character, so the patch cannot be written as UTF-8 (the official harness fails the instance with UnicodeEncodeError)` + "\n"},
		{name: "malformed", file: "bad.jsonl", content: `{"instance_id": "swebox__demo-1", "model_name_or_path": 3}` + "\n",
			want: `eval: predictions PREDS:1: field "model_name_or_path": want a string, got number` + "\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			preds := filepath.Join(dir, tc.file)
			if tc.name != "missing" {
				require.NoError(t, os.WriteFile(preds, []byte(tc.content), 0o644))
			}
			cmd := exec.Command(bin, "-d", ds, "-p", preds, "--repos", repos, "--run_id", "r", "--log_dir", filepath.Join(dir, "logs"))
			cmd.Dir = dir
			stdout, err := cmd.Output()
			var ee *exec.ExitError
			require.ErrorAs(t, err, &ee)
			assert.Equal(t, exitFailure, ee.ExitCode())
			assert.Equal(t, strings.ReplaceAll(tc.want, "PREDS", preds), string(ee.Stderr))
			assert.Empty(t, stdout, "no results")
			assert.NoDirExists(t, filepath.Join(dir, "logs"), "nothing ran")
		})
	}
}
