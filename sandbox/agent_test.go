package sandbox_test

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/sandbox"
	"github.com/swebox/swebox/sandbox/internal/execagent"
)

// agentSandbox creates a sandbox that must have an exec agent.
func agentSandbox(t *testing.T, c *sandbox.Client) *sandbox.Sandbox {
	t.Helper()
	sb := createT(t, c, sandbox.Spec{Policy: sandbox.AllowAll()})
	require.True(t, sb.UsesExecAgent(), "a sandbox on the local engine has an exec agent")
	return sb
}

// agentClientPy talks to the agent's socket from inside the sandbox, as a
// hostile command could: it sends a StartRequest (argv 1 is its JSON, with
// any extra fields) and prints the agent's stdout and its result.
const agentClientPy = `
import json, socket, struct, sys
s = socket.socket(socket.AF_UNIX)
s.connect("/run/swebox/sock/agent.sock")
p = sys.argv[1].encode()
s.sendall(struct.pack(">cI", b"S", len(p)) + p)
out = b""
while True:
    h = b""
    while len(h) < 5:
        c = s.recv(5 - len(h))
        if not c: sys.exit("agent hung up")
        h += c
    t, n = struct.unpack(">cI", h)
    b = b""
    while len(b) < n:
        b += s.recv(n - len(b))
    if t == b"o": out += b
    if t == b"x":
        print(json.dumps({"stdout": out.decode(), "result": json.loads(b)}))
        break
`

func TestExecAgentIsTheDefaultAndCanBeTurnedOff(t *testing.T) {
	type testCase struct {
		name      string
		opts      []sandbox.Option
		wantAgent bool
	}
	for _, tc := range []testCase{
		{name: "default", wantAgent: true},
		{name: "off", opts: []sandbox.Option{sandbox.WithExecAgent(false)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newClient(t, tc.opts...)
			sb := createT(t, c, sandbox.Spec{Policy: sandbox.AllowAll()})
			assert.Equal(t, tc.wantAgent, sb.UsesExecAgent())
			res := execT(t, sb, sandbox.ExecRequest{Cmd: []string{"sh", "-c", "head -c 20000000 /dev/zero | tail -c 1 >/dev/null; echo ok"}})
			assert.Equal(t, "ok\n", res.Stdout.String())
			// Only the agent measures a command's resource usage.
			assert.Equal(t, tc.wantAgent, res.Usage.MaxRSS > 0, "usage %+v", res.Usage)
		})
	}
}

// TestExecAgentSocketIsPrivate: no sandbox can reach an agent's socket, its
// own included: the host moved it out of the socket directory, which is
// empty and stays so (TestExecAgentDirectoryIsNotHostStorage), and no other
// sandbox's directory is visible.
func TestExecAgentSocketIsPrivate(t *testing.T) {
	c := newClient(t)
	a, b := agentSandbox(t, c), agentSandbox(t, c)

	res := shT(t, a, `stat -c '%a %u:%g' /run/swebox/sock; ls -A /run/swebox/sock`)
	require.Equal(t, 0, res.ExitCode, res.Stderr.String())
	assert.Equal(t, "700 1000:1000\n", res.Stdout.String())

	// No Unix socket is in A's filesystem.
	res = shT(t, a, `find / \( -path /proc -o -path /sys \) -prune -o -type s -print 2>/dev/null`)
	assert.Empty(t, res.Stdout.String())

	// B's agent directory on the host is not mounted in A, under any name.
	dirA, dirB := agentDir(t, c, a), agentDir(t, c, b)
	assert.NotEqual(t, dirA, dirB, "each sandbox has a directory of its own")
	mountsA := shT(t, a, "cat /proc/self/mountinfo").Stdout.String()
	assert.NotContains(t, mountsA, filepath.Base(dirB))

	// On the host, the directories live in a directory only this user can
	// enter, each private too, with the socket in it.
	base := filepath.Join(os.TempDir(), "swebox-agent-"+strconv.Itoa(os.Getuid()))
	require.Equal(t, base, filepath.Dir(dirA))
	for _, dir := range []string{base, dirA} {
		fi, err := os.Stat(dir)
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o700), fi.Mode().Perm(), dir)
	}
	fi, err := os.Lstat(filepath.Join(dirA, "agent.sock"))
	require.NoError(t, err)
	assert.Equal(t, os.ModeSocket, fi.Mode().Type())
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), "the agent binds it private to its user")

	// Removing a sandbox removes its directory.
	require.NoError(t, b.Remove(context.Background()))
	_, err = os.Stat(dirB)
	assert.ErrorIs(t, err, os.ErrNotExist)
}

