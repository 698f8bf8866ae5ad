package agent_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/agent"
	"github.com/swebox/swebox/agent/secrets"
	"github.com/swebox/swebox/internal/testenv"
	"github.com/swebox/swebox/sandbox"
)

// newPooledManager returns a manager whose client keeps a warm pool of
// size, on a session of its own; the test's end closes both and checks
// that neither a sandbox of the session nor a pooled workspace is left.
func newPooledManager(t testing.TB, size int, opts ...agent.Option) (*agent.Manager, *sandbox.Client) {
	t.Helper()
	return newPooledManagerWith(t, []sandbox.Option{sandbox.WithPool(sandbox.PoolOptions{Size: size})}, opts...)
}

// newPooledManagerWith is newPooledManager with the client's options.
func newPooledManagerWith(t testing.TB, copts []sandbox.Option, opts ...agent.Option) (*agent.Manager, *sandbox.Client) {
	t.Helper()
	c := testenv.Client(t, copts...)
	state := t.TempDir()
	opts = append([]agent.Option{agent.WithImage(testImage()), agent.WithStateDir(state)}, opts...)
	m, err := agent.New(c, opts...)
	require.NoError(t, err)
	t.Cleanup(func() {
		require.NoError(t, m.Close())
		require.NoError(t, c.Close())
		check := testenv.Client(t, sandbox.WithSession(c.Session()))
		assert.Empty(t, sessionContainers(t, check), "sandboxes left behind")
		runs, err := os.ReadDir(filepath.Join(state, "runs"))
		require.NoError(t, err)
		assert.Empty(t, runs, "workspaces left behind")
	})
	return m, c
}

// warmRuns makes the pool keep sandboxes of the default run ready (a spec
// asked for twice is) and waits until it has them.
func warmRuns(t testing.TB, m *agent.Manager, c *sandbox.Client, size int) {
	t.Helper()
	for range 2 {
		res := runPythonT(t, m, "pass", agent.RunOptions{})
		require.True(t, res.OK(), res.Stderr.String())
	}
	require.Eventually(t, func() bool { return len(poolMembers(t, c)) >= size }, 2*time.Minute, 50*time.Millisecond,
		"the pool keeps %d sandboxes ready", size)
}

// poolMembers lists the client's pooled sandboxes that exist now.
func poolMembers(t testing.TB, c *sandbox.Client) []sandbox.Object {
	t.Helper()
	return listSandboxes(t, c, sandbox.ListRequest{Labels: map[string]string{sandbox.LabelPool: "true"}})
}

var runID = regexp.MustCompile(`run-[0-9a-f]{12}`)

// TestRunPooledMatchesUnpooled: a run in a pooled sandbox gives what a run
// in a sandbox of its own gives: output, exit, error, kind, usage, files,
// artifacts, workspace layout, limits and timeouts.
func TestRunPooledMatchesUnpooled(t *testing.T) {
	resolver := agent.WithSecretResolver(secrets.Static{"team/token": "s3cr3t-token-value"})
	cold, c := newManager(t, resolver)
	wheels := buildWheel(t, c, "", "poolpkg", "1.0")
	cases := pooledCases(wheels)
	// What a run of its own gives, once for both transports.
	want := make([]agent.Result, len(cases))
	for i, tc := range cases {
		want[i] = runPythonT(t, cold, tc.code, tc.opts)
	}
	// Commands reach a pooled sandbox through the engine's exec or the
	// exec agent; both must give what a run of its own gives.
	for _, agentOn := range []bool{false, true} {
		t.Run(fmt.Sprintf("exec agent %v", agentOn), func(t *testing.T) {
			pooled, pc := newPooledManagerWith(t, []sandbox.Option{sandbox.WithPool(sandbox.PoolOptions{Size: 2}), sandbox.WithExecAgent(agentOn)}, resolver)
			warmRuns(t, pooled, pc, 2)
			for i, tc := range cases {
				t.Run(tc.name, func(t *testing.T) {
					comparePooled(t, want[i], runPythonT(t, pooled, tc.code, tc.opts))
				})
			}
			assert.NotEmpty(t, poolMembers(t, pc), "the pool served the runs and refilled")
		})
	}
}

type pooledCase struct {
	name string
	code string
	opts agent.RunOptions
}

