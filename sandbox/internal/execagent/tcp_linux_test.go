package execagent_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/sandbox/internal/execagent"
)

// startTCPAgent runs a copy of the agent in serve-tcp mode with token on
// its standard input, as sandbox/kube starts it in a pod; it returns the
// agent's address and the path of the copy.
func startTCPAgent(t *testing.T, token []byte) (addr, copyPath string) {
	t.Helper()
	copyPath = filepath.Join(t.TempDir(), "agent")
	bin, err := os.ReadFile(agentBin)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(copyPath, bin, 0o700))
	agent := exec.Command(copyPath, execagent.TCPArg, strconv.Itoa(64<<20))
	agent.Stderr = os.Stderr
	in, err := agent.StdinPipe()
	require.NoError(t, err)
	out, err := agent.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, agent.Start())
	t.Cleanup(func() { _ = in.Close(); _ = agent.Process.Kill(); _ = agent.Wait() })
	_, err = io.WriteString(in, hex.EncodeToString(token)+"\n")
	require.NoError(t, err)
	line, err := bufio.NewReader(out).ReadString('\n')
	require.NoError(t, err)
	port, ok := strings.CutPrefix(strings.TrimSpace(line), execagent.ListeningPrefix)
	require.True(t, ok, "agent printed %q", line)
	return "127.0.0.1:" + port, copyPath
}

// A TCP agent runs the commands of a connection that presents its token,
// and closes, unanswered and with nothing run, every connection that does
// not: another process of the sandbox can reach the port.
func TestTCPAgentServesOnlyTheTokensHolder(t *testing.T) {
	token := make([]byte, execagent.TokenLen)
	_, _ = rand.Read(token)
	addr, copyPath := startTCPAgent(t, token)
	_, err := os.Stat(copyPath)
	assert.ErrorIs(t, err, os.ErrNotExist, "the agent removes its copied binary once running")

	marker := filepath.Join(t.TempDir(), "ran")
	req := execagent.StartRequest{Argv: []string{"sh", "-c", "echo out; echo err >&2; touch " + marker + "; exit 3"}}
	wrong := bytes.Repeat([]byte{'x'}, execagent.TokenLen)
	for name, first := range map[string]func(net.Conn) error{
		"no token":    func(net.Conn) error { return nil },
		"wrong token": func(c net.Conn) error { return execagent.WriteFrame(c, execagent.FrameAuth, wrong) },
		"short token": func(c net.Conn) error { return execagent.WriteFrame(c, execagent.FrameAuth, token[:8]) },
	} {
		t.Run(name, func(t *testing.T) {
			conn, err := net.Dial("tcp", addr)
			require.NoError(t, err)
			require.NoError(t, first(conn))
			_, err = execagent.Run(context.Background(), conn, execagent.Call{Req: req, Stdout: io.Discard, Stderr: io.Discard})
			require.ErrorIs(t, err, execagent.ErrLost)
			time.Sleep(100 * time.Millisecond)
			_, err = os.Stat(marker)
			assert.ErrorIs(t, err, os.ErrNotExist, "the command did not run")
		})
	}

	conn, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	require.NoError(t, execagent.WriteFrame(conn, execagent.FrameAuth, token))
	var o output
	res, err := execagent.Run(context.Background(), conn, execagent.Call{Req: req, Stdout: &o.stdout, Stderr: &o.stderr})
	require.NoError(t, err)
	assert.Equal(t, 3, res.ExitCode)
	assert.Equal(t, "out\n", o.stdout.String())
	assert.Equal(t, "err\n", o.stderr.String())
	assert.FileExists(t, marker)
}
