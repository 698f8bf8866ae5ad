package main

import (
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/internal/swebenchtest"
	"github.com/swebox/swebox/swebench"
	"github.com/swebox/swebox/swebench/dataset"
	"github.com/swebox/swebox/swebench/harness"
)

// everything is all a client received of a result: its text and its
// structured content.
func everything(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	b, err := json.Marshal(res)
	require.NoError(t, err)
	return string(b)
}

// demoRow is the exported demo's row id.
func demoRow(t *testing.T, demo swebenchtest.Demo, id string) swebenchtest.DemoRow {
	t.Helper()
	for _, r := range demo.Rows {
		if r.ID == id {
			return r
		}
	}
	t.Fatalf("no demo row %s", id)
	return swebenchtest.DemoRow{}
}

// testNames are a row's FAIL_TO_PASS and PASS_TO_PASS tests.
func testNames(t *testing.T, row swebenchtest.DemoRow) []string {
	t.Helper()
	var names []string
	for _, k := range []string{"FAIL_TO_PASS", "PASS_TO_PASS"} {
		switch v := row.Instance[k].(type) {
		case []any:
			for _, n := range v {
				names = append(names, n.(string))
			}
		case string:
			var l []string
			require.NoError(t, json.Unmarshal([]byte(v), &l))
			names = append(names, l...)
		}
	}
	require.NotEmpty(t, names)
	return names
}

// TestTaskSubmitHidesTests runs a server with the default feedback policy,
// --max_submissions 2 and --instance_ids, and a client (the SDK's) that
// submits demo-2's partial fix (one FAIL_TO_PASS test of two still fails)
// and the gold patch. Nothing the client receives from
// swebench_task_submit, swebench_evaluate or swebench_grade_log names a
// test or carries the test output, but the counts are there; the third
// submission is refused; session_list lists the task session with its
// submissions; --instance_ids limits the tasks offered; and no
// submission's logs stay on the server's disk.
func TestTaskSubmitHidesTests(t *testing.T) {
	c := engine(t)
	demo := swebenchtest.ExportDemo(t, swebenchtest.BuildEval(t))
	row := demoRow(t, demo, "swebox__demo-2")
	tmp := t.TempDir()
	s := startStdioEnv(t, baseArgs(c, "--dataset", filepath.Join(demo.Dir, "dataset.jsonl"), "--repos", demo.Repos,
		"--eval_timeout", "20s", "--max_submissions", "2", "--instance_ids", "swebox__demo-2,swebox__demo-3"), nil, []string{"TMPDIR=" + tmp})
	cs := s.cs

	list, _ := callOK[taskListOut](t, cs, "swebench_task_list", map[string]any{})
	var ids []string
	for _, tk := range list.Tasks {
		ids = append(ids, tk.InstanceID)
	}
	assert.Equal(t, []string{"swebox__demo-2", "swebox__demo-3"}, ids, "--instance_ids")
	assert.Contains(t, callErr(t, cs, "swebench_task_start", map[string]any{"instance_id": "swebox__demo-1"}), "no task environment")

	st, _ := callOK[taskStartOut](t, cs, "swebench_task_start", map[string]any{"instance_id": row.ID})
	partial, _ := row.Prediction["model_patch"].(string)
	require.NotEmpty(t, partial)
	callOK[sessionWriteOut](t, cs, "session_write_file", map[string]any{"session": st.Session, "path": "/tmp/p.diff", "content": partial})
	out, _ := callOK[runOutput](t, cs, "session_exec", map[string]any{"session": st.Session, "command": "git apply /tmp/p.diff && rm /tmp/p.diff"})
	require.Equal(t, "ok", out.Status, out.Stderr)

	names := testNames(t, row)
	hidden := func(t *testing.T, what string, res *mcp.CallToolResult) {
		t.Helper()
		all := everything(t, res)
		for _, n := range names {
			assert.NotContains(t, all, n, "%s tells a test name", what)
		}
		for _, marker := range []string{harness.StartTestOutput, "test_numbers", "tests_status"} {
			assert.NotContains(t, all, marker, "%s tells the tests", what)
		}
	}

	sub, res := callOK[taskSubmitOut](t, cs, "swebench_task_submit", map[string]any{"session": st.Session})
	hidden(t, "swebench_task_submit", res)
	assert.Equal(t, "unresolved", sub.Outcome, sub.Error)
	assert.Equal(t, 1, sub.FailToPass.Passed)
	assert.Equal(t, 2, sub.FailToPass.Total)
	assert.Positive(t, sub.PassToPass.Total)
	assert.Equal(t, 1, sub.Submissions)
	assert.Equal(t, 2, sub.MaxSubmissions)

	ev, res := callOK[evaluateOut](t, cs, "swebench_evaluate", map[string]any{"instance_id": row.ID, "patch": partial})
	hidden(t, "swebench_evaluate", res)
	assert.Equal(t, testResults{Passed: 1, Total: 2}, ev.FailToPass)
	log := "+ pytest\n" + harness.StartTestOutput + "\n" + names[0] + " PASSED\n" + harness.EndTestOutput + "\n"
	_, res = callOK[gradeOut](t, cs, "swebench_grade_log", map[string]any{"instance_id": row.ID, "log": log})
	hidden(t, "swebench_grade_log", res)

	lst, _ := callOK[sessionListOut](t, cs, "session_list", map[string]any{})
	require.Len(t, lst.Sessions, 1)
	assert.Equal(t, sessionInfoOut{Session: st.Session, Kind: "task", InstanceID: row.ID, Dataset: "dataset", Submissions: 1,
		Created: lst.Sessions[0].Created}, lst.Sessions[0])

	gold, _ := row.Instance["patch"].(string)
	callOK[taskResetOut](t, cs, "swebench_task_reset", map[string]any{"session": st.Session})
	callOK[sessionWriteOut](t, cs, "session_write_file", map[string]any{"session": st.Session, "path": "/tmp/g.diff", "content": gold})
	out, _ = callOK[runOutput](t, cs, "session_exec", map[string]any{"session": st.Session, "command": "git apply /tmp/g.diff && rm /tmp/g.diff"})
	require.Equal(t, "ok", out.Status, out.Stderr)
	sub, res = callOK[taskSubmitOut](t, cs, "swebench_task_submit", map[string]any{"session": st.Session})
	hidden(t, "swebench_task_submit", res)
	assert.Equal(t, "resolved", sub.Outcome, sub.Error)
	assert.Equal(t, 2, sub.Submissions)
	msg := callErr(t, cs, "swebench_task_submit", map[string]any{"session": st.Session})
	assert.Contains(t, msg, "has had its 2 submissions")

	var logs []string
	require.NoError(t, filepath.WalkDir(tmp, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // the server's files come and go
		}
		if n := d.Name(); n == "test_output.txt" || n == "run_instance.log" || n == "report.json" {
			logs = append(logs, p)
		}
		return nil
	}))
	assert.Empty(t, logs, "the submissions' logs stay on the server's disk")
}

