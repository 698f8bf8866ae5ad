package main

import (
	"context"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/internal/testenv"
)

func TestSessionOverStdio(t *testing.T) {
	c := engine(t)
	// --pool 0: the containers counted below are the sessions' own; the
	// pool's are TestPoolServesSessions'.
	s := startStdio(t, baseArgs(c, "--artifact_limit", "4KiB", "--max_sessions", "2", "--pool", "0"), nil)
	cs := s.cs

	info, _ := callOK[sessionInfoOut](t, cs, "session_create", map[string]any{})
	id := info.Session
	require.NotEmpty(t, id)

	w, _ := callOK[sessionWriteOut](t, cs, "session_write_file", map[string]any{"session": id, "path": "data.csv", "content": "a,b\n1,2\n"})
	assert.Equal(t, "mounts/data.csv", w.Path)
	assert.Equal(t, 8, w.Size)

	// State survives across calls: a file, then a shell reading it, then
	// Python again.
	out, _ := callOK[runOutput](t, cs, "session_exec", map[string]any{"session": id,
		"code": "rows = open('mounts/data.csv').read().split()\nopen('state.txt', 'w').write(str(len(rows)))\nprint(rows)"})
	assert.Equal(t, "['a,b', '1,2']\n", out.Stdout)
	out, _ = callOK[runOutput](t, cs, "session_exec", map[string]any{"session": id, "command": "cat state.txt; echo; echo more >> state.txt"})
	assert.Equal(t, "2\n", out.Stdout)
	out, _ = callOK[runOutput](t, cs, "session_exec", map[string]any{"session": id, "code": pngCode})
	assert.Equal(t, "ok", out.Status)
	var returned []string
	for _, a := range out.Artifacts {
		returned = append(returned, a.Path+":"+a.ReturnedAs)
	}
	assert.ElementsMatch(t, []string{"plot.png:image", "notes.txt:resource", "big.txt:link"}, returned)

	rd, res := callOK[sessionReadOut](t, cs, "session_read_file", map[string]any{"session": id, "path": "state.txt"})
	assert.Equal(t, "resource", rd.ReturnedAs)
	require.Len(t, res.Content, 2)
	assert.Equal(t, "2more\n", res.Content[1].(*mcp.EmbeddedResource).Resource.Text)

	rd, res = callOK[sessionReadOut](t, cs, "session_read_file", map[string]any{"session": id, "path": "/workspace/output/plot.png"})
	assert.Equal(t, "image", rd.ReturnedAs)
	assert.Equal(t, "image/png", res.Content[1].(*mcp.ImageContent).MIMEType)

	// A large file comes back as a link, whose uri feeds another session
	// without passing through the model.
	rd, _ = callOK[sessionReadOut](t, cs, "session_read_file", map[string]any{"session": id, "path": "output/big.txt"})
	require.Equal(t, "link", rd.ReturnedAs)
	other, _ := callOK[sessionInfoOut](t, cs, "session_create", map[string]any{})
	callOK[sessionWriteOut](t, cs, "session_write_file", map[string]any{"session": other.Session, "path": "copy.txt", "uri": rd.URI})
	out, _ = callOK[runOutput](t, cs, "session_exec", map[string]any{"session": other.Session, "command": "wc -c < mounts/copy.txt"})
	assert.Equal(t, "20000\n", out.Stdout)

	// Limits and refusals.
	assert.Contains(t, callErr(t, cs, "session_create", map[string]any{}), "the most this server allows")
	assert.Contains(t, callErr(t, cs, "session_create", map[string]any{"egress": []string{"pypi.org"}}), "no network")
	assert.Contains(t, callErr(t, cs, "session_exec", map[string]any{"session": id}), "exactly one of command")
	assert.Contains(t, callErr(t, cs, "session_read_file", map[string]any{"session": id, "path": "../../etc/passwd"}), "leaves /workspace")
	assert.Contains(t, callErr(t, cs, "session_exec", map[string]any{"session": "s-nope", "command": "true"}), "no session")

	// A link the sandbox makes to a host path is not followed out of the
	// workspace: the host's file must not come back.
	host, err := os.ReadFile("/etc/hostname")
	require.NoError(t, err)
	callOK[runOutput](t, cs, "session_exec", map[string]any{"session": id, "command": "ln -s /etc/hostname leak && ln -s ../../../../../../etc/hostname output/leak2"})
	for _, p := range []string{"leak", "output/leak2"} {
		msg := callErr(t, cs, "session_read_file", map[string]any{"session": id, "path": p})
		assert.NotContains(t, msg, strings.TrimSpace(string(host)))
	}

	list, _ := callOK[sessionListOut](t, cs, "session_list", map[string]any{})
	require.Len(t, list.Sessions, 2)
	assert.Equal(t, 2, list.Max)
	assert.GreaterOrEqual(t, list.Sessions[0].Runs+list.Sessions[1].Runs, 5)

	for _, sid := range []string{id, other.Session} {
		closed, _ := callOK[sessionCloseOut](t, cs, "session_close", map[string]any{"session": sid})
		assert.True(t, closed.Closed)
	}
	assert.Contains(t, callErr(t, cs, "session_exec", map[string]any{"session": id, "command": "true"}), "no session")
	assert.Zero(t, leftovers(t, c), "closed sessions leave no container")

	sessionLines := 0
	for _, l := range logLines(t, s.stderr.String()) {
		if l["session"] == id {
			sessionLines++
		}
	}
	assert.GreaterOrEqual(t, sessionLines, 8, "the call log names the session of each call")
}