// pooledCases are the runs whose results a pooled sandbox must give as a
// sandbox of their own gives them.
func pooledCases(wheels string) []pooledCase {
	return []pooledCase{
		{name: "output and exit status", code: "import sys\nprint('out')\nprint('err', file=sys.stderr)\nsys.exit(3)"},
		{name: "exception", code: "def f(x):\n    return 1 / x\n\nf(0)\n"},
		{name: "signal", code: "import os, signal; os.kill(os.getpid(), signal.SIGSEGV)"},
		{name: "args, stdin, env, working directory", code: "import os, sys\nprint(sys.argv[1:], sys.stdin.read(), os.environ['GREETING'], os.environ['PYTHONPATH'], os.getcwd())",
			opts: agent.RunOptions{SandboxOptions: agent.SandboxOptions{Env: map[string]string{"GREETING": "hi", "PYTHONPATH": "/opt/lib"}}, Args: []string{"a b", "$X"}, Stdin: []byte("in")}},
		{name: "workspace layout, owner and user", code: "import os\nst = os.stat('/workspace')\nprint(sorted(os.listdir('/workspace')), oct(st.st_mode), st.st_uid, os.getuid(), os.getgid(), sorted(os.listdir('/workspace/output')))"},
		{name: "files in, artifacts out", code: "import os\nd = open('mounts/data/in.csv').read()\nos.makedirs('output/sub')\nopen('output/sub/copy.csv', 'w').write(d.upper())\nopen('output/note.txt', 'w').write('n')\nos.symlink('/etc/passwd', 'output/passwd')\nopen('top.txt', 'w').write('top')\nprint(open('top.txt').read())",
			opts: agent.RunOptions{SandboxOptions: agent.SandboxOptions{Files: []agent.File{{Name: "data/in.csv", Data: []byte("a,b\n")}}}}},
		{name: "requirements", code: "import poolpkg, sys\nprint(poolpkg.__name__, sys.prefix)",
			opts: agent.RunOptions{SandboxOptions: agent.SandboxOptions{Requirements: agent.Requirements{Packages: []string{"poolpkg"}, WheelDir: wheels}}}},
		{name: "secrets are masked", code: "import os; print(os.environ['TOKEN'])", opts: agent.RunOptions{SandboxOptions: agent.SandboxOptions{Secrets: map[string]string{"TOKEN": "team/token"}}}},
		{name: "timeout", code: "import time\nprint('started', flush=True)\ntime.sleep(60)", opts: agent.RunOptions{Timeout: 6 * time.Second}},
		{name: "out of memory", code: "x = []\nwhile True:\n    x.append(bytearray(16 << 20))\n", opts: agent.RunOptions{SandboxOptions: agent.SandboxOptions{Limits: sandbox.Limits{Memory: 128 << 20}}}},
		{name: "file size limit", code: "open('big', 'wb').write(b'x' * (2 << 20))", opts: agent.RunOptions{SandboxOptions: agent.SandboxOptions{Limits: sandbox.Limits{FileSize: 1 << 20}}}},
		{name: "no network", code: "import socket\ntry:\n    socket.create_connection(('1.1.1.1', 53), timeout=2)\n    print('reached')\nexcept OSError as e:\n    print(type(e).__name__)"},
	}
}

// comparePooled checks a pooled run's result against the same run's in a
// sandbox of its own.
func comparePooled(t *testing.T, want, got agent.Result) {
	assert.Equal(t, want.Kind, got.Kind, "kind; stderr: %s", got.Stderr.String())
	assert.Equal(t, want.ExitCode, got.ExitCode)
	assert.Equal(t, want.Signal, got.Signal)
	assert.Equal(t, want.Stdout.String(), got.Stdout.String())
	// The run directory's name is random in both.
	assert.Equal(t, runID.ReplaceAllString(want.Stderr.String(), "run-ID"), runID.ReplaceAllString(got.Stderr.String(), "run-ID"))
	assert.Equal(t, runID.ReplaceAllString(fmt.Sprintf("%+v", want.Error), "run-ID"), runID.ReplaceAllString(fmt.Sprintf("%+v", got.Error), "run-ID"))
	assert.Equal(t, want.Timeout, got.Timeout)
	assert.Equal(t, want.MemoryLimit, got.MemoryLimit)
	assert.Equal(t, want.PeakMemory > 0, got.PeakMemory > 0, "usage is measured")
	assert.Equal(t, want.Artifacts, got.Artifacts)
	assert.Equal(t, want.ArtifactsSkipped, got.ArtifactsSkipped)
	assert.Equal(t, want.ArtifactsDropped, got.ArtifactsDropped)
	assert.Equal(t, want.Install != nil, got.Install != nil)
}

