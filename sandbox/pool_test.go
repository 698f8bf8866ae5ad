package sandbox_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/sandbox"
)

// poolSandboxes lists the pool's sandboxes of c's session, by id.
func poolSandboxes(t *testing.T, c *sandbox.Client) map[string]bool {
	t.Helper()
	objs, err := c.List(context.Background(), sandbox.ListRequest{Labels: map[string]string{sandbox.LabelPool: "true"}})
	require.NoError(t, err)
	ids := map[string]bool{}
	for _, o := range objs {
		if o.Kind == sandbox.KindSandbox {
			ids[o.ID] = true
		}
	}
	return ids
}

func hasPrefix(ids map[string]bool, short string) bool {
	for id := range ids {
		if strings.HasPrefix(id, short) {
			return true
		}
	}
	return false
}

func TestPoolOptionsAreValidated(t *testing.T) {
	for _, o := range []sandbox.PoolOptions{{Size: 0}, {Size: 257}, {Size: 1, IdleTimeout: -time.Second}} {
		_, err := sandbox.New(sandbox.WithPool(o))
		assert.Error(t, err, "%+v", o)
	}
}

// TestPoolRunHandsEachSandboxOutOnce: pooled one-shot runs each get a
// sandbox of their own, never one that ran a command before, and the
// sandbox is removed after the run.
func TestPoolRunHandsEachSandboxOutOnce(t *testing.T) {
	c := newClient(t, sandbox.WithPool(sandbox.PoolOptions{Size: 2}))
	spec := sandbox.Spec{Image: testImage(), Policy: sandbox.AllowAll()}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	seen := map[string]bool{}
	for i := range 5 {
		require.NoError(t, c.Warm(ctx, spec, 2))
		// A file left by an earlier run would show a reused sandbox.
		res, err := c.Run(ctx, spec, sandbox.ExecRequest{Cmd: []string{"sh", "-c", "ls /tmp/used 2>/dev/null; touch /tmp/used; hostname"}})
		require.NoError(t, err)
		require.Equal(t, 0, res.ExitCode, res.Stderr.String())
		host := strings.TrimSpace(res.Stdout.String())
		assert.False(t, seen[host], "run %d got sandbox %s again", i, host)
		seen[host] = true
		assert.Positive(t, res.Usage.MaxRSS, "run %d was served by a pooled sandbox", i)
		require.Eventually(t, func() bool { return !hasPrefix(poolSandboxes(t, c), host) }, time.Minute, 50*time.Millisecond,
			"the sandbox of run %d is removed", i)
	}
}

// TestPoolRunResults: a pooled run reports what a cold one does.
func TestPoolRunResults(t *testing.T) {
	pooled := newClient(t, sandbox.WithPool(sandbox.PoolOptions{Size: 1}))
	cold := newClient(t)
	spec := sandbox.Spec{Image: testImage(), Policy: sandbox.AllowAll(), Env: map[string]string{"A": "spec"}}
	type testCase struct {
		name string
		req  sandbox.ExecRequest
	}
	for _, tc := range []testCase{
		{name: "exit code and streams", req: sandbox.ExecRequest{Cmd: []string{"sh", "-c", "echo out; echo err >&2; exit 3"}}},
		{name: "env, dir and stdin", req: sandbox.ExecRequest{Cmd: []string{"sh", "-c", "echo $A $B; pwd; cat"}, Env: map[string]string{"B": "req"}, WorkingDir: "/tmp", Stdin: strings.NewReader("in")}},
		{name: "signal", req: sandbox.ExecRequest{Cmd: []string{"sh", "-c", "kill -KILL $$"}}},
		{name: "timeout", req: sandbox.ExecRequest{Cmd: []string{"sh", "-c", "echo started; sleep 100"}, Timeout: time.Second}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.NoError(t, pooled.Warm(context.Background(), spec, 1))
			want, err := cold.Run(context.Background(), spec, tc.req)
			require.NoError(t, err)
			if tc.req.Stdin != nil {
				tc.req.Stdin = strings.NewReader("in")
			}
			got, err := pooled.Run(context.Background(), spec, tc.req)
			require.NoError(t, err)
			assert.Positive(t, got.Usage.MaxRSS+int64(got.Usage.UserCPU), "served by the pool")
			assert.Equal(t, want.ExitCode, got.ExitCode)
			assert.Equal(t, want.Signal, got.Signal)
			assert.Equal(t, want.TimedOut, got.TimedOut)
			assert.Equal(t, want.Stdout.String(), got.Stdout.String())
			assert.Equal(t, want.Stderr.String(), got.Stderr.String())
		})
	}
}

