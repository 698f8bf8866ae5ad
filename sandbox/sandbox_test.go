package sandbox_test

import (
	"archive/tar"
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/network"
	"github.com/docker/docker/pkg/stdcopy"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/internal/testenv"
	"github.com/swebox/swebox/sandbox"
	"github.com/swebox/swebox/sandbox/internal/execagent"
)

func TestExecResults(t *testing.T) { forEachExecTransport(t, testExecResults) }

func testExecResults(t *testing.T, c *sandbox.Client, kube bool) {
	ws := t.TempDir()
	require.NoError(t, os.Chmod(ws, 0o777))
	sb := createT(t, c, sandbox.Spec{Workspace: ws, Env: map[string]string{"SPEC_VAR": "spec"}, Policy: sandbox.AllowAll()})

	type testCase struct {
		name       string
		req        sandbox.ExecRequest
		wantCode   int
		wantStdout string
		wantStderr string
	}
	for _, tc := range []testCase{
		{name: "exit code and split streams", req: sandbox.ExecRequest{Cmd: []string{"sh", "-c", "echo out; echo err >&2; exit 3"}}, wantCode: 3, wantStdout: "out\n", wantStderr: "err\n"},
		{name: "argv is not parsed by a shell", req: sandbox.ExecRequest{Cmd: []string{"echo", "$HOME", "a;b", "'q'"}}, wantStdout: "$HOME a;b 'q'\n"},
		{name: "env from spec and request", req: sandbox.ExecRequest{Cmd: []string{"sh", "-c", "echo $SPEC_VAR $REQ_VAR $HOME"}, Env: map[string]string{"REQ_VAR": "req"}}, wantStdout: "spec req /tmp/home\n"},
		{name: "working dir defaults to the workspace", req: sandbox.ExecRequest{Cmd: []string{"pwd"}}, wantStdout: "/workspace\n"},
		{name: "working dir per request", req: sandbox.ExecRequest{Cmd: []string{"pwd"}, WorkingDir: "/tmp"}, wantStdout: "/tmp\n"},
		{name: "stdin", req: sandbox.ExecRequest{Cmd: []string{"cat"}, Stdin: strings.NewReader("from stdin")}, wantStdout: "from stdin"},
		{name: "home exists and is writable", req: sandbox.ExecRequest{Cmd: []string{"sh", "-c", "touch $HOME/x && echo ok"}}, wantStdout: "ok\n"},
		{name: "killed by signal", req: sandbox.ExecRequest{Cmd: []string{"sh", "-c", "kill -TERM $$"}}, wantCode: 143},
		// The output ends long before the command: its exit code is still
		// the one it exits with.
		{name: "streams closed before the exit", req: sandbox.ExecRequest{Cmd: []string{"sh", "-c", "echo early; exec >&- 2>&-; sleep 1; exit 7"}}, wantCode: 7, wantStdout: "early\n"},
		// A command that cannot start exits as under a shell, 127 for a
		// program not found and 126 otherwise, with the reason on stderr:
		// never the runtime's message on stdout with 126 for all.
		{name: "missing command", req: sandbox.ExecRequest{Cmd: []string{"no-such-command"}}, wantCode: 127,
			wantStderr: "exec: \"no-such-command\": executable file not found in $PATH\n"},
		{name: "missing program path", req: sandbox.ExecRequest{Cmd: []string{"/no/such"}}, wantCode: 127,
			wantStderr: "exec: \"/no/such\": stat /no/such: no such file or directory\n"},
		{name: "not executable", req: sandbox.ExecRequest{Cmd: []string{"/etc/passwd"}}, wantCode: 126,
			wantStderr: "exec: \"/etc/passwd\": permission denied\n"},
		{name: "missing working dir", req: sandbox.ExecRequest{Cmd: []string{"true"}, WorkingDir: "/no/such/dir"}, wantCode: 126,
			wantStderr: "chdir to cwd (\"/no/such/dir\") set in config.json failed: no such file or directory\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := execT(t, sb, tc.req)
			if kube && !sb.UsesExecAgent() && (tc.wantCode == 126 || tc.wantCode == 127) {
				// The API server's exec starts commands under a shell
				// wrapper (a Pod has no ulimit fields), which reports a
				// command that cannot start in the shell's words, on
				// stderr; the agent's are the engine's.
				assert.Equal(t, tc.wantCode, res.ExitCode)
				assert.Empty(t, res.Stdout.String())
				what := tc.req.Cmd[0]
				if tc.req.WorkingDir != "" {
					what = tc.req.WorkingDir
				}
				assert.Contains(t, res.Stderr.String(), what)
				return
			}
			assert.Equal(t, tc.wantCode, res.ExitCode)
			assert.Equal(t, tc.wantStdout, res.Stdout.String())
			assert.Equal(t, tc.wantStderr, res.Stderr.String())
			assert.False(t, res.TimedOut)
			if tc.wantCode > 128 {
				assert.Equal(t, tc.wantCode-128, res.Signal)
			}
		})
	}

	if kube {
		// A pod's workspace is a copy: the nodes do not share the host's
		// files.
		return
	}
	// Files written in the workspace land on the host.
	res := execT(t, sb, sandbox.ExecRequest{Cmd: []string{"sh", "-c", "echo data > /workspace/out.txt"}})
	require.Equal(t, 0, res.ExitCode, res.Stderr.String())
	b, err := os.ReadFile(filepath.Join(ws, "out.txt"))
	require.NoError(t, err)
	assert.Equal(t, "data\n", string(b))
}

func TestLiveStreaming(t *testing.T) { forEachExecTransport(t, testLiveStreaming) }

