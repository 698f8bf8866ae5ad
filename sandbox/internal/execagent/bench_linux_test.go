package execagent_test

import (
	"context"
	"io"
	"net"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/sandbox/internal/execagent"
)

// BenchmarkAgentTrue runs `true` through an agent on this machine, against
// fork-exec of `true` by os/exec: the agent's own cost per command.
func BenchmarkAgentTrue(b *testing.B) {
	sock := startAgentB(b)
	for b.Loop() {
		conn, err := net.Dial("unix", sock)
		require.NoError(b, err)
		res, err := execagent.Run(context.Background(), conn, execagent.Call{Req: execagent.StartRequest{Argv: []string{"true"}}, Stdout: io.Discard, Stderr: io.Discard})
		require.NoError(b, err)
		require.Equal(b, 0, res.ExitCode)
	}
}

func BenchmarkOSExecTrue(b *testing.B) {
	for b.Loop() {
		require.NoError(b, exec.Command("true").Run())
	}
}