// TestPoolCreateIsExclusive: concurrent Creates get different sandboxes,
// and a removed pooled sandbox never comes back.
func TestPoolCreateIsExclusive(t *testing.T) {
	c := newClient(t, sandbox.WithPool(sandbox.PoolOptions{Size: 3}))
	spec := sandbox.Spec{Image: testImage(), Policy: sandbox.AllowAll()}
	require.NoError(t, c.Warm(context.Background(), spec, 3))
	var mu sync.Mutex
	ids := map[string]int{}
	var wg sync.WaitGroup
	for range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sb, err := c.Create(context.Background(), spec)
			if !assert.NoError(t, err) {
				return
			}
			mu.Lock()
			ids[sb.ID()]++
			mu.Unlock()
			assert.NoError(t, sb.Remove(context.Background()))
		}()
	}
	wg.Wait()
	require.Len(t, ids, 3, "three different sandboxes")
	require.NoError(t, c.Warm(context.Background(), spec, 3))
	for range 3 {
		sb := createT(t, c, spec)
		assert.Zero(t, ids[sb.ID()], "a removed sandbox is never handed out again")
	}
}

// TestPoolCloseAndIdleLeaveNothing: an idle spec's sandboxes are removed,
// Close removes what the pool holds, and Prune removes what a crashed
// program's pool left.
func TestPoolCloseAndIdleLeaveNothing(t *testing.T) {
	spec := sandbox.Spec{Image: testImage(), Policy: sandbox.AllowAll()}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	t.Run("idle", func(t *testing.T) {
		c := newClient(t, sandbox.WithPool(sandbox.PoolOptions{Size: 2, IdleTimeout: 500 * time.Millisecond}))
		require.NoError(t, c.Warm(ctx, spec, 2))
		require.Len(t, poolSandboxes(t, c), 2)
		require.Eventually(t, func() bool { return len(poolSandboxes(t, c)) == 0 && c.PoolReady(spec) == 0 }, time.Minute, 100*time.Millisecond)
	})
	t.Run("close", func(t *testing.T) {
		c := newClient(t, sandbox.WithPool(sandbox.PoolOptions{Size: 2}))
		require.NoError(t, c.Warm(ctx, spec, 2))
		res, err := c.Run(ctx, spec, sandbox.ExecRequest{Cmd: []string{"true"}})
		require.NoError(t, err)
		require.Equal(t, 0, res.ExitCode)
		require.NoError(t, c.Close())
		check := newClient(t, sandbox.WithSession(c.Session()))
		assert.Empty(t, poolSandboxes(t, check))
	})
	t.Run("crash", func(t *testing.T) {
		crashed := newClient(t, sandbox.WithPool(sandbox.PoolOptions{Size: 2}))
		require.NoError(t, crashed.Warm(ctx, spec, 2))
		// Another program of the same session prunes what the crashed one
		// left, found by its labels.
		other := newClient(t, sandbox.WithSession(crashed.Session()))
		require.Len(t, poolSandboxes(t, other), 2)
		pr, err := other.Prune(ctx, sandbox.PruneRequest{})
		require.NoError(t, err)
		assert.GreaterOrEqual(t, pr.Containers, 2)
		assert.Empty(t, poolSandboxes(t, other))
	})
}