func testLiveStreaming(t *testing.T, c *sandbox.Client, _ bool) {
	sb := createT(t, c, sandbox.Spec{Policy: sandbox.AllowAll()})
	var out, errw bytes.Buffer
	res := execT(t, sb, sandbox.ExecRequest{Cmd: []string{"sh", "-c", "echo a; echo b >&2; echo c"}, Stdout: &out, Stderr: &errw, OutputLimit: 2})
	assert.Equal(t, "a\nc\n", out.String(), "live writers get everything, whatever the cap")
	assert.Equal(t, "b\n", errw.String())
	assert.True(t, res.Stdout.Truncated)
}

func TestPolicyIsCheckedBeforeTheEngine(t *testing.T) {
	c := newClient(t)
	sb := createT(t, c, sandbox.Spec{})
	_, err := sb.Exec(context.Background(), sandbox.ExecRequest{Cmd: []string{"/usr/bin/curl", "http://x"}})
	var ce *sandbox.CommandError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "curl", ce.Command)
	assert.ErrorIs(t, err, sandbox.ErrCommandNotAllowed)

	_, err = sb.Shell(context.Background(), "echo hi", sandbox.ExecRequest{})
	require.ErrorIs(t, err, sandbox.ErrCommandNotAllowed, "the default test policy has no shell")
	// The error says how to change the policy, and following it works.
	assert.Contains(t, err.Error(), `Spec.Policy chooses what runs, e.g. sandbox.AllowCommands("sh", ...) or sandbox.AllowAll()`)
	withSh := createT(t, c, sandbox.Spec{Policy: sandbox.AllowCommands("sh")})
	res, err := withSh.Shell(context.Background(), "echo hi", sandbox.ExecRequest{})
	require.NoError(t, err)
	assert.Equal(t, "hi\n", res.Stdout.String())

	// A client whose engine panics on any call: a refused Run never reaches it.
	nc, err := sandbox.New(sandbox.WithDockerAPI(nilEngine{}))
	require.NoError(t, err)
	_, err = nc.Run(context.Background(), sandbox.Spec{Image: testImage()}, sandbox.ExecRequest{Cmd: []string{"bash"}})
	require.ErrorIs(t, err, sandbox.ErrCommandNotAllowed)
}

// nilEngine panics on every engine call but DaemonHost.
type nilEngine struct{ sandbox.DockerAPI }

func (nilEngine) DaemonHost() string { return "nil://" }

func TestRemoveIsIdempotentAndClosesTheSandbox(t *testing.T) {
	c := newClient(t)
	ctx := context.Background()
	sb, err := c.Create(ctx, sandbox.Spec{Image: testImage()})
	require.NoError(t, err)
	require.NoError(t, sb.Remove(ctx))
	require.NoError(t, sb.Remove(ctx))
	require.NoError(t, sb.Close())
	_, err = sb.Exec(ctx, sandbox.ExecRequest{Cmd: []string{"echo"}})
	assert.ErrorIs(t, err, sandbox.ErrClosed)
	assert.Empty(t, sessionContainers(t, c))
}

func TestStopKillAndLogs(t *testing.T) {
	c := newClient(t)
	ctx := context.Background()
	sb := createT(t, c, sandbox.Spec{})
	execT(t, sb, sandbox.ExecRequest{Cmd: []string{"echo", "running"}})
	require.NoError(t, sb.Stop(ctx, 60*time.Second))
	st, err := sb.State(ctx)
	require.NoError(t, err)
	assert.False(t, st.Running)
	assert.NotEqual(t, 137, st.ExitCode, "the keepalive ends on TERM, not by the KILL after the grace period")
	require.NoError(t, sb.Kill(ctx, "KILL"), "killing a stopped sandbox is not an error")
	out, errOut, err := sb.Logs(ctx, sandbox.LogsRequest{})
	require.NoError(t, err)
	assert.Empty(t, out.String()+errOut.String())
}

func TestRunOneShot(t *testing.T) {
	c := newClient(t)
	res, err := c.Run(context.Background(), sandbox.Spec{Image: testImage()}, sandbox.ExecRequest{
		Cmd: []string{"python3", "-c", "import sys,os; print(sys.stdin.read().upper(), os.getuid(), os.environ['K'])"},
		Env: map[string]string{"K": "v"}, Stdin: strings.NewReader("abc"),
	})
	require.NoError(t, err)
	assert.Equal(t, "ABC 1000 v\n", res.Stdout.String())
	assert.Equal(t, 0, res.ExitCode)

	res, err = c.Run(context.Background(), sandbox.Spec{Image: testImage(), Policy: sandbox.AllowAll()}, sandbox.ExecRequest{
		Cmd: []string{"sh", "-c", "echo x; setsid sleep 1000 & sleep 1000"}, Timeout: time.Second,
	})
	require.NoError(t, err)
	assert.True(t, res.TimedOut)
	assert.Equal(t, "x\n", res.Stdout.String())
	assert.Empty(t, sessionContainers(t, c), "one-shot runs always remove their container")
}

// TestRunResults: a one-shot Run reports what its command did, the same
// facts on every engine and transport: on Docker the command is the
// container's main process; on Podman it runs, over the client's
// transport, in a sandbox that idles, so that an OOM kill can be read
// (Run), and must report as Docker does. Where the engine enforces the
// process limit, the command may start as many processes as the main
// process of a container with that limit may: the limit less init and
// itself.
func TestRunResults(t *testing.T) {
	forEachTransport(t, testRunResults)
}

