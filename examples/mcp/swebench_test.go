package main

import (
	"context"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/internal/swebenchtest"
	"github.com/swebox/swebox/swebench"
)

// TestSWEBench evaluates the eval command's demo instances through the
// server over HTTP and grades a log, and checks the verdicts against the
// ones the demo documents.
func TestSWEBench(t *testing.T) {
	c := engine(t)
	demo := swebenchtest.ExportDemo(t, swebenchtest.BuildEval(t))
	rows := map[string]swebenchtest.DemoRow{}
	for _, r := range demo.Rows {
		rows[r.ID] = r
	}
	s := startHTTP(t, baseArgs(c, "--test_feedback", "--token", testToken, "--dataset", filepath.Join(demo.Dir, "dataset.jsonl"),
		"--repos", demo.Repos, "--eval_timeout", "20s", "--progress_interval", "200ms"))
	var progress atomic.Int32
	cs, err := connectHTTP(t, s, testToken, &mcp.ClientOptions{
		ProgressNotificationHandler: func(context.Context, *mcp.ProgressNotificationClientRequest) { progress.Add(1) },
	})
	require.NoError(t, err)

	patch := func(id string) string {
		p, _ := rows[id].Prediction["model_patch"].(string)
		return p
	}
	evaluate := func(t *testing.T, id string) evaluateOut {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "swebench_evaluate", Meta: mcp.Meta{"progressToken": id},
			Arguments: map[string]any{"instance_id": id, "patch": patch(id)}})
		require.NoError(t, err)
		require.False(t, res.IsError, text(res))
		return decode[evaluateOut](t, res)
	}

	var resolvedLog string
	for _, id := range []string{"swebox__demo-1", "swebox__demo-3", "swebox__demo-4"} {
		t.Run(id, func(t *testing.T) {
			require.Contains(t, rows, id)
			out := evaluate(t, id)
			assert.Equal(t, string(rows[id].Expected), out.Status, "%s: %s\n%s", rows[id].Shows, out.Error, out.LogTail)
			assert.Equal(t, rows[id].Expected == swebench.StatusResolved, out.Resolved)
			if out.Status != string(swebench.StatusError) {
				require.NotNil(t, out.Report)
				assert.Contains(t, out.Report, "tests_status")
				assert.Positive(t, out.FailToPass.Total)
				assert.Contains(t, out.LogTail, ">>>>> End Test Output")
			} else {
				assert.NotEmpty(t, out.Error)
			}
			if id == "swebox__demo-4" {
				// The patch does not apply: the agent, which cannot read
				// run_instance.log, gets each attempt's output.
				assert.Equal(t, string(swebench.OutcomePatchFailed), out.Outcome)
				assert.Contains(t, out.Error, "patch_output")
				assert.Contains(t, out.PatchOutput, "$ git apply --verbose ")
				assert.Contains(t, out.PatchOutput, "$ patch --batch --forward --fuzz=5 -p1 -i ")
				assert.Regexp(t, `\(exit [1-9]\d*\)\n\S`, out.PatchOutput, "each command's exit status and what it printed")
				assert.NotRegexp(t, `(?m)^\d{4}-\d\d-\d\d `, out.PatchOutput, "no other entry of run_instance.log")
				t.Logf("patch_output:\n%s", out.PatchOutput)
			}
			if out.Resolved {
				resolvedLog = out.LogTail
			}
		})
	}
	assert.Positive(t, progress.Load(), "evaluations send progress notifications")

	t.Run("grade a log", func(t *testing.T) {
		require.NotEmpty(t, resolvedLog)
		g, _ := callOK[gradeOut](t, cs, "swebench_grade_log", map[string]any{"instance_id": "swebox__demo-1", "log": resolvedLog})
		assert.True(t, g.Resolved)
		assert.Equal(t, true, g.Report["resolved"])
		g, _ = callOK[gradeOut](t, cs, "swebench_grade_log", map[string]any{"instance_id": "swebox__demo-1", "log": "no markers at all"})
		assert.False(t, g.Resolved)
	})

	t.Run("background", func(t *testing.T) {
		id := "swebox__demo-2"
		st, _ := callOK[started](t, cs, "swebench_evaluate", map[string]any{"instance_id": id, "patch": patch(id), "background": true})
		var last jobStatus
		var seen []string // the output job_status showed while the job ran
		require.Eventually(t, func() bool {
			last, _ = callOK[jobStatus](t, cs, "job_status", map[string]any{"job": st.Job})
			if last.State == "running" && last.StdoutSoFar != "" {
				seen = append(seen, last.StdoutSoFar)
			}
			return last.State != "running"
		}, 3*time.Minute, 50*time.Millisecond)
		require.Equal(t, "succeeded", last.State, last.Error)
		require.NotEmpty(t, seen, "job_status shows the evaluation's progress while it runs")
		assert.Equal(t, "started "+id+" (0/1)\n", seen[0])
		assert.Equal(t, string(rows[id].Expected), last.Result.(map[string]any)["status"])
	})

	t.Run("unknown instances", func(t *testing.T) {
		assert.Contains(t, callErr(t, cs, "swebench_evaluate", map[string]any{"instance_id": "nope", "patch": ""}), `no instance "nope"`)
		assert.Contains(t, callErr(t, cs, "swebench_grade_log", map[string]any{"instance_id": "swebox__demo-1", "log": "x", "dataset": "other"}), `no dataset "other"`)
	})
	assert.Zero(t, leftovers(t, c), "evaluations leave no container")
}

func TestProgressLine(t *testing.T) {
	type testCase struct {
		name string
		ev   swebench.Event
		want string
	}
	for _, tc := range []testCase{
		{name: "started", ev: swebench.Event{Kind: swebench.EventStarted, InstanceID: "a__b-1", Total: 1}, want: "started a__b-1 (0/1)"},
		{name: "finished", ev: swebench.Event{Kind: swebench.EventFinished, InstanceID: "a__b-1", Done: 1, Total: 1,
			Result: &swebench.InstanceResult{Status: swebench.StatusResolved}}, want: "finished a__b-1: resolved (1/1)"},
		{name: "error, first line", ev: swebench.Event{Kind: swebench.EventFinished, InstanceID: "a__b-1", Done: 1, Total: 1,
			Result: &swebench.InstanceResult{Status: swebench.StatusError, Error: "spec: no test command\ndetails"}}, want: "finished a__b-1: error (spec: no test command) (1/1)"},
		{name: "typed outcome", ev: swebench.Event{Kind: swebench.EventFinished, InstanceID: "a__b-1", Done: 1, Total: 1,
			Result: &swebench.InstanceResult{Status: swebench.StatusError, Outcome: swebench.OutcomePatchFailed, Error: "patch apply failed: see run_instance.log"}},
			want: "finished a__b-1: patch_failed (1/1)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, progressLine(tc.ev))
		})
	}
}

func TestSWEBenchWithoutDataset(t *testing.T) {
	c := engine(t)
	s := startStdio(t, baseArgs(c), nil)
	assert.Contains(t, callErr(t, s.cs, "swebench_grade_log", map[string]any{"instance_id": "a", "log": "x"}), "without a SWE-bench dataset")
}