// TestPoolKeepsReadyOnlySpecsAskedForAgain: a spec asked for once (a
// per-call mount, say) gets no sandboxes kept ready; one asked for again
// does.
func TestPoolKeepsReadyOnlySpecsAskedForAgain(t *testing.T) {
	c := newClient(t, sandbox.WithPool(sandbox.PoolOptions{Size: 2}))
	spec := sandbox.Spec{Image: testImage(), Policy: sandbox.AllowAll(), Env: map[string]string{"ONCE": "1"}}
	createT(t, c, spec)
	time.Sleep(2 * time.Second)
	assert.Zero(t, c.PoolReady(spec))
	assert.Empty(t, poolSandboxes(t, c))
	createT(t, c, spec)
	require.Eventually(t, func() bool { return c.PoolReady(spec) == 2 }, 2*time.Minute, 50*time.Millisecond)
}

// TestPoolCreateWithWorkspace: sandboxes that each get a workspace of their
// own share a pool; each is handed out once, with a directory no other
// sandbox saw (what one wrote is not in the next), laid out by Prepare; the
// pool removes the directories of the sandboxes it never handed out, the
// caller those it got.
func TestPoolCreateWithWorkspace(t *testing.T) {
	c := newClient(t, sandbox.WithPool(sandbox.PoolOptions{Size: 2}))
	assert.Equal(t, 2, c.PoolSize())
	parent := t.TempDir()
	nw := sandbox.NewWorkspace{Parent: parent, Prepare: func(dir string) error {
		if err := os.Mkdir(filepath.Join(dir, "mounts"), 0o777); err != nil {
			return err
		}
		return os.Chmod(dir, 0o777) // writable by the sandbox's user
	}}
	spec := sandbox.Spec{Image: testImage(), Policy: sandbox.AllowAll()}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	seen := map[string]bool{}
	for i := range 4 {
		if i > 1 {
			// Asked for twice: the pool keeps two ready, each with its
			// own directory.
			require.Eventually(t, func() bool { return len(poolSandboxes(t, c)) == 2 }, 2*time.Minute, 50*time.Millisecond)
		}
		sb, err := c.CreateWithWorkspace(ctx, spec, nw)
		require.NoError(t, err)
		ws := sb.Spec().Workspace
		assert.Equal(t, parent, filepath.Dir(ws))
		assert.False(t, seen[ws], "workspace %s handed out twice", ws)
		seen[ws] = true
		res := execT(t, sb, sandbox.ExecRequest{Cmd: []string{"sh", "-c", "ls -A /workspace; pwd; echo run > /workspace/used"}})
		assert.Equal(t, "mounts\n/workspace\n", res.Stdout.String(), "run %d: a fresh workspace, laid out", i)
		b, err := os.ReadFile(filepath.Join(ws, "used"))
		require.NoError(t, err)
		assert.Equal(t, "run\n", string(b), "the workspace is the host directory")
		require.NoError(t, sb.Remove(ctx))
		require.NoError(t, os.RemoveAll(ws))
	}
	require.Eventually(t, func() bool { return len(poolSandboxes(t, c)) == 2 }, 2*time.Minute, 50*time.Millisecond)
	left, err := os.ReadDir(parent)
	require.NoError(t, err)
	assert.Len(t, left, 2, "the ready sandboxes' directories")
	require.NoError(t, c.Close())
	left, err = os.ReadDir(parent)
	require.NoError(t, err)
	assert.Empty(t, left, "Close removes the directories of the sandboxes never handed out")
	check := newClient(t, sandbox.WithSession(c.Session()))
	assert.Empty(t, poolSandboxes(t, check))

	_, err = c.CreateWithWorkspace(ctx, sandbox.Spec{Image: testImage(), Workspace: parent}, nw)
	var se *sandbox.SpecError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, "Workspace", se.Field)
	_, err = c.CreateWithWorkspace(ctx, spec, sandbox.NewWorkspace{Parent: "rel"})
	require.ErrorAs(t, err, &se)
	assert.Equal(t, "NewWorkspace.Parent", se.Field)
}