func testRunResults(t *testing.T, c *sandbox.Client) {
	const pids = 16
	// forks starts processes that sleep until it has as many as it may
	// (at most 64), then prints how many it started and, under the exec
	// agent, the threads of the agent and of the command's shim, which
	// count against the limit too: "0 0" for a command whose parent is
	// outside the sandbox (the engine's exec) or its init (a container's
	// main process).
	const forks = `import os, time
def threads(pid):
    st = dict(l.split(":", 1) for l in open("/proc/%d/status" % pid).read().splitlines() if ":" in l)
    return int(st["Threads"]), int(st["PPid"])
n = 0
while n < 64:
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:
        fd = os.open(os.devnull, os.O_RDWR)
        for i in (0, 1, 2):
            os.dup2(fd, i)
        time.sleep(60)
        os._exit(0)
    n += 1
print(n)
if os.getppid() in (0, 1):
    print(0, 0)
else:
    shim, agent = threads(os.getppid())
    print(threads(agent)[0], shim)
`
	type want struct {
		exit, signal   int
		stdout, stderr string
		timedOut       bool
	}
	type testCase struct {
		name   string
		spec   sandbox.Spec
		req    sandbox.ExecRequest
		want   want
		limits bool // the row shows the engine's process limit
	}
	for _, tc := range []testCase{
		{name: "exit code and streams", req: sandbox.ExecRequest{Cmd: []string{"sh", "-c", "echo out; echo err >&2; exit 3"}},
			want: want{exit: 3, stdout: "out\n", stderr: "err\n"}},
		{name: "stdin", req: sandbox.ExecRequest{Cmd: []string{"cat"}, Stdin: strings.NewReader("in\nput")},
			want: want{stdout: "in\nput"}},
		{name: "env, user and working directory", spec: sandbox.Spec{Env: map[string]string{"A": "spec"}},
			req:  sandbox.ExecRequest{Cmd: []string{"sh", "-c", "echo $A $B; id -u; pwd"}, Env: map[string]string{"B": "req"}, WorkingDir: "/tmp"},
			want: want{stdout: "spec req\n1000\n/tmp\n"}},
		{name: "killed", req: sandbox.ExecRequest{Cmd: []string{"sh", "-c", "kill -KILL $$"}}, want: want{exit: 137, signal: 9}},
		{name: "terminated", req: sandbox.ExecRequest{Cmd: []string{"sh", "-c", "kill -TERM $$"}}, want: want{exit: 143, signal: 15}},
		{name: "timeout", req: sandbox.ExecRequest{Cmd: []string{"sh", "-c", "echo started; sleep 100"}, Timeout: time.Second},
			want: want{exit: 137, signal: 9, stdout: "started\n", timedOut: true}},
		{name: "missing program", req: sandbox.ExecRequest{Cmd: []string{"no-such-program"}}, want: want{exit: 127}},
		{name: "not executable", req: sandbox.ExecRequest{Cmd: []string{"/etc/passwd"}}, want: want{exit: 126}},
		{name: "process limit", spec: sandbox.Spec{Limits: sandbox.Limits{PidsLimit: pids}}, limits: true,
			req: sandbox.ExecRequest{Cmd: []string{"python3", "-c", forks}}, want: want{stdout: fmt.Sprintf("%d\n", pids-2)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.limits && testenv.UnenforcedLimits() {
				// The engine cannot enforce the limit, and the client
				// accepts that (rootless Podman on cgroup v1): every
				// process starts.
				tc.want.stdout = "64\n"
			}
			spec := tc.spec
			spec.Image, spec.Policy = testImage(), sandbox.AllowAll()
			res, err := c.Run(context.Background(), spec, tc.req)
			require.NoError(t, err)
			got := want{exit: res.ExitCode, signal: res.Signal, stdout: res.Stdout.String(), timedOut: res.TimedOut}
			if tc.limits {
				// The agent's and the shim's threads beyond those the
				// allowance counts (the Go runtime may start one
				// more) leave the command that many fewer.
				var started, agentThreads, shimThreads int
				_, err := fmt.Sscanf(got.stdout, "%d\n%d %d", &started, &agentThreads, &shimThreads)
				require.NoError(t, err, "output %q", got.stdout)
				if agentThreads > 0 && !testenv.UnenforcedLimits() {
					tc.want.stdout = fmt.Sprintf("%d\n", pids-2-(agentThreads-execagent.AgentTasks)-(shimThreads-execagent.ShimTasks))
					t.Logf("the agent's threads %d, the shim's %d", agentThreads, shimThreads)
				}
				got.stdout = fmt.Sprintf("%d\n", started)
			}
			if tc.want.stderr != "" {
				got.stderr = res.Stderr.String()
			}
			assert.Equal(t, tc.want, got, "stderr: %q", res.Stderr.String())
			assert.False(t, res.OOMKilled)
		})
	}
	assert.Empty(t, sessionContainers(t, c), "one-shot runs remove their sandboxes")
}

