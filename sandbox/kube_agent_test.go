package sandbox_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/internal/kubetest"
	"github.com/swebox/swebox/sandbox"
)

// knockAgent runs in a pod as a command of the sandbox would: it finds every
// TCP port listening on the loopback (the agent's among them) and, on each,
// asks for `touch /tmp/pwned` in the agent's protocol three ways: with no
// token, with a wrong one, and with a wrong one of the right length. It
// prints one line per port and attempt: the port, how many bytes came back
// before the agent closed the connection, how it closed (a reset when the
// request was left unread), and the bytes.
const knockAgent = `
import json, socket, struct
ports = set()
for line in open('/proc/net/tcp').read().splitlines()[1:]:
    f = line.split()
    addr, state = f[1], f[3]
    if state == '0A' and addr.startswith('0100007F:'):
        ports.add(int(addr.split(':')[1], 16))
def frame(t, p):
    return t + struct.pack('>I', len(p)) + p
start = frame(b'S', json.dumps({'version': 1, 'argv': ['touch', '/tmp/pwned']}).encode())
for port in sorted(ports):
    for name, first in [('none', b''), ('short', frame(b'a', b'x')), ('wrong', frame(b'a', b'x' * 32))]:
        s = socket.create_connection(('127.0.0.1', port), 5)
        s.settimeout(15)
        s.sendall(first + start)
        got, end = b'', 'eof'
        try:
            while True:
                b = s.recv(4096)
                if not b:
                    break
                got += b
        except OSError as e:
            end = type(e).__name__
        print(port, name, len(got), end, got[:80])
        s.close()
`

// TestKubeAgentRefusesTheSandbox: the pod's agent listens on the loopback
// that every process of the pod shares; a command of the sandbox that
// connects to it, without the token the host gave the agent on its input or
// with a wrong one, gets the connection closed unanswered, and what it asked
// for does not run. Without the token check the agent would run the touch.
func TestKubeAgentRefusesTheSandbox(t *testing.T) {
	c := kubetest.Client(t)
	sb := createT(t, c, sandbox.Spec{Policy: sandbox.AllowAll()})
	require.True(t, sb.UsesExecAgent(), "the pod runs the exec agent")

	res := execT(t, sb, sandbox.ExecRequest{Cmd: []string{"python3", "-c", knockAgent}, Timeout: time.Minute})
	require.Equal(t, 0, res.ExitCode, res.Stderr.String())
	lines := strings.Split(strings.TrimSpace(res.Stdout.String()), "\n")
	require.NotEmpty(t, lines[0], "the agent's port is found from inside the pod")
	require.Len(t, lines, 3, "one port listens on the loopback, the agent's: %s", res.Stdout.String())
	for _, l := range lines {
		f := strings.Fields(l)
		require.GreaterOrEqual(t, len(f), 3, l)
		assert.Equal(t, "0", f[2], "the agent answers nothing to a connection without the token: %s", l)
	}
	res = execT(t, sb, sandbox.ExecRequest{Cmd: []string{"ls", "-a", "/tmp"}})
	assert.NotContains(t, res.Stdout.String(), "pwned", "the command sent without the token did not run")
	assert.NotContains(t, res.Stdout.String(), "swebox-agent", "the agent's binary is not left in /tmp")
	assert.True(t, sb.UsesExecAgent(), "the knocks did not disturb the agent")
}

// TestKubeAgentIsClosedToTheSandbox: the agent runs as the pod's user, but
// nothing of it is readable to the sandbox's commands: it is non-dumpable,
// so its environment, open files and memory are closed to them, and its
// command line carries no secret.
func TestKubeAgentIsClosedToTheSandbox(t *testing.T) {
	c := kubetest.Client(t)
	sb := createT(t, c, sandbox.Spec{Policy: sandbox.AllowAll()})
	require.True(t, sb.UsesExecAgent())
	res := shT(t, sb, `for p in /proc/[0-9]*; do
  cmd=$(tr '\0' ' ' < $p/cmdline 2>/dev/null)
  case "$cmd" in *" serve-tcp in-memory "[0-9]*) echo "cmdline: $cmd"; cat $p/environ >/dev/null 2>&1 && echo environ-readable; ls $p/fd >/dev/null 2>&1 && echo fd-readable; cat $p/mem >/dev/null 2>&1 && echo mem-readable;; esac
done; id -u`)
	require.Equal(t, 0, res.ExitCode, res.Stderr.String())
	out := res.Stdout.String()
	assert.Contains(t, out, "cmdline: ", "the agent is seen from inside the pod")
	assert.NotContains(t, out, "readable")
	for _, l := range strings.Split(out, "\n") {
		if cmd, ok := strings.CutPrefix(l, "cmdline: "); ok {
			fields := strings.Fields(cmd)[1:]
			require.Len(t, fields, 3, "serve-tcp in-memory FILESIZE, no token on the command line")
			assert.Equal(t, []string{"serve-tcp", "in-memory"}, fields[:2])
			_, err := strconv.ParseUint(fields[2], 10, 64)
			assert.NoError(t, err, "the file size limit is a number of bytes")
		}
	}
	assert.NotEqual(t, "0\n", out[strings.LastIndexByte(strings.TrimSuffix(out, "\n"), '\n')+1:], "the pod does not run as root")
}