// TestTaskSessionCaps starts four task sessions at once from one client
// of a server that allows two sessions per client and three in all: two
// start, the others are refused by the per-client cap, which counts the
// starts under way. The server-wide cap counts task sessions too: a
// second client gets one session, then none.
func TestTaskSessionCaps(t *testing.T) {
	c := engine(t)
	demo := swebenchtest.ExportDemo(t, swebenchtest.BuildEval(t))
	s := startHTTP(t, baseArgs(c, "--token", testToken, "--dataset", filepath.Join(demo.Dir, "dataset.jsonl"), "--repos", demo.Repos,
		"--max_sessions", "2", "--max_sessions_total", "3", "--pool", "0"))
	cs, err := connectHTTP(t, s, testToken, nil)
	require.NoError(t, err)
	callOK[taskListOut](t, cs, "swebench_task_list", map[string]any{}) // the tasks are prepared

	var wg sync.WaitGroup
	results := make([]*mcp.CallToolResult, 4)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = callTool(t, cs, "swebench_task_start", map[string]any{"instance_id": demo.Rows[i].ID})
		}()
	}
	wg.Wait()
	started := 0
	for _, res := range results {
		if !res.IsError {
			started++
			continue
		}
		assert.Contains(t, text(res), "you have 2 sessions and task sessions open")
	}
	assert.Equal(t, 2, started)
	lst, _ := callOK[sessionListOut](t, cs, "session_list", map[string]any{})
	assert.Len(t, lst.Sessions, 2)

	other, err := connectHTTP(t, s, testToken, nil)
	require.NoError(t, err)
	callOK[sessionInfoOut](t, other, "session_create", map[string]any{})
	assert.Contains(t, callErr(t, other, "session_create", map[string]any{}), "this server holds 3 sessions and task sessions")
	assert.Contains(t, callErr(t, other, "swebench_task_start", map[string]any{"instance_id": demo.Rows[0].ID}), "this server holds 3")
}