func TestSessionExpires(t *testing.T) {
	c := engine(t)
	// The idle window leaves room for a slow call on a loaded machine: the
	// clock starts when a call ends, and the next call must arrive within it.
	s := startStdio(t, baseArgs(c, "--idle", "6s"), nil)
	info, _ := callOK[sessionInfoOut](t, s.cs, "session_create", map[string]any{})
	for i := range 3 {
		out, _ := callOK[runOutput](t, s.cs, "session_exec", map[string]any{"session": info.Session, "command": "echo x >> n; wc -l < n"})
		assert.Equal(t, string(rune('1'+i))+"\n", out.Stdout, "call %d sees the earlier calls' state", i)
		time.Sleep(500 * time.Millisecond) // well inside the idle expiry
	}
	require.Positive(t, leftovers(t, c), "the session has a container")
	require.Eventually(t, func() bool { return leftovers(t, c) == 0 }, 30*time.Second, 250*time.Millisecond,
		"the idle session's container is removed")
	assert.Contains(t, callErr(t, s.cs, "session_exec", map[string]any{"session": info.Session, "command": "true"}), "expired")
	list, _ := callOK[sessionListOut](t, s.cs, "session_list", map[string]any{})
	assert.Empty(t, list.Sessions)
}

func TestBackgroundJobs(t *testing.T) {
	c := engine(t)
	var progress atomic.Int32
	s := startStdio(t, baseArgs(c, "--progress_interval", "200ms"), &mcp.ClientOptions{
		ProgressNotificationHandler: func(context.Context, *mcp.ProgressNotificationClientRequest) { progress.Add(1) },
	})
	cs := s.cs
	info, _ := callOK[sessionInfoOut](t, cs, "session_create", map[string]any{})

	t.Run("progress notifications", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "session_exec", Meta: mcp.Meta{"progressToken": "p1"},
			Arguments: map[string]any{"session": info.Session, "command": "sleep 2; echo done"}})
		require.NoError(t, err)
		require.False(t, res.IsError, text(res))
		assert.GreaterOrEqual(t, progress.Load(), int32(3), "a 2 s call sends progress every 200 ms")
	})

	t.Run("cancel kills the process tree", func(t *testing.T) {
		// Counted from inside the sandbox, which shares the session's
		// process namespace; the bracket keeps grep from counting itself.
		count := func() string {
			out, _ := callOK[runOutput](t, cs, "session_exec", map[string]any{"session": info.Session,
				"command": "for p in /proc/[0-9]*; do tr '\\0' ' ' < $p/cmdline 2>/dev/null; echo; done | grep -c 'slee[p] 3217'"})
			return strings.TrimSpace(out.Stdout)
		}
		st, _ := callOK[started](t, cs, "session_exec", map[string]any{"session": info.Session, "background": true,
			"command": "echo started; (sleep 3217 & sleep 3217) & sh -c 'sleep 3217; true' & wait"})
		require.NotEmpty(t, st.Job)
		var last jobStatus
		require.Eventually(t, func() bool {
			last, _ = callOK[jobStatus](t, cs, "job_status", map[string]any{"job": st.Job})
			return strings.Contains(last.StdoutSoFar, "started") && count() == "4" // three sleeps and the sh -c
		}, 30*time.Second, 200*time.Millisecond, "the job runs three sleeps and reports its output so far")
		assert.Equal(t, "running", last.State)
		assert.Positive(t, last.Progress)

		fin, _ := callOK[jobStatus](t, cs, "job_cancel", map[string]any{"job": st.Job})
		assert.Equal(t, "cancelled", fin.State)
		assert.Equal(t, "0", count(), "job_cancel returns once every process of the tree is gone")
		assert.Empty(t, testenv.HostProcesses("sleep 3217"))

		out, _ := callOK[runOutput](t, cs, "session_exec", map[string]any{"session": info.Session, "command": "echo alive"})
		assert.Equal(t, "alive\n", out.Stdout, "the session survives the cancel")
	})

	t.Run("one-shot output so far", func(t *testing.T) {
		st, _ := callOK[started](t, cs, "run_python", map[string]any{"background": true,
			"code": "import sys, time\nprint('first line')\nprint('to stderr', file=sys.stderr)\ntime.sleep(300)"})
		var last jobStatus
		require.Eventually(t, func() bool {
			last, _ = callOK[jobStatus](t, cs, "job_status", map[string]any{"job": st.Job})
			return strings.Contains(last.StdoutSoFar, "first line") || last.State != "running"
		}, time.Minute, 200*time.Millisecond)
		assert.Equal(t, "running", last.State, "the output shows before the job ends")
		assert.Equal(t, "first line\n", last.StdoutSoFar)
		require.Eventually(t, func() bool {
			last, _ = callOK[jobStatus](t, cs, "job_status", map[string]any{"job": st.Job})
			return last.StderrSoFar != ""
		}, 10*time.Second, 200*time.Millisecond)
		assert.Equal(t, "to stderr\n", last.StderrSoFar)

		fin, _ := callOK[jobStatus](t, cs, "job_cancel", map[string]any{"job": st.Job})
		assert.Equal(t, "cancelled", fin.State)
		assert.Empty(t, fin.StdoutSoFar, "an ended job reports its result, not output so far")
	})

	t.Run("one-shot background", func(t *testing.T) {
		st, _ := callOK[started](t, cs, "run_python", map[string]any{"code": pngCode, "background": true})
		var last jobStatus
		var res *mcp.CallToolResult
		require.Eventually(t, func() bool {
			last, res = callOK[jobStatus](t, cs, "job_status", map[string]any{"job": st.Job})
			return last.State != "running"
		}, time.Minute, 200*time.Millisecond)
		assert.Equal(t, "succeeded", last.State)
		b, _ := last.Result.(map[string]any)
		assert.Equal(t, "made a plot\n", b["stdout"])
		hasImage := false
		for _, ct := range res.Content {
			_, ok := ct.(*mcp.ImageContent)
			hasImage = hasImage || ok
		}
		assert.True(t, hasImage, "a finished job's status carries the run's image")
	})

	assert.Contains(t, callErr(t, cs, "job_status", map[string]any{"job": "j-nope"}), "no job")
}

func TestEgressAllowlist(t *testing.T) {
	c := engine(t)
	s := startStdio(t, baseArgs(c, "--egress_allow", "example.com"), nil)
	assert.Contains(t, callErr(t, s.cs, "session_create", map[string]any{"egress": []string{"evil.example.net"}}), "not allowed on this server")
	info, _ := callOK[sessionInfoOut](t, s.cs, "session_create", map[string]any{"egress": []string{"example.com"}})
	assert.Equal(t, []string{"example.com"}, info.Egress)
	// The session reaches only what the proxy admits: another host is
	// refused by the proxy, never routed.
	out, _ := callOK[runOutput](t, s.cs, "session_exec", map[string]any{"session": info.Session,
		"code": "import urllib.request\ntry:\n    urllib.request.urlopen('http://evil.example.net/', timeout=5)\nexcept Exception as e:\n    print(type(e).__name__, e)"})
	assert.Contains(t, out.Stdout, "403")
}