// TestKubeAgentFallsBackToTheAPIServer: a pod whose agent cannot be copied
// in (its /tmp is smaller than the binary) runs its commands through the
// API server's exec, with the same results.
func TestKubeAgentFallsBackToTheAPIServer(t *testing.T) {
	c := kubetest.Client(t)
	sb, err := c.Create(context.Background(), sandbox.Spec{Image: testImage(), Limits: sandbox.Limits{TmpSize: 1 << 20}, Policy: sandbox.AllowAll()})
	require.NoError(t, err)
	t.Cleanup(func() { _ = sb.Remove(context.Background()) })
	assert.False(t, sb.UsesExecAgent())
	res := execT(t, sb, sandbox.ExecRequest{Cmd: []string{"sh", "-c", "echo out; echo err >&2; exit 3"}})
	assert.Equal(t, 3, res.ExitCode)
	assert.Equal(t, "out\n", res.Stdout.String())
	assert.Equal(t, "err\n", res.Stderr.String())
}

// TestKubeAgentKilledFromInsideFallsBackToTheAPIServer: a process of the
// sandbox that kills the agent between commands only costs the pod the
// speed; a command that kills the agent it runs under makes the sandbox
// unusable, as on Docker.
func TestKubeAgentKilledFromInsideFallsBackToTheAPIServer(t *testing.T) {
	const kill = `for p in /proc/[0-9]*; do
  case "$(tr '\0' ' ' < $p/cmdline 2>/dev/null)" in *" serve-tcp in-memory "[0-9]*) kill -9 ${p#/proc/};; esac
done`
	c := kubetest.Client(t)
	sb := createT(t, c, sandbox.Spec{Policy: sandbox.AllowAll()})
	require.True(t, sb.UsesExecAgent())
	res := shT(t, sb, "(sleep 0.3; "+kill+") >/dev/null 2>&1 &")
	require.Equal(t, 0, res.ExitCode, res.Stderr.String())
	time.Sleep(2 * time.Second)
	res = execT(t, sb, sandbox.ExecRequest{Cmd: []string{"sh", "-c", "echo back; exit 4"}, Timeout: time.Minute})
	assert.Equal(t, 4, res.ExitCode)
	assert.Equal(t, "back\n", res.Stdout.String())
	assert.False(t, sb.UsesExecAgent())

	sb2 := createT(t, c, sandbox.Spec{Policy: sandbox.AllowAll()})
	require.True(t, sb2.UsesExecAgent())
	_, err := sb2.Shell(context.Background(), kill+"; sleep 1000", sandbox.ExecRequest{Timeout: time.Minute})
	require.ErrorIs(t, err, sandbox.ErrUnusable)
}

// TestKubeAgentReportsUsage: a command run through a pod's agent reports
// its resource usage, as on Docker.
func TestKubeAgentReportsUsage(t *testing.T) {
	c := kubetest.Client(t)
	sb := createT(t, c, sandbox.Spec{Policy: sandbox.AllowAll()})
	res := execT(t, sb, sandbox.ExecRequest{Cmd: []string{"python3", "-c", "b = b'x' * (64 << 20); sum(range(3000000))"}})
	require.Equal(t, 0, res.ExitCode, res.Stderr.String())
	assert.Greater(t, res.Usage.MaxRSS, int64(64<<20))
	assert.Greater(t, res.Usage.UserCPU, time.Duration(0))
}
