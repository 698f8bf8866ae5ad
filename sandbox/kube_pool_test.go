package sandbox_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/internal/kubetest"
	"github.com/swebox/swebox/sandbox"
)

// The warm pool works on Kubernetes as on Docker: concurrent callers each
// get a pod of their own that no one had before, pooled runs give the
// results cold ones do, and the pods of a pool whose program died are found
// by their labels and pruned.
func TestKubePool(t *testing.T) {
	spec := sandbox.Spec{Image: testImage(), Policy: sandbox.AllowAll()}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	c := kubetest.Client(t, sandbox.WithPool(sandbox.PoolOptions{Size: 3}))
	require.NoError(t, c.Warm(ctx, spec, 3))
	warm := poolSandboxes(t, c)
	require.Len(t, warm, 3)

	var mu sync.Mutex
	ids := map[string]int{}
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() {
			sb, err := c.Create(ctx, spec)
			if !assert.NoError(t, err) {
				return
			}
			// A file left by an earlier caller would show a shared pod.
			res, err := sb.Exec(ctx, sandbox.ExecRequest{Cmd: []string{"sh", "-c", "ls /tmp/used 2>/dev/null; touch /tmp/used"}})
			assert.NoError(t, err)
			assert.Empty(t, res.Stdout.String(), "the pod was used before")
			mu.Lock()
			ids[sb.ID()]++
			mu.Unlock()
			assert.NoError(t, sb.Remove(ctx))
		})
	}
	wg.Wait()
	require.Len(t, ids, 3, "three different pods")
	for id := range ids {
		assert.True(t, warm[id], "pod %s came from the pool", id)
	}

	require.NoError(t, c.Warm(ctx, spec, 1))
	res, err := c.Run(ctx, spec, sandbox.ExecRequest{Cmd: []string{"sh", "-c", "echo out; echo err >&2; exit 3"}})
	require.NoError(t, err)
	assert.Equal(t, 3, res.ExitCode)
	assert.Equal(t, "out\n", res.Stdout.String())
	assert.Equal(t, "err\n", res.Stderr.String())

	crashed := kubetest.Client(t, sandbox.WithPool(sandbox.PoolOptions{Size: 2}))
	require.NoError(t, crashed.Warm(ctx, spec, 2))
	// Another program of the same session prunes what the crashed one left.
	other := kubetest.Client(t, sandbox.WithSession(crashed.Session()))
	left := poolSandboxes(t, other)
	require.Len(t, left, 2)
	for id := range left {
		assert.True(t, strings.HasPrefix(id, "swebox-"), id)
	}
	pr, err := other.Prune(ctx, sandbox.PruneRequest{})
	require.NoError(t, err)
	assert.GreaterOrEqual(t, pr.Containers, 2)
	assert.Empty(t, poolSandboxes(t, other))
}
