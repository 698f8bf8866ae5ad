package execagent_test

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/sandbox/internal/execagent"
)

var agentBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "execagent-test")
	if err != nil {
		panic(err)
	}
	agentBin = filepath.Join(dir, "swebox-agent")
	build := exec.Command("go", "build", "-o", agentBin, "./cmd/swebox-agent")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		panic(fmt.Sprintf("build the agent: %v: %s", err, out))
	}
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// startAgent serves on a socket in a temporary directory, as the sandbox's
// main process does; it returns the socket.
func startAgent(t *testing.T) string { return startAgentB(t) }

func startAgentB(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	bin := agentBin
	sock := filepath.Join(dir, "agent.sock")
	agent := exec.Command(bin, "serve", sock)
	agent.Stderr = os.Stderr
	require.NoError(t, agent.Start())
	t.Cleanup(func() { _ = agent.Process.Kill(); _ = agent.Wait() })
	require.Eventually(t, func() bool {
		c, err := net.Dial("unix", sock)
		if err == nil {
			_ = c.Close()
		}
		return err == nil
	}, 10*time.Second, 5*time.Millisecond)
	return sock
}

type output struct{ stdout, stderr bytes.Buffer }

func run(t *testing.T, ctx context.Context, sock string, req execagent.StartRequest, stdin string) (execagent.Result, *output) {
	t.Helper()
	conn, err := net.Dial("unix", sock)
	require.NoError(t, err)
	o := &output{}
	call := execagent.Call{Req: req, Stdout: &o.stdout, Stderr: &o.stderr}
	if stdin != "" {
		call.Stdin = strings.NewReader(stdin)
	}
	res, err := execagent.Run(ctx, conn, call)
	require.NoError(t, err)
	return res, o
}

func TestAgentRunsCommands(t *testing.T) {
	sock := startAgent(t)
	type testCase struct {
		name       string
		req        execagent.StartRequest
		stdin      string
		wantCode   int
		wantSignal int
		wantStdout string
		wantStderr string
		wantStart  string
	}
	for _, tc := range []testCase{
		{name: "exit code and split streams", req: execagent.StartRequest{Argv: []string{"sh", "-c", "echo out; echo err >&2; exit 3"}}, wantCode: 3, wantStdout: "out\n", wantStderr: "err\n"},
		{name: "argv is not parsed", req: execagent.StartRequest{Argv: []string{"echo", "$HOME", "a;b"}}, wantStdout: "$HOME a;b\n"},
		{name: "env is added and replaces", req: execagent.StartRequest{Argv: []string{"sh", "-c", "echo $A $PATH"}, Env: []string{"A=1", "PATH=/bin"}}, wantStdout: "1 /bin\n"},
		{name: "working dir", req: execagent.StartRequest{Argv: []string{"pwd"}, Dir: "/tmp"}, wantStdout: "/tmp\n"},
		{name: "stdin", req: execagent.StartRequest{Argv: []string{"cat"}}, stdin: "from stdin", wantStdout: "from stdin"},
		{name: "no stdin reads EOF", req: execagent.StartRequest{Argv: []string{"cat"}}, wantStdout: ""},
		{name: "signal", req: execagent.StartRequest{Argv: []string{"sh", "-c", "kill -TERM $$"}}, wantCode: 143, wantSignal: 15},
		{name: "own process group", req: execagent.StartRequest{Argv: []string{"sh", "-c", `[ "$(ps -o pgid= $$)" -eq $$ ] && echo leader`}}, wantStdout: "leader\n"},
		{name: "missing command", req: execagent.StartRequest{Argv: []string{"no-such-command"}}, wantCode: 127, wantStart: "executable file not found"},
		{name: "missing program path", req: execagent.StartRequest{Argv: []string{"/no/such"}}, wantCode: 127, wantStart: "no such file or directory"},
		{name: "not executable", req: execagent.StartRequest{Argv: []string{"/etc/passwd"}}, wantCode: 126, wantStart: "permission denied"},
		{name: "missing working dir", req: execagent.StartRequest{Argv: []string{"true"}, Dir: "/no/such/dir"}, wantCode: 126, wantStart: "chdir to cwd"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, o := run(t, context.Background(), sock, tc.req, tc.stdin)
			assert.Equal(t, tc.wantCode, res.ExitCode)
			assert.Equal(t, tc.wantSignal, res.Signal)
			assert.Equal(t, tc.wantStdout, o.stdout.String())
			assert.Equal(t, tc.wantStderr, o.stderr.String())
			assert.False(t, res.TimedOut)
			assert.Empty(t, res.KillError)
			if tc.wantStart != "" {
				assert.Contains(t, res.StartError, tc.wantStart)
			} else {
				assert.Empty(t, res.StartError)
			}
		})
	}
}

