package sandbox

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/sandbox/internal/execagent"
	"github.com/swebox/swebox/sandbox/internal/seam"
)

// TestExecAgentWhereReachable: a sandbox gets an agent only where one can
// be reached, and otherwise runs the keepalive and uses the engine's exec.
func TestExecAgentWhereReachable(t *testing.T) {
	type testCase struct {
		name      string
		opts      []Option
		spec      Spec
		wantAgent bool
	}
	spec := Spec{Image: "img"}.withDefaults()
	// Another backend (a Kubernetes cluster): a pod cannot mount the
	// client's files, so no agent.
	other := otherBackend{}
	gvisor := spec
	gvisor.Runtime = "runsc"
	for _, tc := range []testCase{
		{name: "local socket", opts: []Option{WithHost("unix:///var/run/docker.sock"), WithExecAgent(true)}, spec: spec, wantAgent: runtime.GOOS == "linux"},
		{name: "remote engine over TCP", opts: []Option{WithHost("tcp://10.0.0.5:2376"), WithExecAgent(true)}, spec: spec},
		{name: "gVisor", opts: []Option{WithHost("unix:///var/run/docker.sock"), WithExecAgent(true)}, spec: gvisor},
		{name: "turned off", opts: []Option{WithHost("unix:///var/run/docker.sock"), WithExecAgent(false)}, spec: spec},
		{name: "another backend", opts: []Option{WithBackend(other)}, spec: spec},
		{name: "on by default", opts: []Option{WithHost("unix:///var/run/docker.sock")}, spec: spec, wantAgent: runtime.GOOS == "linux"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := New(append(tc.opts, WithSession("unit-"+randomID(4)))...)
			require.NoError(t, err)
			defer c.Close()
			a, got, cmd := c.agentFor(tc.spec)
			if !tc.wantAgent {
				assert.Nil(t, a)
				assert.Equal(t, keepalive, cmd)
				assert.Equal(t, tc.spec.Mounts, got.Mounts)
				return
			}
			require.NotNil(t, a)
			defer a.remove()
			assert.Equal(t, agentKeepalive, cmd)
			require.Len(t, got.Mounts, 2)
			assert.Equal(t, Mount{Type: "bind", Source: c.agent.host.bin, Target: agentBinTarget, ReadOnly: true}, got.Mounts[0])
			assert.Equal(t, Mount{Type: "bind", Source: a.dir, Target: agentSockTarget}, got.Mounts[1])
			assert.Equal(t, tc.spec.Limits.PidsLimit+execagent.PidsAllowance, got.Limits.PidsLimit, "the agent's tasks are added to the process limit")
			fi, err := os.Stat(a.dir)
			require.NoError(t, err)
			assert.Equal(t, os.FileMode(0o700), fi.Mode().Perm())
			assert.Empty(t, tc.spec.Mounts, "the caller's spec is not changed")
		})
	}
}

// otherBackend stands for a backend of a subpackage; the test calls only
// Bind and Close.
type otherBackend struct{ seam.Backend[Spec] }

func (otherBackend) Bind(seam.Env[Spec]) {}
func (otherBackend) Close() error        { return nil }

// TestWaitReadyStopsWhenTheAgentEnded: an agent that cannot run in the
// image leaves its exit status beside the socket, and the host stops
// waiting at once instead of sitting out agentReadyTimeout.
func TestWaitReadyStopsWhenTheAgentEnded(t *testing.T) {
	dir := t.TempDir()
	a := &sandboxAgent{dir: dir, sock: filepath.Join(dir, agentSockName)}
	require.NoError(t, os.WriteFile(filepath.Join(dir, agentExitName), []byte("126\n"), 0o600))
	start := time.Now()
	err := a.waitReady(context.Background())
	require.ErrorIs(t, err, errAgentFailed)
	assert.Contains(t, err.Error(), "status 126")
	assert.Less(t, time.Since(start), agentSharedTimeout)
}

// TestWaitReadyTellsAnUnsharedDirectory: when the sandbox never marks its
// directory, the engine does not see this machine's files.
func TestWaitReadyTellsAnUnsharedDirectory(t *testing.T) {
	if testing.Short() {
		t.Skip("waits agentSharedTimeout")
	}
	dir := t.TempDir()
	a := &sandboxAgent{dir: dir, sock: filepath.Join(dir, agentSockName)}
	err := a.waitReady(context.Background())
	require.ErrorIs(t, err, errAgentNotShared)
}

// TestNewRefusesDockerOptionsBesideABackend: the Docker options say nothing
// about another backend, so New refuses them instead of ignoring them.
func TestNewRefusesDockerOptionsBesideABackend(t *testing.T) {
	type testCase struct {
		name string
		opt  Option
		want string
	}
	for _, tc := range []testCase{
		{name: "host", opt: WithHost("unix:///var/run/docker.sock"), want: "WithHost"},
		{name: "api version", opt: WithAPIVersion("1.41"), want: "WithAPIVersion"},
		{name: "tls", opt: WithTLS("ca", "cert", "key"), want: "WithTLS"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New(WithBackend(otherBackend{}), tc.opt)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.Contains(t, err.Error(), "WithBackend")
		})
	}
	c, err := New(WithBackend(otherBackend{}))
	require.NoError(t, err, "a backend alone is fine")
	require.NoError(t, c.Close())
}
