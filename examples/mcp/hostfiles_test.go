package main

import (
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// peakRSS is the most memory the process pid has held (VmHWM), in bytes.
func peakRSS(t testing.TB, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	require.NoError(t, err)
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			require.NoError(t, err)
			return kb << 10
		}
	}
	t.Fatal("no VmHWM in /proc/pid/status")
	return 0
}

// A background job makes its own output file a 1000 MB sparse file (it
// costs the sandbox nothing); job_status and the job's end read its head
// and tail only.
func TestJobOutputSparseFileBounded(t *testing.T) {
	c := engine(t)
	s := startStdio(t, baseArgs(c), nil)
	cs := s.cs
	info, _ := callOK[sessionInfoOut](t, cs, "session_create", map[string]any{})
	st, _ := callOK[started](t, cs, "session_exec", map[string]any{"session": info.Session, "background": true,
		"command": "echo first; truncate -s 1000M /proc/self/fd/1; echo ready >&2; sleep 3600"})
	var last jobStatus
	require.Eventually(t, func() bool {
		last, _ = callOK[jobStatus](t, cs, "job_status", map[string]any{"job": st.Job})
		return strings.Contains(last.StderrSoFar, "ready") || last.State != "running"
	}, time.Minute, 200*time.Millisecond)
	require.Equal(t, "running", last.State, last.Error)
	assert.Less(t, len(last.StdoutSoFar), 1<<20, "job_status returns head and tail, not 1000 MB")
	assert.True(t, strings.HasPrefix(last.StdoutSoFar, "first\n"), "the head is kept")
	assert.Contains(t, last.StdoutSoFar, "bytes dropped")

	fin, _ := callOK[jobStatus](t, cs, "job_cancel", map[string]any{"job": st.Job})
	assert.Equal(t, "cancelled", fin.State)

	// The end of a job reads its output the same way.
	st, _ = callOK[started](t, cs, "session_exec", map[string]any{"session": info.Session, "background": true,
		"command": "echo first; truncate -s 1000M /proc/self/fd/1"})
	require.Eventually(t, func() bool {
		last, _ = callOK[jobStatus](t, cs, "job_status", map[string]any{"job": st.Job})
		return last.State != "running"
	}, time.Minute, 200*time.Millisecond)
	require.Equal(t, "succeeded", last.State, last.Error)
	b, err := json.Marshal(last.Result)
	require.NoError(t, err)
	var out runOutput
	require.NoError(t, json.Unmarshal(b, &out))
	assert.True(t, out.StdoutTruncated)
	assert.Less(t, len(out.Stdout), 1<<20)
	assert.True(t, strings.HasPrefix(out.Stdout, "first\n"), "the head is kept")
	peak := peakRSS(t, s.cmd.Process.Pid)
	t.Logf("server peak RSS: %d MiB", peak>>20)
	assert.Less(t, peak, int64(300<<20), "the server's peak memory stays far below the file's 1000 MB")
}

// Several MCP sessions of one token holder share the server-wide caps:
// each client stays under its own limits, and the server's total still
// stops them.
func TestServerWideCaps(t *testing.T) {
	c := engine(t)
	s := startHTTP(t, baseArgs(c, "--token", testToken, "--pool", "0",
		"--max-sessions", "2", "--max-sessions-total", "3", "--max-jobs-total", "2"))
	var clients []*mcp.ClientSession
	for range 3 {
		cs, err := connectHTTP(t, s, testToken, nil)
		require.NoError(t, err)
		clients = append(clients, cs)
	}
	a, b, d := clients[0], clients[1], clients[2]

	callOK[sessionInfoOut](t, a, "session_create", map[string]any{})
	callOK[sessionInfoOut](t, a, "session_create", map[string]any{})
	assert.Contains(t, callErr(t, a, "session_create", map[string]any{}), "you have 2 sessions and task sessions open", "the per-client cap")
	callOK[sessionInfoOut](t, b, "session_create", map[string]any{})
	assert.Contains(t, callErr(t, b, "session_create", map[string]any{}), "for all its clients", "b has one session; the server has three")
	assert.Contains(t, callErr(t, d, "session_create", map[string]any{}), "for all its clients")

	job := map[string]any{"code": "import time; time.sleep(600)", "background": true}
	ja, _ := callOK[started](t, a, "run_python", job)
	jb, _ := callOK[started](t, b, "run_python", job)
	assert.Contains(t, callErr(t, d, "run_python", job), "for all its clients", "d has no job; the server runs two")
	callOK[jobStatus](t, a, "job_cancel", map[string]any{"job": ja.Job})
	jd, _ := callOK[started](t, d, "run_python", job)
	callOK[jobStatus](t, b, "job_cancel", map[string]any{"job": jb.Job})
	callOK[jobStatus](t, d, "job_cancel", map[string]any{"job": jd.Job})
}