// TestRemoveEndsItsExecs: a sandbox removed while commands run in it (one
// running, one whose caller gave up on it, one with a process in the
// background) leaves nothing on the host that runs or watches them: no
// process of the commands, and of the engine's own none that still does
// its work for the sandbox. On Docker the engine forgets the execs and no
// host process names the sandbox (containerd's shim). On Podman each exec
// session has a monitor (conmon) of its own that outlives the session by
// the engine's exit_command_delay (containers.conf, 5 minutes by default)
// and then runs Podman's cleanup of it: such a monitor may be left, waiting
// with no file open but its standard streams (conmon closes the others
// before it waits), attached to nothing and watching no process; any other
// process that names the sandbox is left behind. The host's state is read
// before the removal too, so that the test could fail.
func TestRemoveEndsItsExecs(t *testing.T) {
	forEachTransport(t, func(t *testing.T, c *sandbox.Client) {
		api := testenv.Docker(t, c)
		v, err := api.ServerVersion(context.Background())
		require.NoError(t, err)
		podman := false
		for _, comp := range v.Components {
			podman = podman || comp.Name == "Podman Engine"
		}
		sb := createT(t, c, sandbox.Spec{Policy: sandbox.AllowAll()})
		// The sleeps' lengths name the commands' processes on the host.
		marker := fmt.Sprint(700000000 + time.Now().UnixNano()%100000000)
		gaveUp, giveUp := context.WithCancel(context.Background())
		defer giveUp()
		started := make(chan struct{}, 3)
		w := writerFunc(func(p []byte) (int, error) { started <- struct{}{}; return len(p), nil })
		ended := make(chan error, 3)
		for i, req := range []struct {
			ctx    context.Context
			script string
		}{
			{context.Background(), "echo go; exec sleep " + marker + "1"},
			{gaveUp, "echo go; exec sleep " + marker + "2"},
			{context.Background(), "sleep " + marker + "3 & echo go; wait"},
		} {
			go func() {
				_, err := sb.Exec(req.ctx, sandbox.ExecRequest{Cmd: []string{"sh", "-c", req.script}, Stdout: w})
				ended <- fmt.Errorf("command %d: %w", i, err)
			}()
		}
		for range 3 {
			<-started
		}
		// The commands' sleeps, seen on the host: each prints before it
		// starts its sleep.
		sleeps := func() int {
			n := 0
			for _, p := range testenv.HostProcesses(marker) {
				if _, cmd, _ := strings.Cut(p, ": "); strings.HasPrefix(cmd, "sleep ") {
					n++
				}
			}
			return n
		}
		require.Eventually(t, func() bool { return sleeps() == 3 }, time.Minute, 50*time.Millisecond,
			"the commands' processes are seen on the host while they run")
		require.NotEmpty(t, testenv.HostProcesses(sb.ID()), "the engine's processes for the sandbox (its shim or monitor) are seen while it runs")
		var execIDs []string
		if !sb.UsesExecAgent() {
			if podman {
				assert.NotEmpty(t, working(t, podmanMonitors(sb.ID())), "the execs' monitors are seen while the commands run")
			} else {
				ci, err := api.ContainerInspect(context.Background(), sb.ID())
				require.NoError(t, err)
				execIDs = ci.ExecIDs
				assert.NotEmpty(t, execIDs, "the engine lists the running execs")
			}
		}
		giveUp()

		require.NoError(t, sb.Remove(context.Background()))
		for range 3 {
			<-ended // each Exec returns, whatever it says
		}
		assert.Eventually(t, func() bool { return len(testenv.HostProcesses(marker)) == 0 }, time.Minute, 100*time.Millisecond,
			"no process of the commands is left")
		for _, id := range execIDs {
			_, err := api.ContainerExecInspect(context.Background(), id)
			assert.True(t, cerrdefs.IsNotFound(err), "the engine forgot exec %s: %v", id, err)
		}
		var left []string
		assert.Eventually(t, func() bool {
			left = testenv.HostProcesses(sb.ID())
			if podman {
				left = working(t, left)
			}
			return len(left) == 0
		}, time.Minute, 100*time.Millisecond, "no process that names the sandbox works for it")
		assert.Empty(t, left)
		if podman {
			t.Logf("%d exec monitors wait out the engine's exit_command_delay", len(podmanMonitors(sb.ID())))
		}
	})
}

// podmanMonitors lists the host processes (testenv.HostProcesses) of
// Podman's monitors (conmon) of the container id.
func podmanMonitors(id string) []string {
	var mons []string
	for _, p := range testenv.HostProcesses(id) {
		if _, cmd, _ := strings.Cut(p, ": "); strings.HasPrefix(cmd, "/usr/bin/conmon ") && strings.Contains(cmd, " -c "+id+" ") {
			mons = append(mons, p)
		}
	}
	return mons
}

// working keeps, of host processes (testenv.HostProcesses), those that are
// not a Podman monitor waiting to run its exit command: a conmon process
// with no file open but its standard streams.
func working(t *testing.T, procs []string) []string {
	t.Helper()
	var kept []string
	for _, p := range procs {
		pid, cmd, _ := strings.Cut(p, ": ")
		if strings.Contains(cmd, "conmon ") {
			fds, err := os.ReadDir(filepath.Join("/proc", pid, "fd"))
			if errors.Is(err, fs.ErrNotExist) {
				continue // it has ended
			}
			require.NoError(t, err)
			if len(fds) <= 3 {
				continue
			}
		}
		kept = append(kept, p)
	}
	return kept
}

// panicOnStart is the real engine, except that starting a container panics,
// in the caller's goroutine, after the container was created.
type panicOnStart struct{ sandbox.DockerAPI }

func (panicOnStart) ContainerStart(context.Context, string, container.StartOptions) error {
	panic("boom")
}

func TestRunTearsDownOnPanic(t *testing.T) {
	c := newClient(t)
	pc, err := sandbox.New(sandbox.WithDockerAPI(panicOnStart{sandbox.EngineOf(c)}), sandbox.WithSession(c.Session()),
		sandbox.WithUnenforcedLimits(testenv.UnenforcedLimits()))
	require.NoError(t, err)
	func() {
		defer func() { assert.Equal(t, "boom", recover(), "the panic reaches the caller") }()
		_, _ = pc.Run(context.Background(), sandbox.Spec{Image: testImage()}, sandbox.ExecRequest{Cmd: []string{"echo", "x"}})
	}()
	assert.Empty(t, sessionContainers(t, c))
}