// TestExecAgentGivesNothingToACommand: a command cannot speak to the agent
// itself (to ask for another user, say): the agent's socket is out of the
// sandbox's reach, under its old name or any other.
func TestExecAgentGivesNothingToACommand(t *testing.T) {
	c := newClient(t)
	sb := agentSandbox(t, c)
	req, err := json.Marshal(map[string]any{"version": 1, "user": "0:0", "privileged": true, "argv": []string{"id", "-u"}})
	require.NoError(t, err)
	res := execT(t, sb, sandbox.ExecRequest{Cmd: []string{"python3", "-c", agentClientPy, string(req)}})
	assert.Equal(t, 1, res.ExitCode, "stdout: %s", res.Stdout.String())
	assert.Contains(t, res.Stderr.String(), "FileNotFoundError")
}

// TestExecAgentProcessIsUnprivileged: the agent runs as the sandbox's user
// without capabilities, its environment is the sandbox's, and its binary
// cannot be changed from inside (it is shared with other sandboxes). Its
// environment and descriptors are read from the host: the agent is
// non-dumpable, so the sandbox cannot read them.
func TestExecAgentProcessIsUnprivileged(t *testing.T) {
	c := newClient(t)
	sb := agentSandbox(t, c)
	res := shT(t, sb, `for p in /proc/[0-9]*; do
  case "$(tr '\0' ' ' < $p/cmdline 2>/dev/null)" in "/run/swebox/agent serve "*) pid=${p#/proc/};; esac
done
grep -E '^(Uid|Gid|CapEff|CapPrm|CapBnd|NoNewPrivs)' /proc/$pid/status
cat /proc/$pid/environ >/dev/null 2>&1 || echo environ unreadable`)
	require.Equal(t, 0, res.ExitCode, res.Stderr.String())
	assert.Equal(t, "Uid:\t1000\t1000\t1000\t1000\nGid:\t1000\t1000\t1000\t1000\n"+
		"CapPrm:\t0000000000000000\nCapEff:\t0000000000000000\nCapBnd:\t0000000000000000\nNoNewPrivs:\t1\n"+
		"environ unreadable\n", res.Stdout.String())

	if os.Getuid() == 0 {
		pid := agentHostPid(t, c, sb)
		environ, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
		require.NoError(t, err)
		var names []string
		vars := strings.Split(strings.TrimRight(string(environ), "\x00"), "\x00")
		for _, kv := range vars {
			name, _, _ := strings.Cut(kv, "=")
			names = append(names, name)
		}
		sort.Strings(names)
		// The same variables as the engine's exec sees; the exec's marker
		// replaces the sandbox's main one, which the agent carries.
		engine := createT(t, newClient(t, sandbox.WithExecAgent(false)), sandbox.Spec{Policy: sandbox.AllowAll()})
		env := shT(t, engine, `env | cut -d= -f1 | sort | tr '\n' ' '`).Stdout.String()
		assert.Equal(t, env, strings.Join(names, " ")+" ", "the agent's environment is the sandbox's")
		for name, s := range map[string]*sandbox.Sandbox{"agent": sb, "engine": engine} {
			out := shT(t, s, `echo "$HOSTNAME"; cat /proc/sys/kernel/hostname`).Stdout.String()
			line, rest, _ := strings.Cut(out, "\n")
			assert.Equal(t, line+"\n", rest, "HOSTNAME is the sandbox's hostname over the %s's exec", name)
		}
		assert.Contains(t, vars, "SWEBOX_EXEC=main", "the agent carries the main process's marker")
		fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
		require.NoError(t, err)
		kinds := map[string]bool{}
		for _, fd := range fds {
			target, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name()))
			if err == nil && !strings.HasPrefix(target, "/sys/fs/cgroup/cpu/") {
				kind, _, _ := strings.Cut(target, ":")
				kinds[kind] = true
			}
		}
		assert.Equal(t, map[string]bool{"anon_inode": true, "pipe": true, "socket": true}, kinds,
			"the agent has no file open but the CPU quota files Go's runtime watches, only its stdio (its input is the host's lease, lease.go), sockets and pipes")
	}

	hostBin, err := os.ReadFile(agentBinaryOnHost(t, sb))
	require.NoError(t, err)
	before := sha256.Sum256(hostBin)
	res = shT(t, sb, "cp /bin/true /run/swebox/agent 2>/dev/null || echo refused; (true > /run/swebox/agent) 2>/dev/null || echo refused")
	assert.Equal(t, "refused\nrefused\n", res.Stdout.String())
	hostBin, err = os.ReadFile(agentBinaryOnHost(t, sb))
	require.NoError(t, err)
	assert.Equal(t, before, sha256.Sum256(hostBin))
}