// TestTaskConfigAtStart: a configuration the task tools cannot run with is
// refused when the server starts, naming the flag that fixes it, not at the
// first swebench_task_list.
func TestTaskConfigAtStart(t *testing.T) {
	demo := swebenchtest.ExportDemo(t, swebenchtest.BuildEval(t))
	dir := t.TempDir()
	official := filepath.Join(dir, "official.jsonl")
	row := `{"instance_id": "astropy__astropy-12907", "repo": "astropy/astropy", "version": "4.3", "base_commit": "d16bfe05a744909de4b27f5875fe0d4ed41ce607", ` +
		`"patch": "", "test_patch": "", "problem_statement": "x", "FAIL_TO_PASS": "[\"a\"]", "PASS_TO_PASS": "[]", "environment_setup_commit": "298ccb478e6bf092953bca67a3d29dc6c35f6752", "created_at": "2022-03-03T15:14:54Z", "hints_text": ""}`
	require.NoError(t, os.WriteFile(official, []byte(row+"\n"), 0o644))
	type testCase struct {
		name string
		args []string
		want []string
	}
	for _, tc := range []testCase{
		{name: "official repository in workspace mode", args: []string{"--dataset", official, "--repos", demo.Repos},
			want: []string{"astropy/astropy", "--repos", "--image_map"}},
		{name: "no instance offered", args: []string{"--dataset", filepath.Join(demo.Dir, "dataset.jsonl"), "--repos", demo.Repos, "--instance_ids", "nope__nope-1"},
			want: []string{"--instance_ids"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(serverBin(t), tc.args...)
			cmd.Env = append(os.Environ(), "TMPDIR="+t.TempDir())
			cmd.Stdin = strings.NewReader("")
			out, err := cmd.CombinedOutput()
			var ee *exec.ExitError
			require.ErrorAs(t, err, &ee, "%s", out)
			assert.Equal(t, exitUsage, ee.ExitCode(), "%s", out)
			for _, w := range tc.want {
				assert.Contains(t, string(out), w)
			}
		})
	}
}

// TestTaskNamespaceNone: --namespace none names the images as eval's
// --namespace none does, those upstream builds locally
// (sweb.eval.x86_64.<id>:latest), in prebuilt mode; with --image_map it
// is workspace mode, as in eval.
func TestTaskNamespaceNone(t *testing.T) {
	demo := swebenchtest.ExportDemo(t, swebenchtest.BuildEval(t))
	type testCase struct {
		name  string
		cfg   config
		mode  harness.Mode
		image string
	}
	row := demo.Rows[0].ID
	for _, tc := range []testCase{
		{name: "none", cfg: config{Namespace: "none"}, mode: harness.ModePrebuilt, image: harness.InstanceImage(row, "", harness.DefaultTag)},
		{name: "null", cfg: config{Namespace: "NULL"}, mode: harness.ModePrebuilt, image: harness.InstanceImage(row, "", harness.DefaultTag)},
		{name: "none with an image map", cfg: config{Namespace: "none", ImageMap: writeImageMap(t)}, mode: harness.ModeWorkspace, image: "swebox/python:bookworm"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.cfg.Images, tc.cfg.Datasets = []string{"swebox/python:bookworm"}, []string{filepath.Join(demo.Dir, "dataset.jsonl")}
			evals, err := newEvaluator(tc.cfg, nil)
			require.NoError(t, err)
			defer evals.Close()
			p, err := planTasks(tc.cfg, evals, "dataset")
			require.NoError(t, err)
			defer p.Close()
			assert.Equal(t, tc.mode, p.Modes[row])
			assert.Contains(t, p.Images, tc.image)
		})
	}
}

// planTasks plans the tasks of dataset name as task.New does, without an
// engine: every row offered, with or without a reference patch.
func planTasks(cfg config, evals *evaluator, name string) (*swebench.Plan, error) {
	ec := evalConfig(cfg, evals, nil, name)
	ec.Sandboxes, ec.RunID, ec.RewriteReports = nil, "check", true // plan only
	ec.Predictions = dataset.GoldPredictions(ec.Dataset)
	for i := range ec.Predictions {
		if ec.Predictions[i].EmptyPatch() {
			p := "\n"
			ec.Predictions[i].ModelPatch = &p
		}
	}
	return swebench.Prepare(context.Background(), ec)
}

func writeImageMap(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "images.json")
	require.NoError(t, os.WriteFile(p, []byte(`{"swebox/demo": "swebox/python:bookworm"}`), 0o644))
	return p
}