// brokenWriter fails every write; a failing live writer must not stop the
// collection of output.
type brokenWriter struct{}

func (brokenWriter) Write([]byte) (int, error) { return 0, errors.New("broken writer") }

func TestBrokenLiveWriter(t *testing.T) {
	c := newClient(t)
	res, err := c.Run(context.Background(), sandbox.Spec{Image: testImage()}, sandbox.ExecRequest{Cmd: []string{"echo", "x"}, Stdout: brokenWriter{}})
	require.NoError(t, err)
	assert.Equal(t, "x\n", res.Stdout.String())
}

func TestEngineUnreachable(t *testing.T) {
	c, err := sandbox.New(sandbox.WithHost("unix:///nonexistent/docker.sock"))
	require.NoError(t, err)
	_, err = c.Create(context.Background(), sandbox.Spec{Image: "x"})
	require.ErrorIs(t, err, sandbox.ErrEngineUnreachable)
	var ee *sandbox.EngineError
	require.ErrorAs(t, err, &ee)
	assert.Equal(t, "unix:///nonexistent/docker.sock", ee.Host)
	assert.Contains(t, err.Error(), "unix:///nonexistent/docker.sock")
	assert.NotContains(t, err.Error(), "systemctl", "advice belongs to the commands, not the library")
}

func TestMissingImage(t *testing.T) {
	c := newClient(t)
	err := c.EnsureImage(context.Background(), sandbox.EnsureImageRequest{Image: "swebox-test/missing:nope"})
	var ie *sandbox.ImageError
	require.ErrorAs(t, err, &ie)
	assert.Equal(t, "swebox-test/missing:nope", ie.Image)
	assert.ErrorIs(t, err, sandbox.ErrImageNotFound)
	require.NoError(t, c.EnsureImage(context.Background(), sandbox.EnsureImageRequest{Image: testImage()}))
	_, err = c.Create(context.Background(), sandbox.Spec{Image: "swebox-test/missing:nope"})
	require.ErrorIs(t, err, sandbox.ErrImageNotFound)
}

func TestImportImage(t *testing.T) {
	c := newClient(t)
	ctx := context.Background()
	// A root filesystem of one file: the engine accepts it and applies the
	// changes and the package's labels.
	ref := "swebox-test/imported:" + strings.ToLower(c.Session()[len(c.Session())-6:])
	require.NoError(t, c.ImportImage(ctx, sandbox.ImportRequest{Source: tarOf(t, map[string]string{"etc/hello": "hi"}), Ref: ref, Changes: []string{`CMD ["/bin/true"]`}}))
	t.Cleanup(func() { require.NoError(t, c.RemoveImage(context.Background(), ref)) })
	ok, err := c.HasImage(ctx, ref)
	require.NoError(t, err)
	assert.True(t, ok)
	info, err := c.InspectImage(ctx, ref)
	require.NoError(t, err)
	assert.Equal(t, "true", info.Labels[sandbox.LabelManaged])
	assert.Equal(t, []string{"/bin/true"}, info.Cmd)
	assert.True(t, strings.HasPrefix(info.ID, "sha256:"), info.ID)
}