// agentHostPid returns the host pid of a sandbox's agent: the descendant of
// the container's first process that runs the agent binary.
func agentHostPid(t *testing.T, c *sandbox.Client, sb *sandbox.Sandbox) int {
	t.Helper()
	info, err := sandbox.EngineOf(c).ContainerInspect(context.Background(), sb.ID())
	require.NoError(t, err)
	queue := []int{info.State.Pid}
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		if cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid)); err == nil && strings.HasPrefix(string(cmdline), "/run/swebox/agent\x00serve\x00") {
			return pid
		}
		tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
		for _, f := range tasks {
			b, _ := os.ReadFile(f)
			for _, field := range strings.Fields(string(b)) {
				if child, err := strconv.Atoi(field); err == nil {
					queue = append(queue, child)
				}
			}
		}
	}
	t.Fatal("no agent process under the container's first process")
	return 0
}

// agentBinaryOnHost finds the host file mounted at /run/swebox/agent.
func agentBinaryOnHost(t *testing.T, sb *sandbox.Sandbox) string {
	t.Helper()
	info := shT(t, sb, "cat /proc/self/mountinfo").Stdout.String()
	for _, line := range strings.Split(info, "\n") {
		if f := strings.Fields(line); len(f) > 4 && f[4] == "/run/swebox/agent" {
			cache, err := os.UserCacheDir()
			require.NoError(t, err)
			return filepath.Join(cache, "swebox", filepath.Base(f[3]))
		}
	}
	t.Fatal("no agent mount")
	return ""
}

const killAgent = `for p in /proc/[0-9]*; do
  case "$(tr '\0' ' ' < $p/cmdline 2>/dev/null)" in "/run/swebox/agent serve "*) kill -9 ${p#/proc/};; esac
done`

// TestExecAgentKilledFromInsideFallsBackToTheEngine: a background process
// that kills the agent between commands only costs its sandbox the speed.
func TestExecAgentKilledFromInsideFallsBackToTheEngine(t *testing.T) {
	c := newClient(t)
	sb := agentSandbox(t, c)
	res := shT(t, sb, "(sleep 0.3; "+killAgent+") >/dev/null 2>&1 &")
	require.Equal(t, 0, res.ExitCode, res.Stderr.String())
	time.Sleep(time.Second)
	res = execT(t, sb, sandbox.ExecRequest{Cmd: []string{"sh", "-c", "echo back; exit 4"}, Timeout: 30 * time.Second})
	assert.Equal(t, 4, res.ExitCode)
	assert.Equal(t, "back\n", res.Stdout.String())
	assert.False(t, sb.UsesExecAgent())
}

// TestExecAgentKilledByItsCommand: a command that kills the agent it runs
// under could outlive any timeout, so the container is killed and the
// sandbox refuses further commands.
func TestExecAgentKilledByItsCommand(t *testing.T) {
	c := newClient(t)
	sb := agentSandbox(t, c)
	_, err := sb.Shell(context.Background(), killAgent+"; sleep 1000", sandbox.ExecRequest{Timeout: time.Minute})
	require.ErrorIs(t, err, sandbox.ErrUnusable)
	_, err = sb.Exec(context.Background(), sandbox.ExecRequest{Cmd: []string{"true"}})
	require.ErrorIs(t, err, sandbox.ErrUnusable)
	require.Eventually(t, func() bool {
		// Killed, the engine removes it (a leased sandbox).
		info, err := sandbox.EngineOf(c).ContainerInspect(context.Background(), sb.ID())
		return cerrdefs.IsNotFound(err) || err == nil && info.State != nil && !info.State.Running
	}, 30*time.Second, 100*time.Millisecond, "the container is killed")
}

