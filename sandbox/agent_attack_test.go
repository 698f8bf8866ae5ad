package sandbox_test

import (
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/sandbox"
)

// traceJudgesPy tries, from a command run through the exec agent, every way
// a process of the same user has into another's memory or descriptors, on
// its shim (its parent) and on the agent (the shim's parent), and prints
// what each attempt got: "denied" (EPERM or EACCES, refused by the kernel's
// ptrace access check), or what it got instead.
const traceJudgesPy = `
import ctypes, errno, json, os

libc = ctypes.CDLL(None, use_errno=True)
libc.ptrace.restype = ctypes.c_long
libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
libc.syscall.restype = ctypes.c_long
PTRACE_ATTACH, PTRACE_DETACH = 16, 17
SYS_PIDFD_OPEN, SYS_PIDFD_GETFD = 434, 438


class IOVec(ctypes.Structure):
    _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]


def outcome(err):
    if err in (errno.EPERM, errno.EACCES):
        return "denied"
    return "got through" if err == 0 else os.strerror(err)


def parent(pid):
    s = open("/proc/%d/stat" % pid).read()
    return int(s[s.rindex(")") + 2:].split()[1])


def attacks(pid):
    got = {}
    if libc.ptrace(PTRACE_ATTACH, pid, None, None) == 0:
        os.waitpid(pid, 0x40000000)
        libc.ptrace(PTRACE_DETACH, pid, None, None)
        got["ptrace"] = outcome(0)
    else:
        got["ptrace"] = outcome(ctypes.get_errno())
    try:
        os.close(os.open("/proc/%d/mem" % pid, os.O_RDWR))
        got["mem"] = outcome(0)
    except OSError as e:
        got["mem"] = outcome(e.errno)
    try:
        os.close(os.open("/proc/%d/fd/0" % pid, os.O_RDONLY))
        got["fd"] = outcome(0)
    except OSError as e:
        got["fd"] = outcome(e.errno)
    buf = ctypes.create_string_buffer(8)
    local, remote = IOVec(ctypes.cast(buf, ctypes.c_void_p), 8), IOVec(0x10000, 8)
    n = libc.process_vm_writev(pid, ctypes.byref(local), 1, ctypes.byref(remote), 1, 0)
    # Past the access check, the bogus address fails with EFAULT.
    got["process_vm_writev"] = outcome(0 if n >= 0 else ctypes.get_errno())
    pidfd = libc.syscall(SYS_PIDFD_OPEN, pid, 0)
    if pidfd < 0:
        got["pidfd_getfd"] = "pidfd_open: " + os.strerror(ctypes.get_errno())
    else:
        fd = libc.syscall(SYS_PIDFD_GETFD, pidfd, 0, 0)
        got["pidfd_getfd"] = outcome(0 if fd >= 0 else ctypes.get_errno())
    return got


shim = os.getppid()
print(json.dumps({"shim": attacks(shim), "agent": attacks(parent(shim))}))
`

// TestExecAgentCannotBeTraced: a command cannot ptrace the agent or its shim,
// write their memory or take their descriptors, which would let it rewrite
// its own output and exit status (the agent and the shim are
// non-dumpable, see execagent.Undumpable).
func TestExecAgentCannotBeTraced(t *testing.T) {
	sb := agentSandbox(t, newClient(t))
	res := execT(t, sb, sandbox.ExecRequest{Cmd: []string{"python3", "-c", traceJudgesPy}})
	require.Equal(t, 0, res.ExitCode, res.Stderr.String())
	var got map[string]map[string]string
	require.NoError(t, json.Unmarshal(res.Stdout.Bytes(), &got), res.Stdout.String())
	for _, target := range []string{"shim", "agent"} {
		for _, attack := range []string{"ptrace", "mem", "fd", "process_vm_writev", "pidfd_getfd"} {
			assert.Equal(t, "denied", got[target][attack], "%s of the %s", attack, target)
		}
	}
	// The command itself is dumpable, as through the engine's exec.
	res = execT(t, sb, sandbox.ExecRequest{Cmd: []string{"python3", "-c", "import ctypes; print(ctypes.CDLL(None).prctl(3, 0, 0, 0, 0))"}}) // PR_GET_DUMPABLE
	assert.Equal(t, "1\n", res.Stdout.String())
}