func TestCopyInAndOut(t *testing.T) {
	c := newClient(t)
	ctx := context.Background()
	ws := t.TempDir()
	require.NoError(t, os.Chmod(ws, 0o777))
	sb := createT(t, c, sandbox.Spec{Workspace: ws, Policy: sandbox.AllowAll()})

	src := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(src, "pkg", "sub"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(src, "pkg", "a.py"), []byte("print(1)\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(src, "pkg", "sub", "run.sh"), []byte("#!/bin/sh\necho run\n"), 0o755))
	require.NoError(t, os.Symlink("a.py", filepath.Join(src, "pkg", "link.py")))

	for _, dest := range []string{"/workspace", "/tmp"} {
		t.Run("into "+dest, func(t *testing.T) {
			res, err := sb.CopyIn(ctx, sandbox.CopyInRequest{HostPath: filepath.Join(src, "pkg"), Dest: dest})
			require.NoError(t, err)
			assert.Equal(t, 2, res.Files)
			out := execT(t, sb, sandbox.ExecRequest{Cmd: []string{"sh", "-c", "cd " + dest + "/pkg && cat link.py && ./sub/run.sh && touch a.py && echo writable"}})
			require.Equal(t, 0, out.ExitCode, out.Stderr.String())
			assert.Equal(t, "print(1)\nrun\nwritable\n", out.Stdout.String())

			host := t.TempDir()
			res, err = sb.CopyOut(ctx, sandbox.CopyOutRequest{Src: dest + "/pkg", Dest: host})
			require.NoError(t, err)
			assert.Equal(t, 2, res.Files)
			b, err := os.ReadFile(filepath.Join(host, "pkg", "link.py"))
			require.NoError(t, err)
			assert.Equal(t, "print(1)\n", string(b))
			fi, err := os.Stat(filepath.Join(host, "pkg", "sub", "run.sh"))
			require.NoError(t, err)
			assert.Equal(t, os.FileMode(0o755), fi.Mode().Perm())
		})
	}

	t.Run("symlink to a host path is refused", func(t *testing.T) {
		shT(t, sb, "mkdir -p /workspace/evil && ln -sf /etc/passwd /workspace/evil/passwd && ln -sf /etc/passwd /workspace/link")
		for _, src := range []string{"/workspace/link", "/workspace/evil"} {
			host := t.TempDir()
			_, err := sb.CopyOut(ctx, sandbox.CopyOutRequest{Src: src, Dest: host})
			require.ErrorIs(t, err, sandbox.ErrUnsafePath, src)
			_, err = os.Lstat(filepath.Join(host, "link"))
			assert.True(t, os.IsNotExist(err))
		}
	})

	t.Run("contents only, escaping symlinks kept on request", func(t *testing.T) {
		repoDir := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(repoDir, "setup.py"), []byte("x = 1\n"), 0o644))
		require.NoError(t, os.Symlink("/usr/share/dict/words", filepath.Join(repoDir, "words")))
		shT(t, sb, "mkdir -p /workspace/repo")
		_, err := sb.CopyIn(ctx, sandbox.CopyInRequest{HostPath: repoDir, Dest: "/workspace/repo", ContentsOnly: true})
		require.ErrorIs(t, err, sandbox.ErrUnsafePath, "refused by default")
		_, err = sb.CopyIn(ctx, sandbox.CopyInRequest{HostPath: repoDir, Dest: "/workspace/repo", ContentsOnly: true, KeepEscapingSymlinks: true})
		require.NoError(t, err)
		out := shT(t, sb, "cat /workspace/repo/setup.py; readlink /workspace/repo/words")
		assert.Equal(t, "x = 1\n/usr/share/dict/words\n", out.Stdout.String())
	})

	// A missing file is fs.ErrNotExist wherever it would be: the root
	// layer and the workspace (the engine's archive endpoint), the tmpfs
	// of /tmp and HOME (tar in the sandbox), and under missing directories.
	t.Run("missing file", func(t *testing.T) {
		for _, src := range []string{"/etc/no-such-file", "/no-such-dir/file", "/workspace/no-such-file", "/workspace/no/such/file",
			"/tmp/no-such-file", "/tmp/no-such-dir/file", "/tmp/home/no-such-file", "/no-such-file"} {
			host := t.TempDir()
			_, err := sb.CopyOut(ctx, sandbox.CopyOutRequest{Src: src, Dest: host})
			require.Error(t, err, src)
			assert.ErrorIs(t, err, fs.ErrNotExist, "%s: %v", src, err)
			var pe *fs.PathError
			if assert.ErrorAs(t, err, &pe, src) {
				assert.Equal(t, src, pe.Path)
			}
			entries, rerr := os.ReadDir(host)
			require.NoError(t, rerr)
			assert.Empty(t, entries, "nothing written for %s", src)
		}
	})

	t.Run("byte cap", func(t *testing.T) {
		shT(t, sb, "head -c 100000 /dev/zero > /workspace/big")
		_, err := sb.CopyOut(ctx, sandbox.CopyOutRequest{Src: "/workspace/big", Dest: t.TempDir(), MaxBytes: 1000})
		require.ErrorIs(t, err, sandbox.ErrCopyLimit)
		_, err = sb.CopyIn(ctx, sandbox.CopyInRequest{Tar: tarOf(t, map[string]string{"f": strings.Repeat("x", 2000)}), Dest: "/workspace", MaxBytes: 1000})
		require.ErrorIs(t, err, sandbox.ErrCopyLimit)
	})

	t.Run("unsafe entries are refused on the way in", func(t *testing.T) {
		for name, hdr := range map[string]*tar.Header{
			"dotdot":        {Name: "../escape", Typeflag: tar.TypeReg, Mode: 0o644},
			"absolute":      {Name: "/etc/escape", Typeflag: tar.TypeReg, Mode: 0o644},
			"symlink out":   {Name: "l", Typeflag: tar.TypeSymlink, Linkname: "../../etc"},
			"symlink abs":   {Name: "l", Typeflag: tar.TypeSymlink, Linkname: "/etc"},
			"hardlink out":  {Name: "h", Typeflag: tar.TypeLink, Linkname: "../x"},
			"under symlink": nil,
		} {
			var buf bytes.Buffer
			tw := tar.NewWriter(&buf)
			if hdr == nil {
				require.NoError(t, tw.WriteHeader(&tar.Header{Name: "d", Typeflag: tar.TypeSymlink, Linkname: "."}))
				hdr = &tar.Header{Name: "d/f", Typeflag: tar.TypeReg, Mode: 0o644}
			}
			require.NoError(t, tw.WriteHeader(hdr))
			require.NoError(t, tw.Close())
			_, err := sb.CopyIn(ctx, sandbox.CopyInRequest{Tar: &buf, Dest: "/workspace"})
			require.ErrorIs(t, err, sandbox.ErrUnsafePath, name)
		}
	})
}

// TestVolumeFilledFromImage: an anonymous volume over a directory of the
// image starts with the image's files and is writable while the root
// filesystem stays read-only (the layout of the official SWE-bench images).
func TestVolumeFilledFromImage(t *testing.T) {
	c := newClient(t)
	ctx := context.Background()
	// An image with a repository at /testbed, owned by root as in the
	// official images.
	ref := "swebox-test/testbed:" + strings.ToLower(c.Session()[len(c.Session())-6:])
	df := "FROM " + testImage() + "\nRUN mkdir /testbed && echo base > /testbed/file.txt\nWORKDIR /testbed\n"
	_, err := c.BuildImage(ctx, sandbox.BuildRequest{Context: tarOf(t, map[string]string{"Dockerfile": df}), Tags: []string{ref}, NetworkMode: "none"})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, c.RemoveImage(context.Background(), ref)) })

	spec := sandbox.Spec{
		Image: ref, User: "0:0", WorkingDir: "/testbed", Policy: sandbox.AllowAll(),
		Mounts: []sandbox.Mount{{Type: "volume", Target: "/testbed"}}, Relax: sandbox.Relax{Root: true},
	}
	sb := createT(t, c, spec)
	res := execT(t, sb, sandbox.ExecRequest{Cmd: []string{"sh", "-c", "cat file.txt && echo new >> file.txt && cat file.txt && id -u && touch /etc/x"}})
	assert.Equal(t, "base\nbase\nnew\n0\n", res.Stdout.String())
	assert.Contains(t, res.Stderr.String(), "Read-only file system", "only /testbed is writable")
}