// agentSockDir returns the host directory mounted at the agent's socket
// directory in a sandbox.
func agentSockDir(t *testing.T, c *sandbox.Client, sb *sandbox.Sandbox) string {
	t.Helper()
	info, err := sandbox.EngineOf(c).ContainerInspect(context.Background(), sb.ID())
	require.NoError(t, err)
	for _, m := range info.Mounts {
		if m.Destination == "/run/swebox/sock" {
			return m.Source
		}
	}
	t.Fatal("no agent socket mount")
	return ""
}

// agentDir returns the host directory of a sandbox's agent, which holds its
// socket directory and its socket.
func agentDir(t *testing.T, c *sandbox.Client, sb *sandbox.Sandbox) string {
	t.Helper()
	return filepath.Dir(agentSockDir(t, c, sb))
}

// TestPruneRemovesAgentDirectoriesWithTheirSandboxes: Prune removes the
// socket directory of each sandbox it removes, and no other: a narrower
// Prune leaves other sandboxes' agents working.
func TestPruneRemovesAgentDirectoriesWithTheirSandboxes(t *testing.T) {
	c := newClient(t)
	ctx := context.Background()
	keep := agentSandbox(t, c)
	gone, err := c.Create(ctx, sandbox.Spec{Image: testImage(), Policy: sandbox.AllowAll(), Labels: map[string]string{"swebox.test": "gone"}})
	require.NoError(t, err)
	require.True(t, gone.UsesExecAgent())
	keepDir, goneDir := agentDir(t, c, keep), agentDir(t, c, gone)

	pr, err := c.Prune(ctx, sandbox.PruneRequest{Labels: map[string]string{"swebox.test": "gone"}})
	require.NoError(t, err)
	assert.Equal(t, 1, pr.Containers)
	_, err = os.Stat(goneDir)
	assert.ErrorIs(t, err, os.ErrNotExist)
	_, err = os.Stat(keepDir)
	require.NoError(t, err)
	res := execT(t, keep, sandbox.ExecRequest{Cmd: []string{"true"}})
	assert.Positive(t, res.Usage.MaxRSS, "the other sandbox still runs commands through its agent")
	assert.True(t, keep.UsesExecAgent())

	// A whole-session prune, as after a crash, removes the rest.
	_, err = c.Prune(ctx, sandbox.PruneRequest{})
	require.NoError(t, err)
	_, err = os.Stat(keepDir)
	assert.ErrorIs(t, err, os.ErrNotExist)
}

// forkToTheLimitPy forks children that wait until a fork is refused, then
// prints how many it made and why the next one was refused, and the
// threads of its parent and grandparent (the agent's shim and the agent,
// or the engine's exec's processes). Then it ends the children.
const forkToTheLimitPy = `
import os, signal, sys
def status(pid):
    return dict(l.split(":", 1) for l in open("/proc/%d/status" % pid).read().splitlines() if ":" in l)
kids = []
while True:
    try:
        pid = os.fork()
    except OSError as e:
        print(len(kids), e.strerror)
        if os.getppid() == 0:  # the engine's exec: started from outside
            print(0, 0)
        else:
            parent = status(os.getppid())
            grandparent = status(int(parent["PPid"]))
            print(grandparent["Threads"].strip(), parent["Threads"].strip())
        break
    if pid == 0:
        signal.pause()
        os._exit(0)
    kids.append(pid)
for k in kids:
    os.kill(k, signal.SIGKILL)
for k in kids:
    os.waitpid(k, 0)
`

