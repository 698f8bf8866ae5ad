package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/internal/swebenchtest"
)

// scriptedAgent works on a task through the tools as a model would, with no
// model: it writes the gold patch into the sandbox (an absolute path),
// applies it with a command, reads a changed file back (a path relative to
// /testbed) and returns its diff.
func scriptedAgent(t *testing.T, cs *mcp.ClientSession, session, gold string) string {
	t.Helper()
	callOK[sessionWriteOut](t, cs, "session_write_file", map[string]any{"session": session, "path": "/tmp/gold.diff", "content": gold})
	out, _ := callOK[runOutput](t, cs, "session_exec", map[string]any{"session": session, "command": "git apply /tmp/gold.diff && rm /tmp/gold.diff && git status --short"})
	require.Equal(t, "ok", out.Status, out.Stderr)
	changed := strings.Fields(strings.TrimSpace(out.Stdout))
	require.NotEmpty(t, changed)
	callOK[sessionReadOut](t, cs, "session_read_file", map[string]any{"session": session, "path": changed[len(changed)-1]})
	d, _ := callOK[taskDiffOut](t, cs, "swebench_task_diff", map[string]any{"session": session})
	return d.Patch
}

// assertAsEvaluator checks a submission's verdict and report.json against
// swebench_evaluate's (swebench.Evaluate's, on the server's engine) for
// the same patch.
func assertAsEvaluator(t *testing.T, cs *mcp.ClientSession, id, patch string, got taskSubmitOut) {
	t.Helper()
	want, _ := callOK[evaluateOut](t, cs, "swebench_evaluate", map[string]any{"instance_id": id, "patch": patch})
	assert.Equal(t, want.Resolved, got.Resolved, id)
	assert.Equal(t, want.Status, got.Status, id)
	assert.Equal(t, want.Outcome, got.Outcome, id)
	wantReport, _ := json.Marshal(want.Report)
	gotReport, _ := json.Marshal(got.Report)
	assert.JSONEq(t, string(wantReport), string(gotReport), id)
}

// TestTaskTools drives every demo instance through the swebench_task_*
// tools with the SDK's client: the scripted agent's gold reproduction
// resolves, the no-op after a reset does not, and each verdict and
// report.json equal swebench_evaluate's (the evaluator's) for the same
// patch. One submission runs as a background job.
func TestTaskTools(t *testing.T) {
	c := engine(t)
	demo := swebenchtest.ExportDemo(t, swebenchtest.BuildEval(t))
	s := startHTTP(t, baseArgs(c, "--test_feedback", "--token", testToken, "--dataset", filepath.Join(demo.Dir, "dataset.jsonl"),
		"--repos", demo.Repos, "--eval-timeout", "20s", "--progress-interval", "200ms"))
	cs, err := connectHTTP(t, s, testToken, nil)
	require.NoError(t, err)

	list, _ := callOK[taskListOut](t, cs, "swebench_task_list", map[string]any{})
	require.Len(t, list.Tasks, len(demo.Rows))

	submit := func(t *testing.T, session string, background bool) taskSubmitOut {
		if !background {
			out, _ := callOK[taskSubmitOut](t, cs, "swebench_task_submit", map[string]any{"session": session})
			return out
		}
		job, _ := callOK[started](t, cs, "swebench_task_submit", map[string]any{"session": session, "background": true})
		require.NotEmpty(t, job.Job)
		deadline := time.Now().Add(3 * time.Minute)
		for time.Now().Before(deadline) {
			st, _ := callOK[jobStatus](t, cs, "job_status", map[string]any{"job": job.Job})
			if st.State != "running" {
				require.Equal(t, "succeeded", st.State, st.Error)
				b, err := json.Marshal(st.Result)
				require.NoError(t, err)
				var res taskSubmitOut
				require.NoError(t, json.Unmarshal(b, &res), "%s", b)
				return res
			}
			time.Sleep(200 * time.Millisecond)
		}
		t.Fatal("the background submission did not end")
		return taskSubmitOut{}
	}
	asEval := func(t *testing.T, id, patch string, got taskSubmitOut) { assertAsEvaluator(t, cs, id, patch, got) }

	for i, row := range demo.Rows {
		t.Run(row.ID, func(t *testing.T) {
			st, _ := callOK[taskStartOut](t, cs, "swebench_task_start", map[string]any{"instance_id": row.ID})
			assert.Equal(t, row.Instance["problem_statement"], st.ProblemStatement)
			assert.Equal(t, "/testbed", st.Workdir)

			gold, _ := row.Instance["patch"].(string)
			patch := scriptedAgent(t, cs, st.Session, gold)
			sub := submit(t, st.Session, i == 0)
			assert.True(t, sub.Resolved, "gold through the agent: %s %s\n%s", sub.Outcome, sub.Error, sub.LogTail)
			assert.Equal(t, "resolved", sub.Outcome)
			assert.NotEmpty(t, sub.FailToPass.Success)
			assert.Empty(t, sub.FailToPass.Failure)
			assert.NotEmpty(t, sub.LogTail)
			asEval(t, row.ID, patch, sub)

			callOK[taskResetOut](t, cs, "swebench_task_reset", map[string]any{"session": st.Session})
			noop := submit(t, st.Session, false)
			assert.False(t, noop.Resolved)
			assert.Equal(t, "empty_patch", noop.Outcome)
			asEval(t, row.ID, "", noop)

			callOK[sessionCloseOut](t, cs, "swebench_task_close", map[string]any{"session": st.Session})
			assert.Contains(t, callErr(t, cs, "swebench_task_diff", map[string]any{"session": st.Session}), "no task session")
		})
	}

	// Another client cannot use a task session.
	st, _ := callOK[taskStartOut](t, cs, "swebench_task_start", map[string]any{"instance_id": demo.Rows[0].ID})
	other, err := connectHTTP(t, s, testToken, nil)
	require.NoError(t, err)
	assert.Contains(t, callErr(t, other, "swebench_task_diff", map[string]any{"session": st.Session}), "no task session")
	callErr(t, other, "session_exec", map[string]any{"session": st.Session, "command": "true"})
}