// lossyCreate models a create request whose caller gives up while the
// engine is creating the container: the container exists, but a client that
// passed the caller's context only hears that the context ended.
type lossyCreate struct {
	sandbox.DockerAPI
	cancel context.CancelFunc
}

func (l lossyCreate) ContainerCreate(ctx context.Context, cfg *container.Config, hc *container.HostConfig, nc *network.NetworkingConfig, p *ocispec.Platform, name string) (container.CreateResponse, error) {
	l.cancel()
	resp, err := l.DockerAPI.ContainerCreate(context.Background(), cfg, hc, nc, p, name)
	if ctx.Err() != nil {
		return container.CreateResponse{}, ctx.Err()
	}
	return resp, err
}

func TestCancelDuringCreateLeavesNothing(t *testing.T) {
	c := newClient(t)
	for _, name := range []string{"Create", "Run"} {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			lc, err := sandbox.New(sandbox.WithDockerAPI(lossyCreate{DockerAPI: sandbox.EngineOf(c), cancel: cancel}), sandbox.WithSession(c.Session()))
			require.NoError(t, err)
			if name == "Create" {
				_, err = lc.Create(ctx, sandbox.Spec{Image: testImage()})
			} else {
				_, err = lc.Run(ctx, sandbox.Spec{Image: testImage()}, sandbox.ExecRequest{Cmd: []string{"echo"}})
			}
			require.ErrorIs(t, err, context.Canceled)
			assert.Empty(t, sessionContainers(t, c), "the container the engine created was removed")
		})
	}
}

// stopsBeforeExecStart models the engine's race between a container that
// is stopping and an exec: the engine accepted the exec while the container
// still ran, then the container stopped before the exec's process could
// start. Once armed, the container is really killed; the engine's answer to
// the start, a stream carrying the runtime's refusal, is reproduced as the
// engine sends it. The engine usually forgets the exec with the container;
// with keepsExec it still reports it, never started, as it did in a CI run.
type stopsBeforeExecStart struct {
	sandbox.DockerAPI
	armed     *atomic.Bool
	keepsExec bool
}

func (f stopsBeforeExecStart) ContainerExecInspect(ctx context.Context, execID string) (container.ExecInspect, error) {
	info, err := f.DockerAPI.ContainerExecInspect(ctx, execID)
	if err != nil && f.armed.Load() && f.keepsExec && cerrdefs.IsNotFound(err) {
		return container.ExecInspect{ExecID: execID, Running: false, Pid: 0, ExitCode: 0}, nil
	}
	return info, err
}

func (f stopsBeforeExecStart) ContainerExecAttach(ctx context.Context, execID string, opts container.ExecAttachOptions) (types.HijackedResponse, error) {
	if !f.armed.Load() {
		return f.DockerAPI.ContainerExecAttach(ctx, execID, opts)
	}
	info, err := f.DockerAPI.ContainerExecInspect(ctx, execID)
	if err != nil {
		return types.HijackedResponse{}, err
	}
	if err := f.DockerAPI.ContainerKill(ctx, info.ContainerID, "KILL"); err != nil {
		return types.HijackedResponse{}, err
	}
	waitC, errC := f.DockerAPI.ContainerWait(ctx, info.ContainerID, container.WaitConditionNotRunning)
	select {
	case <-waitC:
	case err := <-errC:
		return types.HijackedResponse{}, err
	}
	engine, caller := net.Pipe()
	go func() {
		w := stdcopy.NewStdWriter(engine, stdcopy.Stdout)
		_, _ = w.Write([]byte("cannot exec in a stopped state: unknown\r\n"))
		_ = engine.Close()
	}()
	return types.HijackedResponse{Conn: caller, Reader: bufio.NewReader(caller)}, nil
}

// TestExecInStoppedContainer: a command that cannot start because the
// container has stopped is an infrastructure error, never a result that
// reads as a command that printed the engine's message and exited 0.
func TestExecInStoppedContainer(t *testing.T) { forEachTransport(t, testExecInStoppedContainer) }