// TestProcessLimitIsTheSameOverBothTransports: a command that forks until
// the sandbox's process limit refuses gets as many processes through the
// agent as through the engine's exec, sees the same refusal, and the
// sandbox works afterwards: the agent's threads and the command's shim's
// are added to the limit the caller set. The Go runtime may start a
// thread more than the agent or shim make on purpose (AgentTasks,
// ShimTasks); the command then has that many fewer, which the test counts.
func TestProcessLimitIsTheSameOverBothTransports(t *testing.T) {
	const limit = 24
	forEachTransport(t, func(t *testing.T, c *sandbox.Client) {
		sb := createT(t, c, sandbox.Spec{Limits: sandbox.Limits{PidsLimit: limit}, Policy: sandbox.AllowAll()})
		for round := range 3 {
			res := execT(t, sb, sandbox.ExecRequest{Cmd: []string{"python3", "-c", forkToTheLimitPy}, Timeout: 2 * time.Minute})
			require.Equal(t, 0, res.ExitCode, "round %d: %s", round, res.Stderr.String())
			lines := strings.Split(strings.TrimSpace(res.Stdout.String()), "\n")
			require.Len(t, lines, 2, "round %d: output %q", round, res.Stdout.String())
			n, reason, _ := strings.Cut(lines[0], " ")
			count, err := strconv.Atoi(n)
			require.NoError(t, err, "round %d: output %q", round, res.Stdout.String())
			assert.Equal(t, "Resource temporarily unavailable", reason, "round %d", round)
			t.Logf("round %d: %d processes before the limit refused; threads of the command's grandparent and parent: %s", round, count, lines[1])
			// The sandbox's init, its main process, the idle sleep (or
			// the agent in its place) and python take four of the limit.
			want := limit - 4
			if sb.UsesExecAgent() {
				var agentThreads, shimThreads int
				_, err := fmt.Sscanf(lines[1], "%d %d", &agentThreads, &shimThreads)
				require.NoError(t, err)
				assert.GreaterOrEqual(t, agentThreads, execagent.AgentTasks, "round %d: the agent makes its threads before it listens", round)
				assert.GreaterOrEqual(t, shimThreads, execagent.ShimTasks, "round %d: the shim makes its threads before the command", round)
				want -= agentThreads - execagent.AgentTasks + shimThreads - execagent.ShimTasks
			}
			assert.Equal(t, want, count, "round %d: processes a command may make", round)
		}
		after := execT(t, sb, sandbox.ExecRequest{Cmd: []string{"echo", "after"}})
		assert.Equal(t, "after\n", after.Stdout.String())
	})
}

// TestExecAgentFailureIsAnError: when the agent cannot learn how a
// command ended (here the command kills its shim, so the command's status
// is lost), Exec returns an error, never a made-up exit code.
func TestExecAgentFailureIsAnError(t *testing.T) {
	c := newClient(t)
	sb := agentSandbox(t, c)
	res, err := sb.Shell(context.Background(), "kill -9 $PPID; sleep 1", sandbox.ExecRequest{Timeout: time.Minute})
	require.Error(t, err, "result %+v", res)
	assert.ErrorIs(t, err, sandbox.ErrUnusable)
	assert.Contains(t, err.Error(), "shim is gone")
	assert.Contains(t, err.Error(), "signal killed")
}

// TestExecAgentCannotStartIsAnError: a command the agent cannot start
// because the sandbox's process slots are all taken (by processes an
// earlier command left behind) is an error that says so.
func TestExecAgentCannotStartIsAnError(t *testing.T) {
	c := newClient(t)
	sb := createT(t, c, sandbox.Spec{Limits: sandbox.Limits{PidsLimit: 16}, Policy: sandbox.AllowAll()})
	require.True(t, sb.UsesExecAgent())
	// A process that outlives the command takes every slot that frees.
	leave := `
import os, signal, sys, time
if os.fork() != 0:
    sys.exit(0)
os.setsid()
os.close(1); os.close(2)
while True:
    try:
        if os.fork() == 0:
            signal.pause()
    except OSError:
        time.sleep(0.001)
`
	res := execT(t, sb, sandbox.ExecRequest{Cmd: []string{"python3", "-c", leave}, Timeout: time.Minute})
	require.Equal(t, 0, res.ExitCode, res.Stderr.String())
	time.Sleep(time.Second) // the slots the command's shim freed are taken
	res, err := sb.Exec(context.Background(), sandbox.ExecRequest{Cmd: []string{"echo", "hi"}})
	require.Error(t, err, "result %+v", res)
	assert.Contains(t, err.Error(), "resource temporarily unavailable")
	assert.Contains(t, err.Error(), `exec "echo" through the exec agent`)
}
