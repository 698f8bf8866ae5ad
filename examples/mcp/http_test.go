package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const testToken = "test-token-0123456789abcdef0123456789"

func TestHTTPRequiresToken(t *testing.T) {
	c := engine(t)
	s := startHTTP(t, baseArgs(c, "--token", testToken))

	for _, tc := range []struct {
		name, auth string
	}{
		{"no header", ""},
		{"wrong token", "Bearer nope"},
		{"token without scheme", testToken},
		{"token as prefix", "Bearer " + testToken + "x"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"run_shell","arguments":{"script":"touch /tmp/x"}}}`
			req, err := http.NewRequest(http.MethodPost, s.url, strings.NewReader(body))
			require.NoError(t, err)
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			if tc.auth != "" {
				req.Header.Set("Authorization", tc.auth)
			}
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			resp.Body.Close()
			assert.Equal(t, http.StatusUnauthorized, resp.StatusCode)
			assert.Contains(t, resp.Header.Get("WWW-Authenticate"), "Bearer")
		})
	}
	_, err := connectHTTP(t, s, "wrong", nil)
	require.Error(t, err, "the SDK's client cannot connect with a wrong token")
	assert.Empty(t, logLines(t, s.stderr.String()), "no tool ran")

	cs, err := connectHTTP(t, s, testToken, nil)
	require.NoError(t, err)
	out, _ := callOK[runOutput](t, cs, "run_python", map[string]any{"code": "print(6*7)"})
	assert.Equal(t, "42\n", out.Stdout)
}

func TestHTTPGeneratedToken(t *testing.T) {
	c := engine(t)
	s := startHTTP(t, baseArgs(c))
	var token string
	for _, line := range strings.Split(s.stderr.String(), "\n") {
		if _, tok, ok := strings.Cut(line, "generated bearer token"); ok {
			token = tok[strings.LastIndex(tok, " ")+1:]
		}
	}
	require.Len(t, token, 64, "the generated token is printed once to stderr:\n%s", s.stderr.String())
	assert.Equal(t, 1, strings.Count(s.stderr.String(), token))
	_, err := connectHTTP(t, s, "", nil)
	require.Error(t, err)
	cs, err := connectHTTP(t, s, token, nil)
	require.NoError(t, err)
	callOK[sessionListOut](t, cs, "session_list", map[string]any{})
}

func TestHTTPSessionsBelongToTheirClient(t *testing.T) {
	c := engine(t)
	s := startHTTP(t, baseArgs(c, "--token", testToken))
	alice, err := connectHTTP(t, s, testToken, nil)
	require.NoError(t, err)
	bob, err := connectHTTP(t, s, testToken, nil)
	require.NoError(t, err)

	info, _ := callOK[sessionInfoOut](t, alice, "session_create", map[string]any{})
	out, _ := callOK[runOutput](t, alice, "session_exec", map[string]any{"session": info.Session, "command": "echo secret > s.txt; echo ok"})
	require.Equal(t, "ok\n", out.Stdout)
	job, _ := callOK[started](t, alice, "session_exec", map[string]any{"session": info.Session, "command": "sleep 30", "background": true})

	for _, tc := range []struct {
		tool string
		args map[string]any
	}{
		{"session_exec", map[string]any{"session": info.Session, "command": "cat s.txt"}},
		{"session_read_file", map[string]any{"session": info.Session, "path": "s.txt"}},
		{"session_write_file", map[string]any{"session": info.Session, "path": "x", "content": "y"}},
		{"session_close", map[string]any{"session": info.Session}},
		{"job_status", map[string]any{"job": job.Job}},
		{"job_cancel", map[string]any{"job": job.Job}},
	} {
		t.Run(tc.tool, func(t *testing.T) {
			msg := callErr(t, bob, tc.tool, tc.args)
			assert.NotContains(t, msg, "secret")
			assert.Regexp(t, "no (session|job)", msg)
		})
	}
	list, _ := callOK[sessionListOut](t, bob, "session_list", map[string]any{})
	assert.Empty(t, list.Sessions, "bob sees none of alice's sessions")

	st, _ := callOK[jobStatus](t, alice, "job_status", map[string]any{"job": job.Job})
	assert.Equal(t, "running", st.State, "bob's attempts left alice's job alone")
	out, _ = callOK[runOutput](t, alice, "session_exec", map[string]any{"session": info.Session, "command": "cat s.txt"})
	assert.Equal(t, "secret\n", out.Stdout, "alice's session is intact")
	list, _ = callOK[sessionListOut](t, alice, "session_list", map[string]any{})
	require.Len(t, list.Sessions, 1)

	// When alice's MCP session ends, her sandbox session and job go.
	require.NoError(t, alice.Close())
	require.Eventually(t, func() bool { return leftovers(t, c) == 0 }, time.Minute, 250*time.Millisecond,
		"the departed client's session container is removed")
}

func TestHTTPManyClients(t *testing.T) {
	c := engine(t)
	// --pool 0: the containers counted below are the calls' own.
	s := startHTTP(t, baseArgs(c, "--token", testToken, "--pool", "0"))
	const clients = 20
	var wg sync.WaitGroup
	errs := make([]error, clients)
	outs := make([]string, clients)
	for i := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cs, err := connectHTTP(t, s, testToken, nil)
			if err != nil {
				errs[i] = err
				return
			}
			defer cs.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "run_python", Arguments: map[string]any{"code": fmt.Sprintf("print(%d * 3)", i)}})
			if err != nil {
				errs[i] = err
				return
			}
			if res.IsError {
				errs[i] = fmt.Errorf("isError: %s", text(res))
				return
			}
			outs[i] = res.StructuredContent.(map[string]any)["stdout"].(string)
		}()
	}
	wg.Wait()
	for i := range clients {
		require.NoError(t, errs[i], "client %d", i)
		assert.Equal(t, fmt.Sprintf("%d\n", i*3), outs[i], "client %d gets its own answer", i)
	}
	assert.Zero(t, leftovers(t, c), "no container leaked")
	assert.Len(t, logLines(t, s.stderr.String()), clients, "one log line per call")
	clientsSeen := map[any]bool{}
	for _, l := range logLines(t, s.stderr.String()) {
		clientsSeen[l["client"]] = true
	}
	assert.Len(t, clientsSeen, clients, "the log tells the clients apart")
}

func TestKilledServerLeavesNothingAfterRestart(t *testing.T) {
	c := engine(t)
	// The servers' temporary files go under a directory of the test's.
	env := []string{"TMPDIR=" + t.TempDir()}
	root := filepath.Join(strings.TrimPrefix(env[0], "TMPDIR="), "swebox-mcp-"+c.Session())
	instances := func() []string {
		entries, err := os.ReadDir(root)
		require.NoError(t, err)
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		return names
	}
	s := startStdioEnv(t, baseArgs(c), nil, env)
	info, _ := callOK[sessionInfoOut](t, s.cs, "session_create", map[string]any{})
	callOK[started](t, s.cs, "session_exec", map[string]any{"session": info.Session, "command": "sleep 300", "background": true})
	go func() {
		// Killed while this call runs; its error is expected.
		_, _ = s.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "run_python", Arguments: map[string]any{"code": "import time\ntime.sleep(300)"}})
	}()
	require.Eventually(t, func() bool { return leftovers(t, c) >= 2 }, time.Minute, 100*time.Millisecond,
		"a session and a one-shot run are running")

	require.NoError(t, s.cmd.Process.Kill())
	_ = s.cs.Close() // reaps the killed process
	require.GreaterOrEqual(t, leftovers(t, c), 2, "SIGKILL leaves the containers behind")
	killed := instances()
	require.Len(t, killed, 1, "one server, one directory")
	require.DirExists(t, filepath.Join(root, killed[0], "agent", "runs"), "SIGKILL leaves the files behind")

	s2 := startStdioEnv(t, baseArgs(c), nil, env)
	live := instances()
	require.Len(t, live, 1, "the next server of the same name removed the dead one's files at start")
	assert.NotEqual(t, killed, live)
	// Prune treats a removal already in progress (the engine's 409) as
	// done, so the last one may still be finishing.
	require.Eventually(t, func() bool { return leftovers(t, c) == 0 }, 30*time.Second, 100*time.Millisecond,
		"the next server of the same name removed them at start")
	out, _ := callOK[runOutput](t, s2.cs, "run_shell", map[string]any{"script": "echo back"})
	assert.Equal(t, "back\n", out.Stdout)

	// A third server while the second lives spares the second's files.
	s3 := startStdioEnv(t, baseArgs(c), nil, env)
	assert.Len(t, instances(), 2, "a live server's directory is never removed")
	require.NoError(t, s3.cs.Close())
	require.NoError(t, s2.cs.Close())
	assert.NoDirExists(t, root, "servers that exit remove their files")
}

func TestStdioServerExitsCleanly(t *testing.T) {
	c := engine(t)
	s := startStdio(t, baseArgs(c), nil)
	info, _ := callOK[sessionInfoOut](t, s.cs, "session_create", map[string]any{})
	callOK[runOutput](t, s.cs, "session_exec", map[string]any{"session": info.Session, "command": "true"})
	require.Positive(t, leftovers(t, c))
	require.NoError(t, s.cs.Close(), "the server exits when its client closes stdin")
	require.NotNil(t, s.cmd.ProcessState)
	assert.True(t, s.cmd.ProcessState.Success(), "%v\n%s", s.cmd.ProcessState, s.stderr.String())
	assert.Zero(t, leftovers(t, c), "closing removes the sessions' containers")
}
