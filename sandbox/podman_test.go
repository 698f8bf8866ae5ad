package sandbox_test

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/internal/testenv"
	"github.com/swebox/swebox/sandbox"
)

// cgroupLimitsPy prints the memory and process limits of the cgroup the
// sandbox is in, as the kernel reports them there (cgroup v2, else v1):
// "max" or a number each.
const cgroupLimitsPy = `
import os
def first(*paths):
    for p in paths:
        try:
            return open(p).read().strip()
        except OSError:
            pass
    return "none"
mem = first("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes")
pids = first("/sys/fs/cgroup/pids.max", "/sys/fs/cgroup/pids/pids.max")
print(mem, pids)
`

// TestLimitsEnforcedOrRefused: a sandbox's memory and process limits hold
// inside it, as its cgroup shows them, or the engine cannot enforce them
// (rootless Podman without cgroup v2 delegation) and Create refuses the
// sandbox with ErrLimitsNotEnforced; with WithUnenforcedLimits the sandbox
// then runs, its cgroup shows no such limit, and the client logged a
// warning that names them.
func TestLimitsEnforcedOrRefused(t *testing.T) {
	const memory, pids = 256 << 20, 64
	spec := sandbox.Spec{Image: testImage(), Limits: sandbox.Limits{Memory: memory, PidsLimit: pids}}
	ctx := context.Background()
	// testenv's client takes SWEBOX_TEST_UNENFORCED_LIMITS; this test
	// makes its own clients, with and without the option.
	c, err := sandbox.New(sandbox.WithSession(testenv.Session(t)), sandbox.WithExecAgent(false))
	require.NoError(t, err)
	testenv.SkipWithoutEngine(t, c)
	t.Cleanup(func() {
		_, err := c.Prune(context.Background(), sandbox.PruneRequest{})
		require.NoError(t, err)
		require.NoError(t, c.Close())
	})
	sb, err := c.Create(ctx, spec)
	if err == nil {
		t.Cleanup(func() { require.NoError(t, sb.Remove(context.Background())) })
		mem, procs := cgroupLimits(t, sb)
		assert.Equal(t, "268435456", mem, "the memory limit in the sandbox's cgroup")
		// The exec agent, off here, would add its allowance.
		assert.Equal(t, "64", procs, "the process limit in the sandbox's cgroup")
		return
	}
	require.ErrorIs(t, err, sandbox.ErrLimitsNotEnforced)
	var ule *sandbox.UnenforcedLimitsError
	require.ErrorAs(t, err, &ule)
	assert.Equal(t, []string{"Memory", "NanoCPUs", "PidsLimit"}, ule.Limits)
	assert.Contains(t, err.Error(), "WithUnenforcedLimits")
	assert.Empty(t, sessionContainers(t, c), "a refused sandbox leaves no container")

	var logs bytes.Buffer
	loose, err := sandbox.New(sandbox.WithSession(c.Session()), sandbox.WithExecAgent(false), sandbox.WithUnenforcedLimits(true),
		sandbox.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, loose.Close()) })
	sb, err = loose.Create(ctx, spec)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, sb.Remove(context.Background())) })
	mem, procs := cgroupLimits(t, sb)
	assert.NotEqual(t, "268435456", mem, "the refusal was right: the engine put no memory limit in the cgroup")
	assert.NotEqual(t, "64", procs, "the refusal was right: the engine put no process limit in the cgroup")
	assert.Contains(t, logs.String(), "sandbox limits not enforced")
	assert.Contains(t, logs.String(), "Memory")
}

// cgroupLimits reads the memory and process limits of sb's cgroup from
// inside it (cgroupLimitsPy).
func cgroupLimits(t *testing.T, sb *sandbox.Sandbox) (memory, pids string) {
	t.Helper()
	res := execT(t, sb, sandbox.ExecRequest{Cmd: []string{"python3", "-c", cgroupLimitsPy}})
	fields := strings.Fields(res.Stdout.String())
	require.Len(t, fields, 2, res.Stderr.String())
	return fields[0], fields[1]
}

// TestOOMCountIsTheSandboxs: the OOM kill count a sandbox reports
// (OOMKills, and from it ExecResult.OOMKilled and swebench's
// out_of_memory) is read from a memory cgroup of the sandbox's own. On
// rootless Podman without the memory controller (a cgroup v1 host) the
// sandbox stays in the engine's memory cgroup, which is this test's when
// it runs as the engine's user beside it (.ci/run): that cgroup's counter
// counts every OOM kill among its processes, so OOMKills refuses to read
// it. Elsewhere a fresh sandbox's count is 0.
func TestOOMCountIsTheSandboxs(t *testing.T) {
	c := newClient(t)
	sb := createT(t, c, sandbox.Spec{Image: testImage(), Policy: sandbox.AllowAll()})
	inside := memoryCgroup(t, execT(t, sb, sandbox.ExecRequest{Cmd: []string{"cat", "/proc/self/cgroup"}}).Stdout.String())
	mine, err := os.ReadFile("/proc/self/cgroup")
	require.NoError(t, err)
	n, err := sb.OOMKills(context.Background())
	if inside == memoryCgroup(t, string(mine)) {
		require.Error(t, err, "the sandbox is in this test's memory cgroup %s, whose count is not the sandbox's", inside)
		return
	}
	require.NoError(t, err)
	assert.Zero(t, n, "a fresh sandbox's own count")
}

// memoryCgroup is the path of the memory cgroup in a /proc/PID/cgroup: the
// memory controller's line on cgroup v1, the unified one on v2.
func memoryCgroup(t *testing.T, procCgroup string) string {
	t.Helper()
	unified := ""
	for _, line := range strings.Split(strings.TrimSpace(procCgroup), "\n") {
		parts := strings.SplitN(line, ":", 3)
		require.Len(t, parts, 3, "a /proc/PID/cgroup line: %q", line)
		if slices.Contains(strings.Split(parts[1], ","), "memory") {
			return parts[2]
		}
		if parts[0] == "0" && parts[1] == "" {
			unified = parts[2]
		}
	}
	require.NotEmpty(t, unified, "no memory cgroup in %q", procCgroup)
	return unified
}

// TestConcurrentCreates: sandboxes created at once all start and run a
// command, and the engine still answers. Rootless Podman 4.3's keep-id
// creates refused containers, or crashed the service, when they ran at
// once (createContainer makes this process's one at a time).
func TestConcurrentCreates(t *testing.T) {
	c := newClient(t)
	const n = 12
	ctx := context.Background()
	sbs := make([]*sandbox.Sandbox, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sbs[i], errs[i] = c.Create(ctx, sandbox.Spec{Image: testImage()})
		}()
	}
	wg.Wait()
	for i := range n {
		if !assert.NoError(t, errs[i], "sandbox %d", i) {
			continue
		}
		t.Cleanup(func() { assert.NoError(t, sbs[i].Remove(context.Background())) })
		res := execT(t, sbs[i], sandbox.ExecRequest{Cmd: []string{"python3", "-c", "print('up')"}})
		assert.Equal(t, "up\n", res.Stdout.String(), "sandbox %d", i)
	}
	require.NoError(t, c.Ping(ctx), "the engine still answers")
}
