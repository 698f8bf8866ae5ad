package main

import (
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/internal/swebenchtest"
	"github.com/swebox/swebox/internal/testenv"
)

const (
	aliceToken = "alice-0123456789abcdef0123456789abcdef"
	bobToken   = "bob-0123456789abcdef0123456789abcdef01"
)

// writeTokens writes a tokens file naming alice and bob.
func writeTokens(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "tokens")
	require.NoError(t, os.WriteFile(p, []byte("# clients\nalice "+aliceToken+"\n\nbob "+bobToken+"\n"), 0o600))
	return p
}

// TestProtocolVersions drives every kind of handle (sandbox session, task
// session, background job, resource link) with the SDK's client at
// 2025-11-25 (stateful: the MCP session owns them) and 2026-07-28
// (stateless: the token's client owns them), and shows that each is
// refused to the other client, bob, at either version, while a second
// stateless connection of alice's uses them.
func TestProtocolVersions(t *testing.T) {
	c := engine(t)
	demo := swebenchtest.ExportDemo(t, swebenchtest.BuildEval(t))
	s := startHTTP(t, baseArgs(c, "--tokens", writeTokens(t), "--dataset", filepath.Join(demo.Dir, "dataset.jsonl"),
		"--repos", demo.Repos, "--artifact_limit", "0"))
	versions := []string{"2025-11-25", "2026-07-28"}
	id := demo.Rows[0].ID

	for _, v := range versions {
		t.Run(v, func(t *testing.T) {
			alice, err := connectHTTPAt(t, s, aliceToken, v, nil)
			require.NoError(t, err)
			require.Equal(t, v, alice.InitializeResult().ProtocolVersion, "the server speaks %s", v)
			if v == "2026-07-28" {
				assert.Empty(t, alice.ID(), "no MCP session")
			} else {
				assert.NotEmpty(t, alice.ID())
			}

			out, _ := callOK[runOutput](t, alice, "run_python", map[string]any{"code": "print(6*7)"})
			assert.Equal(t, "42\n", out.Stdout)
			info, _ := callOK[sessionInfoOut](t, alice, "session_create", map[string]any{})
			out, _ = callOK[runOutput](t, alice, "session_exec", map[string]any{"session": info.Session, "command": "echo secret > s.txt; echo ok"})
			require.Equal(t, "ok\n", out.Stdout)
			callOK[sessionWriteOut](t, alice, "session_write_file", map[string]any{"session": info.Session, "path": "w.txt", "content": "written"})
			// --artifact_limit 0: the file comes back as a resource link.
			rd, _ := callOK[sessionReadOut](t, alice, "session_read_file", map[string]any{"session": info.Session, "path": "s.txt"})
			require.Equal(t, "link", rd.ReturnedAs)
			job, _ := callOK[started](t, alice, "session_exec", map[string]any{"session": info.Session, "command": "sleep 300", "background": true})
			task, _ := callOK[taskStartOut](t, alice, "swebench_task_start", map[string]any{"instance_id": id})
			callOK[sessionWriteOut](t, alice, "session_write_file", map[string]any{"session": task.Session, "path": "secret_task.txt", "content": "secret"})
			d, _ := callOK[taskDiffOut](t, alice, "swebench_task_diff", map[string]any{"session": task.Session})
			require.Contains(t, d.Patch, "secret_task.txt")

			refusals := []struct {
				tool, want string
				args       map[string]any
			}{
				{"session_exec", "no session", map[string]any{"session": info.Session, "command": "cat s.txt"}},
				{"session_read_file", "no session", map[string]any{"session": info.Session, "path": "s.txt"}},
				{"session_write_file", "no session", map[string]any{"session": info.Session, "path": "x", "content": "y"}},
				{"session_close", "no session", map[string]any{"session": info.Session}},
				{"job_status", "no job", map[string]any{"job": job.Job}},
				{"job_cancel", "no job", map[string]any{"job": job.Job}},
				{"session_exec", "no session", map[string]any{"session": task.Session, "command": "cat secret_task.txt"}},
				{"session_read_file", "no session", map[string]any{"session": task.Session, "path": "secret_task.txt"}},
				{"swebench_task_diff", "no task session", map[string]any{"session": task.Session}},
				{"swebench_task_submit", "no task session", map[string]any{"session": task.Session}},
				{"swebench_task_reset", "no task session", map[string]any{"session": task.Session}},
				{"swebench_task_close", "no task session", map[string]any{"session": task.Session}},
			}
			for _, bv := range versions {
				bob, err := connectHTTPAt(t, s, bobToken, bv, nil)
				require.NoError(t, err)
				for _, r := range refusals {
					msg := callErr(t, bob, r.tool, r.args)
					assert.Contains(t, msg, r.want, "bob at %s, %s", bv, r.tool)
					assert.NotContains(t, msg, "secret", "bob at %s, %s", bv, r.tool)
				}
				list, _ := callOK[sessionListOut](t, bob, "session_list", map[string]any{})
				assert.Empty(t, list.Sessions, "bob at %s sees none of alice's sessions", bv)
				_, err = bob.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: rd.URI})
				assert.Error(t, err, "bob at %s cannot read alice's resource link", bv)
			}

			// A second connection of alice's: at 2026-07-28 the same client
			// (her token), at 2025-11-25 another MCP session, so another
			// client.
			again, err := connectHTTPAt(t, s, aliceToken, v, nil)
			require.NoError(t, err)
			if v == "2026-07-28" {
				out, _ = callOK[runOutput](t, again, "session_exec", map[string]any{"session": info.Session, "command": "cat s.txt mounts/w.txt"})
				assert.Equal(t, "secret\nwritten", out.Stdout)
				st, _ := callOK[jobStatus](t, again, "job_status", map[string]any{"job": job.Job})
				assert.Equal(t, "running", st.State, "bob's attempts left alice's job alone")
				res, err := again.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: rd.URI})
				require.NoError(t, err)
				assert.Equal(t, "secret\n", res.Contents[0].Text)
				d2, _ := callOK[taskDiffOut](t, again, "swebench_task_diff", map[string]any{"session": task.Session})
				assert.Equal(t, d.Patch, d2.Patch, "bob's attempts left alice's task alone")
			} else {
				assert.Contains(t, callErr(t, again, "session_exec", map[string]any{"session": info.Session, "command": "true"}), "no session")
				out, _ = callOK[runOutput](t, alice, "session_exec", map[string]any{"session": info.Session, "command": "cat s.txt mounts/w.txt"})
				assert.Equal(t, "secret\nwritten", out.Stdout)
				st, _ := callOK[jobStatus](t, alice, "job_status", map[string]any{"job": job.Job})
				assert.Equal(t, "running", st.State, "bob's attempts left alice's job alone")
			}
			callOK[jobStatus](t, alice, "job_cancel", map[string]any{"job": job.Job})
			callOK[sessionCloseOut](t, alice, "swebench_task_close", map[string]any{"session": task.Session})
			callOK[sessionCloseOut](t, alice, "session_close", map[string]any{"session": info.Session})
		})
	}

	// A stateful MCP session answers only the token that opened it: the
	// SDK refuses alice's session id with bob's token.
	alice, err := connectHTTP(t, s, aliceToken, nil)
	require.NoError(t, err)
	body := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"session_list","arguments":{}}}`
	req, err := http.NewRequest(http.MethodPost, s.url, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+bobToken)
	req.Header.Set("Mcp-Session-Id", alice.ID())
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusForbidden, resp.StatusCode)

	_, err = connectHTTPAt(t, s, "carol-0123456789abcdef0123456789abcdef", "2026-07-28", nil)
	assert.Error(t, err, "a token not in the file is refused at 2026-07-28 too")
}

// TestStatelessClientCleanup: what a stateless client holds goes when it
// has been idle for --client_idle (not while its background job runs), and
// at the server's exit.
func TestStatelessClientCleanup(t *testing.T) {
	c := engine(t)
	demo := swebenchtest.ExportDemo(t, swebenchtest.BuildEval(t))
	args := baseArgs(c, "--tokens", writeTokens(t), "--dataset", filepath.Join(demo.Dir, "dataset.jsonl"), "--repos", demo.Repos, "--pool", "0")
	hold := func(t *testing.T, cs *mcp.ClientSession) (string, string) {
		info, _ := callOK[sessionInfoOut](t, cs, "session_create", map[string]any{})
		task, _ := callOK[taskStartOut](t, cs, "swebench_task_start", map[string]any{"instance_id": demo.Rows[0].ID})
		require.Positive(t, leftovers(t, c))
		return info.Session, task.Session
	}

	t.Run("idle", func(t *testing.T) {
		s := startHTTP(t, append(args, "--client_idle", "2s"))
		alice, err := connectHTTPAt(t, s, aliceToken, "2026-07-28", nil)
		require.NoError(t, err)
		session, task := hold(t, alice)
		// The job outlives the idle time; while it runs, alice keeps all.
		job, _ := callOK[started](t, alice, "session_exec", map[string]any{"session": session, "command": "sleep 6; echo done", "background": true})
		require.Eventually(t, func() bool { return leftovers(t, c) == 0 }, 3*time.Minute, 250*time.Millisecond,
			"the idle client's sandbox and task containers are removed")
		var jobLine map[string]any
		for _, l := range logLines(t, s.stderr.String()) {
			if l["job"] == job.Job {
				jobLine = l
			}
		}
		require.NotNil(t, jobLine, "the job's call is logged")
		assert.EqualValues(t, 0, jobLine["exit"], "the job ran to its end before the client was dropped: %v", jobLine)
		assert.Nil(t, jobLine["is_error"], "%v", jobLine)
		again, err := connectHTTPAt(t, s, aliceToken, "2026-07-28", nil)
		require.NoError(t, err)
		assert.Contains(t, callErr(t, again, "session_exec", map[string]any{"session": session, "command": "true"}), "no session")
		assert.Contains(t, callErr(t, again, "swebench_task_diff", map[string]any{"session": task}), "no task session")
		assert.Contains(t, callErr(t, again, "job_status", map[string]any{"job": job.Job}), "no job")
	})

	t.Run("exit", func(t *testing.T) {
		s := startHTTP(t, args)
		alice, err := connectHTTPAt(t, s, aliceToken, "2026-07-28", nil)
		require.NoError(t, err)
		hold(t, alice)
		require.NoError(t, s.cmd.Process.Signal(os.Interrupt))
		done := make(chan error, 1)
		go func() { done <- s.cmd.Wait() }()
		select {
		case err := <-done:
			require.NoError(t, err, s.stderr.String())
		case <-time.After(3 * time.Minute):
			t.Fatal("the server did not exit")
		}
		assert.Zero(t, leftovers(t, c), "the server's exit removed the stateless client's containers")
	})
}

// TestStdioProtocolVersions: a stdio client of either version uses the
// tools; it is the server's one client.
func TestStdioProtocolVersions(t *testing.T) {
	c := engine(t)
	for _, v := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(v, func(t *testing.T) {
			cmd := exec.Command(serverBin(t), baseArgs(c)...)
			stderr := &testenv.SyncBuffer{}
			cmd.Stderr = stderr
			client := mcp.NewClient(&mcp.Implementation{Name: "swebox-test", Version: "1"}, nil)
			cs, err := client.Connect(t.Context(), &mcp.CommandTransport{Command: cmd, TerminateDuration: 30 * time.Second},
				&mcp.ClientSessionOptions{ProtocolVersion: v})
			require.NoError(t, err, stderr.String())
			defer cs.Close()
			require.Equal(t, v, cs.InitializeResult().ProtocolVersion)
			info, _ := callOK[sessionInfoOut](t, cs, "session_create", map[string]any{})
			out, _ := callOK[runOutput](t, cs, "session_exec", map[string]any{"session": info.Session, "command": "echo $((6*7))"})
			assert.Equal(t, "42\n", out.Stdout)
			callOK[sessionCloseOut](t, cs, "session_close", map[string]any{"session": info.Session})
		})
	}
}