// interceptPy is what a hostile command leaves behind to intercept later
// commands: it moves the agent's socket aside and listens in its place, and
// a child it leaves running answers every connection with a made-up result
// whose output is the request it received, secrets included. It prints what
// it managed.
const interceptPy = `
import json, os, socket, struct, sys
d = "/run/swebox/sock"
try:
    os.rename(d + "/agent.sock", d + "/real.sock")
    s = socket.socket(socket.AF_UNIX)
    s.bind(d + "/agent.sock")
    s.listen(8)
except OSError as e:
    print("refused:", e.strerror)
    sys.exit(0)
print("listening")
sys.stdout.flush()
if os.fork() == 0:
    os.setsid()
    for fd in (0, 1, 2):
        os.close(fd)
    while True:
        c, _ = s.accept()
        req = c.recv(1 << 20)
        out, res = b"forged\n" + req, json.dumps({"exit_code": 0}).encode()
        c.sendall(b"o" + struct.pack(">I", len(out)) + out + b"x" + struct.pack(">I", len(res)) + res)
        c.close()
`

// TestExecAgentCannotBeIntercepted: a process an earlier command left
// behind cannot take the agent's place: the host connects to the socket
// where the sandbox cannot reach it, so a later command runs through the
// real agent, with its own result, and its secrets go nowhere else.
func TestExecAgentCannotBeIntercepted(t *testing.T) {
	sb := agentSandbox(t, newClient(t))
	res := execT(t, sb, sandbox.ExecRequest{Cmd: []string{"python3", "-c", interceptPy}})
	require.Equal(t, 0, res.ExitCode, res.Stderr.String())
	assert.True(t, strings.HasPrefix(res.Stdout.String(), "refused:"), "the earlier command: %s", res.Stdout.String())

	res = execT(t, sb, sandbox.ExecRequest{Cmd: []string{"sh", "-c", "echo real; exit 3"}, Env: map[string]string{"SECRET": "s3cret-value"}})
	assert.NotContains(t, res.Stdout.String(), "s3cret-value", "the command's secret reached the interceptor")
	assert.Equal(t, "real\n", res.Stdout.String())
	assert.Equal(t, 3, res.ExitCode)
	assert.Positive(t, res.Usage.MaxRSS, "the command ran through the agent")
	assert.True(t, sb.UsesExecAgent())
}

// TestExecAgentSocketLinkIsNotFollowed: a symbolic link planted at the
// socket's path inside the sandbox, naming a socket on the host, does not
// make the host send the next command there.
func TestExecAgentSocketLinkIsNotFollowed(t *testing.T) {
	// A host socket of the test's: it must never see a connection.
	hostSock := filepath.Join(t.TempDir(), "h.sock")
	ln, err := net.Listen("unix", hostSock)
	require.NoError(t, err)
	t.Cleanup(func() { _ = ln.Close() })
	var accepted atomic.Int32
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			_ = c.Close()
		}
	}()

	sb := agentSandbox(t, newClient(t))
	res := shT(t, sb, `cd /run/swebox/sock && { mv agent.sock real.sock && ln -s '`+hostSock+`' agent.sock && echo planted; } 2>/dev/null || echo refused`)
	assert.Equal(t, "refused\n", res.Stdout.String())
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err = sb.Exec(ctx, sandbox.ExecRequest{Cmd: []string{"echo", "after"}, Env: map[string]string{"SECRET": "s3cret-value"}})
	assert.Zero(t, accepted.Load(), "the host connected to the socket the link names")
	require.NoError(t, err)
	assert.Equal(t, "after\n", res.Stdout.String())
	assert.Positive(t, res.Usage.MaxRSS, "the command ran through the agent")
}

// TestExecAgentDirectoryIsNotHostStorage: once the agent listens, nothing
// can be written under its socket directory, which is a host directory
// outside every quota of the sandbox's.
func TestExecAgentDirectoryIsNotHostStorage(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts []sandbox.Option
	}{{name: "with agent"}, {name: "agent off", opts: []sandbox.Option{sandbox.WithExecAgent(false)}}} {
		t.Run(tc.name, func(t *testing.T) {
			c := newClient(t, tc.opts...)
			sb := createT(t, c, sandbox.Spec{Policy: sandbox.AllowAll()})
			res := shT(t, sb, `cd /run/swebox/sock 2>/dev/null || { echo no directory; exit; }
head -c 1048576 /dev/zero > fill 2>/dev/null && echo wrote file
mkdir d 2>/dev/null && echo made directory
ln -s /etc/passwd l 2>/dev/null && echo made link
true`)
			assert.Empty(t, strings.TrimPrefix(res.Stdout.String(), "no directory\n"), "the sandbox wrote to its socket directory")
			if sb.UsesExecAgent() {
				entries, err := os.ReadDir(agentSockDir(t, c, sb))
				require.NoError(t, err)
				assert.Empty(t, entries, "files on the host")
			}
		})
	}
}