// TestRunPooledSandboxIsNeverReused: each pooled run gets a sandbox and a
// workspace no run had before; what one run wrote (in the workspace, in
// /tmp, in HOME) the next does not see.
func TestRunPooledSandboxIsNeverReused(t *testing.T) {
	m, c := newPooledManager(t, 2)
	warmRuns(t, m, c, 2)
	code := `import os, socket
left = [p for p in ('/workspace/mine.txt', '/workspace/output/mine.txt', '/tmp/mine.txt', os.path.expanduser('~/mine.txt')) if os.path.exists(p)]
for p in ('/workspace/mine.txt', '/workspace/output/mine.txt', '/tmp/mine.txt', os.path.expanduser('~/mine.txt')):
    open(p, 'w').write('secret')
print(socket.gethostname(), left)
`
	hosts := map[string]bool{}
	for i := range 5 {
		res := runPythonT(t, m, code, agent.RunOptions{})
		require.True(t, res.OK(), res.Stderr.String())
		host, left, _ := strings.Cut(strings.TrimSpace(res.Stdout.String()), " ")
		assert.Equal(t, "[]", left, "run %d sees nothing of an earlier run", i)
		assert.False(t, hosts[host], "run %d got sandbox %s again", i, host)
		hosts[host] = true
		require.Len(t, res.Artifacts, 1)
	}
}

// TestSessionPooled: a new ephemeral session takes a pooled sandbox; its
// workspace is its own, persists across calls and goes when it is closed.
// A persistent one does not take a pooled sandbox.
func TestSessionPooled(t *testing.T) {
	m, c := newPooledManager(t, 1)
	opts := agent.SessionOptions{SandboxOptions: agent.SandboxOptions{Env: map[string]string{"GREETING": "hi"}, Files: []agent.File{{Name: "in.txt", Data: []byte("input")}}}}
	// Asked for twice, the sessions' spec is kept ready: a later session
	// takes the sandbox the pool started, once it is ready (one asking
	// before starts its own, and is closed here).
	sessions := []*agent.Session{createT(t, m, "first", opts), createT(t, m, "second", opts)}
	mine := map[string]bool{sessions[0].Info().Container: true, sessions[1].Info().Container: true}
	for i := 0; len(sessions) < 3; i++ {
		require.Less(t, i, 1200, "no session took a pooled sandbox")
		var ready []string
		for _, o := range poolMembers(t, c) {
			if !mine[o.ID] {
				ready = append(ready, o.ID)
			}
		}
		if len(ready) == 0 {
			time.Sleep(100 * time.Millisecond)
			continue
		}
		s := createT(t, m, fmt.Sprintf("third-%d", i), opts)
		if s.Info().Container == ready[0] {
			sessions = append(sessions, s)
			continue
		}
		require.NoError(t, s.Close())
	}
	workspaces := map[string]bool{}
	for _, s := range sessions {
		assert.False(t, workspaces[s.Workspace()], "workspace %s given twice", s.Workspace())
		workspaces[s.Workspace()] = true
		res := sessionPythonT(t, s, "import os\nprint(os.path.exists('state.txt'), open('mounts/in.txt').read(), os.environ['GREETING'])\nopen('state.txt', 'w').write('kept')", agent.ExecOptions{})
		require.True(t, res.OK(), res.Stderr.String())
		assert.Equal(t, "False input hi\n", res.Stdout.String(), "a workspace of its own, with its files and env")
		res = sessionPythonT(t, s, "print(open('state.txt').read())", agent.ExecOptions{})
		assert.Equal(t, "kept\n", res.Stdout.String(), "files persist across calls")
		b, err := os.ReadFile(filepath.Join(s.Workspace(), "state.txt"))
		require.NoError(t, err)
		assert.Equal(t, "kept", string(b), "Workspace is the host directory mounted at /workspace")
	}
	ws := sessions[0].Workspace()
	require.NoError(t, sessions[0].Close())
	assert.NoDirExists(t, ws, "closing the session removes its workspace")

	persistent := createT(t, m, "kept", agent.SessionOptions{Persistent: true})
	assert.Equal(t, filepath.Join(m.StateDir(), "sessions", "kept", "workspace"), persistent.Workspace(), "a persistent session's workspace is in the state directory")
}

// TestWithPool: the manager's own client takes the pool options; a
// caller's client brings its own.
func TestWithPool(t *testing.T) {
	testenv.SkipWithoutEngine(t, testenv.Client(t))
	m, err := agent.New(nil, agent.WithPool(sandbox.PoolOptions{Size: 3}), agent.WithImage(testImage()))
	require.NoError(t, err)
	assert.Equal(t, 3, m.Client().PoolSize())
	res, err := m.RunPython(context.Background(), "print(1)", agent.RunOptions{})
	require.NoError(t, err)
	assert.Equal(t, "1\n", res.Stdout.String())
	require.NoError(t, m.Close())

	_, err = agent.New(testenv.Client(t), agent.WithPool(sandbox.PoolOptions{Size: 3}))
	var oe *agent.OptionError
	require.ErrorAs(t, err, &oe)
	assert.Equal(t, "WithPool", oe.Field)
	_, err = agent.New(nil, agent.WithPool(sandbox.PoolOptions{Size: 0}))
	assert.Error(t, err, "the sandbox package checks the options")
}