// TestAgentReportsResourceUsage: the CPU time and peak memory of every
// process of the command, children included.
func TestAgentReportsResourceUsage(t *testing.T) {
	sock := startAgent(t)
	res, o := run(t, context.Background(), sock, execagent.StartRequest{Argv: []string{"sh", "-c",
		`sh -c 'i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done'; head -c 50000000 /dev/zero | tail -c 1 >/dev/null`}}, "")
	require.Equal(t, 0, res.ExitCode, o.stderr.String())
	assert.Greater(t, res.UserNS+res.SysNS, int64(50*time.Millisecond), "the busy loop in a grandchild counts")
	assert.Greater(t, res.MaxRSSKB, int64(1000))
	assert.Greater(t, res.WallNS, int64(0))
}

// TestAgentTimeoutKillsTheTree: processes that left the command's process
// group and session, and orphans, die with it; a process of another command
// does not.
func TestAgentTimeoutKillsTheTree(t *testing.T) {
	sock := startAgent(t)
	tag := "sleep-" + strings.ReplaceAll(t.Name(), "/", "-")
	other := exec.Command("bash", "-c", "exec -a "+tag+"-other sleep 900")
	require.NoError(t, other.Start())
	t.Cleanup(func() { _ = other.Process.Kill(); _ = other.Wait() })
	res, o := run(t, context.Background(), sock, execagent.StartRequest{Argv: []string{"bash", "-c",
		"echo started; (exec -a " + tag + "-bg sleep 900) & setsid bash -c '(exec -a " + tag + "-setsid sleep 900) & wait' & " +
			"bash -c '(exec -a " + tag + "-orphan sleep 900) &' ; exec -a " + tag + "-fg sleep 900"},
		TimeoutNS: int64(time.Second)}, "")
	assert.True(t, res.TimedOut)
	assert.Empty(t, res.KillError)
	assert.Equal(t, 137, res.ExitCode)
	assert.Equal(t, 9, res.Signal)
	assert.Equal(t, "started\n", o.stdout.String())
	ps, err := exec.Command("ps", "-eo", "args=").Output()
	require.NoError(t, err)
	for _, name := range []string{"bg", "setsid", "orphan", "fg"} {
		assert.NotContains(t, string(ps), tag+"-"+name+" ", "the %s process is killed", name)
	}
	assert.Contains(t, string(ps), tag+"-other", "another process of the same user lives")
}

// TestAgentKillOnCancel: a cancelled context makes the agent kill the
// command and still answer.
func TestAgentKillOnCancel(t *testing.T) {
	sock := startAgent(t)
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	start := time.Now()
	res, _ := run(t, ctx, sock, execagent.StartRequest{Argv: []string{"sleep", "900"}}, "")
	assert.True(t, res.TimedOut)
	assert.Equal(t, 9, res.Signal)
	assert.Less(t, time.Since(start), 5*time.Second)
}

// TestAgentKillsWhenTheHostHangsUp: a host that goes away does not leave
// its command running.
func TestAgentKillsWhenTheHostHangsUp(t *testing.T) {
	sock := startAgent(t)
	tag := "hangup-" + t.Name()
	conn, err := net.Dial("unix", sock)
	require.NoError(t, err)
	require.NoError(t, execagent.WriteJSON(conn, execagent.FrameStart, execagent.StartRequest{
		Version: execagent.Version, Argv: []string{"bash", "-c", "exec -a " + tag + " sleep 900"}}))
	require.Eventually(t, func() bool { return exec.Command("pgrep", "-f", tag).Run() == nil }, 5*time.Second, 10*time.Millisecond)
	require.NoError(t, conn.Close())
	require.Eventually(t, func() bool { return exec.Command("pgrep", "-f", tag).Run() != nil }, 5*time.Second, 10*time.Millisecond)
}

// TestAgentRefusesBadRequests: another protocol version or an empty argv
// never runs anything.
func TestAgentRefusesBadRequests(t *testing.T) {
	sock := startAgent(t)
	for _, req := range []execagent.StartRequest{{Version: 99, Argv: []string{"true"}}, {Version: execagent.Version}} {
		conn, err := net.Dial("unix", sock)
		require.NoError(t, err)
		require.NoError(t, execagent.WriteJSON(conn, execagent.FrameStart, req))
		typ, payload, err := execagent.ReadFrame(conn, nil)
		require.NoError(t, err)
		assert.Equal(t, execagent.FrameExit, typ)
		assert.Contains(t, string(payload), "bad start request")
		_ = conn.Close()
	}
}

