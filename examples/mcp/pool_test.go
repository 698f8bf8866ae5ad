package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/sandbox"
)

// poolMembers lists the pooled sandboxes labelled with c's session (the
// server's --name), ready or handed out.
func poolMembers(t testing.TB, c *sandbox.Client) []sandbox.Object {
	t.Helper()
	objs, err := c.List(context.Background(), sandbox.ListRequest{Labels: map[string]string{sandbox.LabelPool: "true"}})
	require.NoError(t, err)
	var out []sandbox.Object
	for _, o := range objs {
		if o.Kind == sandbox.KindSandbox {
			out = append(out, o)
		}
	}
	return out
}

// TestPoolServesRunsAndIsCleanedAfterAKill: with --pool, a run_python call
// asked for again is served by a sandbox the pool started, which no earlier
// call used; the pool's sandboxes a killed server left are removed by the
// next server of the same name, and a server that exits removes its own.
func TestPoolServesRunsAndIsCleanedAfterAKill(t *testing.T) {
	c := engine(t)
	env := []string{"TMPDIR=" + t.TempDir()}
	s := startStdioEnv(t, baseArgs(c, "--pool", "2"), nil, env)
	code := "import os, socket\nprint(socket.gethostname(), os.path.exists('mine.txt'))\nopen('mine.txt', 'w').write('x')"
	hosts := map[string]bool{}
	run := func(s *stdioServer) string {
		out, _ := callOK[runOutput](t, s.cs, "run_python", map[string]any{"code": code})
		host, seen, ok := strings.Cut(strings.TrimSpace(out.Stdout), " ")
		require.True(t, ok, out.Stdout+out.Stderr)
		assert.Equal(t, "False", seen, "a call sees nothing of an earlier one")
		assert.False(t, hosts[host], "sandbox %s served two calls", host)
		hosts[host] = true
		return host
	}
	run(s)
	run(s) // asked for twice: the pool keeps two ready
	// A call served once a sandbox is ready runs in it; calls before
	// start their own.
	for i := 0; ; i++ {
		require.Less(t, i, 100, "no call took a pooled sandbox")
		ready := poolMembers(t, c)
		if len(ready) == 0 {
			time.Sleep(100 * time.Millisecond)
			continue
		}
		host := run(s)
		if strings.HasPrefix(ready[0].ID, host) || len(ready) > 1 && strings.HasPrefix(ready[1].ID, host) {
			break
		}
	}
	require.Eventually(t, func() bool { return len(poolMembers(t, c)) == 2 }, 2*time.Minute, 100*time.Millisecond, "the pool refills")

	require.NoError(t, s.cmd.Process.Kill())
	_ = s.cs.Close()
	require.Len(t, poolMembers(t, c), 2, "SIGKILL leaves the pool's sandboxes behind")

	s2 := startStdioEnv(t, baseArgs(c, "--pool", "2"), nil, env)
	require.Eventually(t, func() bool { return len(poolMembers(t, c)) == 0 }, 30*time.Second, 100*time.Millisecond,
		"the next server of the same name removed them at start")
	run(s2)
	run(s2)
	require.Eventually(t, func() bool { return len(poolMembers(t, c)) == 2 }, 2*time.Minute, 100*time.Millisecond)
	require.NoError(t, s2.cs.Close())
	assert.True(t, s2.cmd.ProcessState.Success(), "%v\n%s", s2.cmd.ProcessState, s2.stderr.String())
	assert.Zero(t, leftovers(t, c), "a server that exits removes its pool")
}

// TestPoolServesSessions: with --pool, sessions asked for again take a
// pooled sandbox, each with a workspace of its own.
func TestPoolServesSessions(t *testing.T) {
	c := engine(t)
	s := startStdio(t, baseArgs(c, "--pool", "1", "--max_sessions", "3"), nil)
	// Asked for twice, the sessions' spec is kept ready: a later session
	// takes the sandbox the pool started, once it is ready (one asking
	// before starts its own, and is closed here).
	var ids []string
	for i := 0; len(ids) < 3; i++ {
		require.Less(t, i, 100, "no session took a pooled sandbox")
		ready := poolMembers(t, c)
		if len(ids) == 2 && len(ready) == 0 {
			time.Sleep(100 * time.Millisecond)
			continue
		}
		info, _ := callOK[sessionInfoOut](t, s.cs, "session_create", map[string]any{})
		if len(ids) < 2 {
			ids = append(ids, info.Session)
			continue
		}
		out, _ := callOK[runOutput](t, s.cs, "session_exec", map[string]any{"session": info.Session, "command": "hostname"})
		if strings.HasPrefix(ready[0].ID, strings.TrimSpace(out.Stdout)) {
			ids = append(ids, info.Session)
			continue
		}
		callOK[map[string]any](t, s.cs, "session_close", map[string]any{"session": info.Session})
	}
	for i, id := range ids {
		out, _ := callOK[runOutput](t, s.cs, "session_exec", map[string]any{"session": id, "command": "ls; echo " + id + " > mine.txt"})
		assert.Empty(t, strings.TrimSpace(strings.ReplaceAll(strings.ReplaceAll(out.Stdout, "mounts", ""), "output", "")), "session %d sees no other's files", i)
		out, _ = callOK[runOutput](t, s.cs, "session_exec", map[string]any{"session": id, "command": "cat mine.txt"})
		assert.Equal(t, id+"\n", out.Stdout)
	}
	require.Eventually(t, func() bool { return len(poolMembers(t, c)) == 2 }, 2*time.Minute, 100*time.Millisecond,
		"the third session's sandbox, from the pool, and one ready again")
	require.NoError(t, s.cs.Close())
	assert.Zero(t, leftovers(t, c))
}
