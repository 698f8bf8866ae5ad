package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/internal/kubetest"
	"github.com/swebox/swebox/internal/swebenchtest"
	"github.com/swebox/swebox/internal/testenv"
	"github.com/swebox/swebox/sandbox"
)

// kubeArgs are the flags of a server on the test cluster: c's session as
// its --name, so that c counts its pods.
func kubeArgs(t testing.TB, c *sandbox.Client, extra ...string) []string {
	t.Helper()
	return append([]string{"--kubeconfig", kubetest.Kubeconfig(t), "--kube_namespace", kubetest.Namespace,
		"--name", c.Session(), "--image", testenv.Image()}, extra...)
}

// TestKubeTaskTools drives a demo task through the server built with -tags
// kube, its sandboxes pods of the test cluster, at protocol 2025-11-25
// (stateful) and 2026-07-28 (stateless), one server each: the scripted
// agent's file writes and reads (absolute and /testbed-relative) and
// commands, the diff, the gold patch's submission (resolved) and the no-op's
// (not), each verdict and report.json equal to swebench_evaluate's
// (swebench.Evaluate on the cluster) for the same patch, a reset, the
// close. The agent's runs are refused with the reason. No pod of the
// server's --name is left after it exits, nor after it is killed and a
// server of the same name starts.
func TestKubeTaskTools(t *testing.T) {
	c := kubetest.Client(t)
	bin := buildServer(t, "kube")
	demo := swebenchtest.ExportDemo(t, swebenchtest.BuildEval(t))
	args := kubeArgs(t, c, "--test_feedback", "--token", testToken, "--dataset", filepath.Join(demo.Dir, "dataset.jsonl"),
		"--repos", demo.Repos, "--eval_timeout", "20s")
	row := demo.Rows[0]
	gold, _ := row.Instance["patch"].(string)

	for _, v := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(v, func(t *testing.T) {
			s := startHTTPBin(t, bin, args)
			cs, err := connectHTTPAt(t, s, testToken, v, nil)
			require.NoError(t, err)
			require.Equal(t, v, cs.InitializeResult().ProtocolVersion)

			list, _ := callOK[taskListOut](t, cs, "swebench_task_list", map[string]any{})
			require.Len(t, list.Tasks, len(demo.Rows))
			st, _ := callOK[taskStartOut](t, cs, "swebench_task_start", map[string]any{"instance_id": row.ID})
			assert.Equal(t, row.Instance["problem_statement"], st.ProblemStatement)
			require.Positive(t, leftovers(t, c), "the task's sandbox is a pod of the server's name")

			out, _ := callOK[runOutput](t, cs, "session_exec", map[string]any{"session": st.Session, "command": "pwd; git rev-parse HEAD"})
			require.Equal(t, "ok", out.Status, out.Stderr)
			assert.Equal(t, "/testbed\n"+st.BaseCommit+"\n", out.Stdout)
			callOK[sessionWriteOut](t, cs, "session_write_file", map[string]any{"session": st.Session, "path": "notes/n.txt", "content": "hello pod"})
			rd, res := callOK[sessionReadOut](t, cs, "session_read_file", map[string]any{"session": st.Session, "path": "/testbed/notes/n.txt"})
			require.Equal(t, "resource", rd.ReturnedAs)
			assert.Equal(t, "hello pod", res.Content[len(res.Content)-1].(*mcp.EmbeddedResource).Resource.Text)
			d, _ := callOK[taskDiffOut](t, cs, "swebench_task_diff", map[string]any{"session": st.Session})
			assert.Contains(t, d.Patch, "+hello pod")
			callOK[runOutput](t, cs, "session_exec", map[string]any{"session": st.Session, "command": "rm -r notes"})

			patch := scriptedAgent(t, cs, st.Session, gold)
			sub, _ := callOK[taskSubmitOut](t, cs, "swebench_task_submit", map[string]any{"session": st.Session})
			assert.True(t, sub.Resolved, "gold through the agent: %s %s\n%s", sub.Outcome, sub.Error, sub.LogTail)
			assert.NotEmpty(t, sub.FailToPass.Success)
			assertAsEvaluator(t, cs, row.ID, patch, sub)

			callOK[taskResetOut](t, cs, "swebench_task_reset", map[string]any{"session": st.Session})
			d, _ = callOK[taskDiffOut](t, cs, "swebench_task_diff", map[string]any{"session": st.Session})
			assert.Empty(t, d.Patch)
			noop, _ := callOK[taskSubmitOut](t, cs, "swebench_task_submit", map[string]any{"session": st.Session})
			assert.False(t, noop.Resolved)
			assert.Equal(t, "empty_patch", noop.Outcome)
			assertAsEvaluator(t, cs, row.ID, "", noop)
			callOK[sessionCloseOut](t, cs, "swebench_task_close", map[string]any{"session": st.Session})

			for tool, args := range map[string]map[string]any{"run_python": {"code": "print(1)", "background": true}, "session_create": {}} {
				msg := callErr(t, cs, tool, args)
				assert.Contains(t, msg, "on a Kubernetes cluster, where run_python, run_shell, run_tests and session_create are not offered", tool)
			}

			if v == "2025-11-25" {
				// An orderly exit removes every pod.
				callOK[taskStartOut](t, cs, "swebench_task_start", map[string]any{"instance_id": row.ID})
				require.NoError(t, s.cmd.Process.Signal(os.Interrupt))
				waitExit(t, s)
				assert.Zero(t, leftovers(t, c), "the server's exit removed its pods")
				return
			}
			// A killed server's pods are removed by the next server of
			// its name, before it serves.
			callOK[taskStartOut](t, cs, "swebench_task_start", map[string]any{"instance_id": row.ID})
			require.NoError(t, s.cmd.Process.Kill())
			waitExit(t, s)
			require.Positive(t, leftovers(t, c), "the killed server left its task's pod")
			again := startHTTPBin(t, bin, args)
			assert.Zero(t, leftovers(t, c), "the new server removed the killed one's pods: %s", again.stderr.String())
		})
	}
}

// waitExit waits for the server's process to end.
func waitExit(t *testing.T, s *httpServer) {
	t.Helper()
	done := make(chan struct{})
	go func() { _ = s.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(3 * time.Minute):
		t.Fatalf("the server did not exit; stderr:\n%s", s.stderr.String())
	}
}

// TestKubeconfigNeedsTheKubeTag: the default build refuses --kubeconfig at
// start, in one line that gives the command building a server with the
// backend. No cluster is needed.
func TestKubeconfigNeedsTheKubeTag(t *testing.T) {
	cmd := exec.Command(serverBin(t), "--kubeconfig", filepath.Join(t.TempDir(), "kubeconfig"))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit, stderr.String())
	assert.Equal(t, exitUsage, exit.ExitCode())
	assert.Equal(t, "mcp: usage: --kubeconfig: this build of the server has no Kubernetes backend; build it with `go build -tags kube ./examples/mcp`\n", stderr.String())
}