// TestAgentSocketIsPrivate: the socket is the agent user's only.
func TestAgentSocketIsPrivate(t *testing.T) {
	sock := startAgent(t)
	fi, err := os.Stat(sock)
	require.NoError(t, err)
	assert.Equal(t, os.ModeSocket|0o600, fi.Mode()&(os.ModeSocket|os.ModePerm))
	st := fi.Sys().(*syscall.Stat_t)
	assert.Equal(t, uint32(os.Getuid()), st.Uid)
}

// TestAgentReusesShimsOnlyWhenNothingIsLeft: a shim takes the next command
// when its last one left no process; one that left a process retires, so a
// later command's timeout spares that process.
func TestAgentReusesShimsOnlyWhenNothingIsLeft(t *testing.T) {
	sock := startAgent(t)
	parent := func(script string) string {
		res, o := run(t, context.Background(), sock, execagent.StartRequest{Argv: []string{"sh", "-c", "echo $PPID; " + script}}, "")
		require.Equal(t, 0, res.ExitCode, o.stderr.String())
		return strings.Fields(o.stdout.String())[0]
	}
	first := parent("true")
	assert.Equal(t, first, parent("true"), "the shim is reused")

	tag := "reuse-" + strings.ReplaceAll(t.Name(), "/", "-")
	res, o := run(t, context.Background(), sock, execagent.StartRequest{Argv: []string{"bash", "-c",
		"echo $PPID; (exec -a " + tag + " sleep 900) >/dev/null 2>&1 & echo $!"}}, "")
	require.Equal(t, 0, res.ExitCode)
	f := strings.Fields(o.stdout.String())
	require.Len(t, f, 2)
	shim, bg := f[0], f[1]
	bgPid, err := strconv.Atoi(bg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = syscall.Kill(bgPid, syscall.SIGKILL) })
	assert.NotEqual(t, shim, parent("true"), "a shim with a process left is not reused")

	res, _ = run(t, context.Background(), sock, execagent.StartRequest{Argv: []string{"sleep", "900"}, TimeoutNS: int64(200 * time.Millisecond)}, "")
	require.True(t, res.TimedOut)
	assert.NoError(t, syscall.Kill(bgPid, 0), "the earlier command's background process lives")
}

// TestAgentThreadsAreWhatTheAllowanceCounts: the agent and a command's
// shim have made the threads that PidsAllowance adds to a sandbox's
// process limit, and after commands at the same time one shim is left.
func TestAgentThreadsAreWhatTheAllowanceCounts(t *testing.T) {
	sock := startAgent(t)
	script := `shim=$PPID; agent=$(awk '/^PPid:/ {print $2}' /proc/$shim/status); ` +
		`awk '/^Threads:/ {print $2}' /proc/$agent/status /proc/$shim/status`
	for round := range 3 {
		res, o := run(t, context.Background(), sock, execagent.StartRequest{Version: execagent.Version, Argv: []string{"sh", "-c", "sleep 0.2; " + script}}, "")
		require.Equal(t, 0, res.ExitCode, o.stderr.String())
		var agent, shim int
		_, err := fmt.Sscanf(o.stdout.String(), "%d\n%d\n", &agent, &shim)
		require.NoError(t, err, "round %d: output %q", round, o.stdout.String())
		// The runtime may start one more of its own accord, which the
		// sandbox's process limit then pays (see PidsAllowance).
		assert.GreaterOrEqual(t, agent, execagent.AgentTasks, "round %d: threads of the agent", round)
		assert.GreaterOrEqual(t, shim, execagent.ShimTasks, "round %d: threads of the shim", round)
		t.Logf("round %d: the agent has %d threads, the shim %d", round, agent, shim)
	}
	// Commands at the same time have a shim each; once they are done, one
	// shim is kept, the one the next command gets.
	var wg sync.WaitGroup
	for range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			conn, err := net.Dial("unix", sock)
			if !assert.NoError(t, err) {
				return
			}
			res, err := execagent.Run(context.Background(), conn, execagent.Call{Req: execagent.StartRequest{Version: execagent.Version, Argv: []string{"sleep", "0.3"}}})
			assert.NoError(t, err)
			assert.Equal(t, 0, res.ExitCode)
		}()
	}
	wg.Wait()
	res, o := run(t, context.Background(), sock, execagent.StartRequest{Version: execagent.Version, Argv: []string{"sh", "-c",
		`agent=$(awk '/^PPid:/ {print $2}' /proc/$PPID/status); grep -l "^PPid:[[:space:]]*$agent\$" /proc/[0-9]*/status | wc -l`}}, "")
	require.Equal(t, 0, res.ExitCode, o.stderr.String())
	assert.Equal(t, "1", strings.TrimSpace(o.stdout.String()), "shims of the agent after concurrent commands, the running one included")
}