func testExecInStoppedContainer(t *testing.T, c *sandbox.Client) {
	echo := sandbox.ExecRequest{Cmd: []string{"echo", "back"}}

	t.Run("stopped before the exec", func(t *testing.T) {
		sb := createT(t, c, sandbox.Spec{Policy: sandbox.AllowAll()})
		require.NoError(t, sb.Kill(context.Background(), "KILL"))
		_, err := sb.Exec(context.Background(), echo)
		require.ErrorIs(t, err, sandbox.ErrNotRunning)
		assert.Contains(t, err.Error(), "exited with status 137", "the error tells how the sandbox ended")
	})

	t.Run("main process ended after writing", func(t *testing.T) {
		sb := createT(t, c, sandbox.Spec{Policy: sandbox.AllowAll()})
		res, err := sb.Exec(context.Background(), sandbox.ExecRequest{Cmd: []string{"sh", "-c", "echo farewell >/proc/1/fd/2"}})
		require.NoError(t, err)
		require.Zero(t, res.ExitCode, res.Stderr.String())
		// The main process ends with status 0 on TERM.
		require.NoError(t, sb.Kill(context.Background(), "TERM"))
		require.Eventually(t, func() bool {
			st, err := sb.State(context.Background())
			return err == nil && !st.Running
		}, 30*time.Second, 50*time.Millisecond)
		_, err = sb.Exec(context.Background(), echo)
		require.ErrorIs(t, err, sandbox.ErrNotRunning)
		assert.Contains(t, err.Error(), `exited with status 0, last writing "farewell"`, "the error tells how the sandbox ended and its last words")
	})

	for _, tc := range []struct {
		op        string
		keepsExec bool
	}{{"Exec", false}, {"Exec", true}, {"CopyIn", false}, {"CopyIn", true}} {
		op := tc.op
		t.Run(fmt.Sprintf("stopped while the exec starts/%s/engine keeps exec %v", op, tc.keepsExec), func(t *testing.T) {
			armed := new(atomic.Bool)
			api := stopsBeforeExecStart{DockerAPI: sandbox.EngineOf(c), armed: armed, keepsExec: tc.keepsExec}
			rc, err := sandbox.New(sandbox.WithDockerAPI(api), sandbox.WithSession(c.Session()), sandbox.WithExecAgent(false),
				sandbox.WithUnenforcedLimits(testenv.UnenforcedLimits()))
			require.NoError(t, err)
			sb := createT(t, rc, sandbox.Spec{Policy: sandbox.AllowAll()})
			armed.Store(true)
			if op == "Exec" {
				res, err := sb.Exec(context.Background(), echo)
				require.ErrorIs(t, err, sandbox.ErrNotRunning, "result: exit %d, stdout %q", res.ExitCode, res.Stdout.String())
				// How the sandbox ended, in swebox's words: the engine's
				// own (Docker writes "cannot exec in a stopped state" into
				// the exec's stream, Podman refuses the exec's start) are
				// carried after them.
				assert.Contains(t, err.Error(), `exec "echo"`)
				assert.Contains(t, err.Error(), "its main process exited with status 137", "the error tells how the sandbox ended")
				return
			}
			// A copy into tmpfs runs tar in the container.
			_, err = sb.CopyIn(context.Background(), sandbox.CopyInRequest{Tar: tarOf(t, map[string]string{"f.txt": "x"}), Dest: "/tmp"})
			require.ErrorIs(t, err, sandbox.ErrNotRunning)
		})
	}
}

// TestBlockingStdinPinsNoGoroutine: a command that ends without reading all
// of its Stdin, whose Read blocks, leaves no goroutine behind reading it, and
// the reader is left as it was: what is written to it later is not taken.
func TestBlockingStdinPinsNoGoroutine(t *testing.T) {
	c := newClient(t)
	sb := createT(t, c, sandbox.Spec{Policy: sandbox.AllowAll()})
	ctx := context.Background()
	r, w, err := os.Pipe() // nothing is written: every Read blocks
	require.NoError(t, err)
	defer r.Close()
	defer w.Close()
	base := packageGoroutines()

	for range 10 {
		res := execT(t, sb, sandbox.ExecRequest{Cmd: []string{"echo", "hi"}, Stdin: r})
		require.Equal(t, "hi\n", res.Stdout.String())
	}
	for range 2 {
		res, err := c.Run(ctx, sandbox.Spec{Image: testImage()}, sandbox.ExecRequest{Cmd: []string{"echo", "hi"}, Stdin: r})
		require.NoError(t, err)
		require.Equal(t, "hi\n", res.Stdout.String())
	}
	left := packageGoroutines()
	for i := 0; i < 100 && len(left) > len(base); i++ {
		time.Sleep(100 * time.Millisecond)
		left = packageGoroutines()
	}
	assert.LessOrEqual(t, len(left), len(base), "no goroutine is left reading Stdin:\n%s", strings.Join(left, "\n\n"))

	// The reader is the caller's again: the next command gets what is
	// written now, all of it.
	_, err = w.Write([]byte("later"))
	require.NoError(t, err)
	require.NoError(t, w.Close())
	res := execT(t, sb, sandbox.ExecRequest{Cmd: []string{"cat"}, Stdin: r})
	assert.Equal(t, "later", res.Stdout.String())
}

// packageGoroutines returns the stacks of the goroutines that run or were
// started by the sandbox package, the tests' own excepted. Idle engine
// connections, which come and go with the HTTP client's pool, do not count.
func packageGoroutines() []string {
	buf := make([]byte, 1<<22)
	buf = buf[:runtime.Stack(buf, true)]
	var ours []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, "swebox/sandbox.") && !strings.Contains(g, "sandbox_test.") {
			ours = append(ours, g)
		}
	}
	return ours
}

// TestCopyOutOfAMissingFileIsNotExist: on both backends, CopyOut of a file
// that is not there is an *fs.PathError matching fs.ErrNotExist, naming the
// path, whether it would be in the image's layers, a tmpfs or under a
// missing directory.
func TestCopyOutOfAMissingFileIsNotExist(t *testing.T) {
	forEachBackend(t, func(t *testing.T, c *sandbox.Client, kube bool) {
		sb := createT(t, c, sandbox.Spec{Policy: sandbox.AllowAll()})
		for _, src := range []string{"/etc/no-such-file", "/no-such-dir/file", "/tmp/no-such-file", "/tmp/no-such-dir/file", "/no-such-file"} {
			host := t.TempDir()
			_, err := sb.CopyOut(context.Background(), sandbox.CopyOutRequest{Src: src, Dest: host})
			require.Error(t, err, src)
			assert.ErrorIs(t, err, fs.ErrNotExist, "%s: %v", src, err)
			var pe *fs.PathError
			if assert.ErrorAs(t, err, &pe, src) {
				assert.Equal(t, src, pe.Path)
			}
		}
	})
}
