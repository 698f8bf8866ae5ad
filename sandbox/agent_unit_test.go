package sandbox

import (
	"context"
	"net"
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
			assert.Equal(t, Mount{Type: "bind", Source: filepath.Join(a.dir, "sock"), Target: agentSockTarget}, got.Mounts[1])
			assert.Equal(t, tc.spec.Limits.PidsLimit+execagent.PidsAllowance, got.Limits.PidsLimit, "the agent's tasks are added to the process limit")
			for _, dir := range []string{a.dir, a.sockDir} {
				fi, err := os.Stat(dir)
				require.NoError(t, err)
				assert.Equal(t, os.FileMode(0o700), fi.Mode().Perm())
			}
			assert.Empty(t, tc.spec.Mounts, "the caller's spec is not changed")
		})
	}
}

// otherBackend stands for a backend of a subpackage; the test calls only
// Bind and Close.
type otherBackend struct{ seam.Backend[Spec] }

func (otherBackend) Bind(seam.Env[Spec]) {}
func (otherBackend) Close() error        { return nil }

// testAgent returns an agent whose directories are in a test's temporary
// directory.
func testAgent(t *testing.T) *sandboxAgent {
	t.Helper()
	dir := t.TempDir()
	a := &sandboxAgent{dir: dir, sockDir: filepath.Join(dir, sockSubdir), sock: filepath.Join(dir, agentSockName)}
	require.NoError(t, os.Mkdir(a.sockDir, 0o700))
	return a
}

// TestWaitReadyStopsWhenTheAgentEnded: an agent that cannot run in the
// image leaves its exit status beside the socket, and the host stops
// waiting at once instead of sitting out agentReadyTimeout.
func TestWaitReadyStopsWhenTheAgentEnded(t *testing.T) {
	a := testAgent(t)
	require.NoError(t, os.WriteFile(filepath.Join(a.sockDir, agentExitName), []byte("126\n"), 0o600))
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
	a := testAgent(t)
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

// TestWaitReadyMovesTheSocketOutOfReach: the host takes the agent's socket
// out of the directory the sandbox can write and connects to it there; a
// link in its place is never followed, whatever it names; and sealing
// leaves an empty directory of the host user's at the mount's source.
func TestWaitReadyMovesTheSocketOutOfReach(t *testing.T) {
	t.Run("socket", func(t *testing.T) {
		a := testAgent(t)
		ln, err := net.Listen("unix", filepath.Join(a.sockDir, agentSockName))
		require.NoError(t, err)
		defer ln.Close()
		require.NoError(t, a.waitReady(context.Background()))
		fi, err := os.Lstat(a.sock)
		require.NoError(t, err)
		assert.Equal(t, os.ModeSocket, fi.Mode().Type())
		_, err = os.Lstat(filepath.Join(a.sockDir, agentSockName))
		assert.ErrorIs(t, err, os.ErrNotExist)

		require.NoError(t, os.WriteFile(filepath.Join(a.sockDir, "left"), nil, 0o600))
		require.NoError(t, a.seal())
		entries, err := os.ReadDir(a.sockDir)
		require.NoError(t, err)
		assert.Empty(t, entries)
		conn, err := net.Dial("unix", a.sock)
		require.NoError(t, err, "the moved socket still reaches the agent")
		_ = conn.Close()
	})
	t.Run("link to a host socket", func(t *testing.T) {
		a := testAgent(t)
		target := filepath.Join(t.TempDir(), "host.sock")
		ln, err := net.Listen("unix", target)
		require.NoError(t, err)
		defer ln.Close()
		require.NoError(t, os.Symlink(target, filepath.Join(a.sockDir, agentSockName)))
		err = a.waitReady(context.Background())
		require.ErrorIs(t, err, errAgentNotSocket)
		_, err = os.Lstat(a.sock)
		assert.ErrorIs(t, err, os.ErrNotExist, "the link is removed")
		_ = ln.(*net.UnixListener).SetDeadline(time.Now().Add(100 * time.Millisecond))
		_, err = ln.Accept()
		assert.Error(t, err, "the host connected to the link's target")
	})
}
