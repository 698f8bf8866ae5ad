package sandbox

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/sandbox/internal/seam"
)

// describedBackend is a backend of another package that reports what its
// engine offers.
type describedBackend struct {
	otherBackend
	info seam.Info
}

func (b describedBackend) Info() seam.Info { return b.info }

// TestCapabilitiesComeFromTheBackendsInfo: whether the engine shares the
// host's files and whether a sandbox gets the socket-reached exec agent
// follow what the backend reports, the Docker backend (from its address)
// as any other, never its type: a third backend that reports both gets
// both.
func TestCapabilitiesComeFromTheBackendsInfo(t *testing.T) {
	type testCase struct {
		name       string
		opt        Option
		wantShares bool
		wantAgent  bool
	}
	// (A named pipe, Windows' local socket, shares files too; the Docker
	// client refuses one elsewhere.)
	for _, tc := range []testCase{
		{name: "Docker over a Unix socket", opt: WithHost("unix:///var/run/docker.sock"), wantShares: true, wantAgent: true},
		{name: "Docker over TCP", opt: WithHost("tcp://10.0.0.5:2376")},
		{name: "a backend that says nothing", opt: WithBackend(otherBackend{})},
		{name: "a backend that shares files and the agent socket", opt: WithBackend(describedBackend{info: seam.Info{SharesHostFiles: true, AgentSocket: true}}), wantShares: true, wantAgent: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := New(tc.opt, WithSession("unit-"+randomID(4)))
			require.NoError(t, err)
			defer c.Close()
			assert.Equal(t, tc.wantShares, c.SharesHostFiles())
			a, _, _ := c.agentFor(Spec{Image: "img"}.withDefaults())
			if a != nil {
				defer a.remove()
			}
			assert.Equal(t, tc.wantAgent && runtime.GOOS == "linux", a != nil, "the sandbox gets the exec agent")
		})
	}
}
