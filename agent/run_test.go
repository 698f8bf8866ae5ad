package agent_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/agent"
	"github.com/swebox/swebox/agent/egress"
	"github.com/swebox/swebox/internal/cienv"
	"github.com/swebox/swebox/sandbox"
)

func TestRunPython(t *testing.T) {
	m, c := newManager(t)
	type testCase struct {
		name       string
		code       string
		opts       agent.RunOptions
		wantKind   agent.Kind
		wantCode   int
		wantStdout string
		wantErr    string // exception type
		wantLine   int
	}
	// Code a shell or -c would mangle: quotes of both kinds, backslashes,
	// $ and backticks, non-ASCII, a NUL escape and a trailing backslash.
	tricky := "s = '''it's \"quoted\" $HOME `id` \\\\ caf\\u00e9 \\x00'''\nprint(repr(s))\n# \\"
	for _, tc := range []testCase{
		{name: "prints", code: "print(1)", wantStdout: "1\n"},
		{name: "code is passed as a file, untouched", code: tricky, wantStdout: `'it\'s "quoted" $HOME ` + "`id`" + ` \\ café \x00'` + "\n"},
		{name: "args are argv, not shell words", code: "import sys; print(sys.argv[1:])", opts: agent.RunOptions{Args: []string{"a b", "$X", "'q'"}}, wantStdout: `['a b', '$X', "'q'"]` + "\n"},
		{name: "stdin", code: "import sys; print(sys.stdin.read().upper())", opts: agent.RunOptions{Stdin: []byte("hello")}, wantStdout: "HELLO\n"},
		{name: "working directory and import path", code: "import os, sys; print(os.getcwd(), '/workspace' in sys.path)", wantStdout: "/workspace True\n"},
		{name: "env", code: "import os; print(os.environ['GREETING'])", opts: agent.RunOptions{SandboxOptions: agent.SandboxOptions{Env: map[string]string{"GREETING": "hi"}}}, wantStdout: "hi\n"},
		{name: "exception", code: "def f(x):\n    return 1 / x\n\nf(0)\n", wantKind: agent.KindException, wantCode: 1, wantErr: "ZeroDivisionError", wantLine: 2},
		{name: "syntax error", code: "def f(:\n  pass\n", wantKind: agent.KindException, wantCode: 1, wantErr: "SyntaxError", wantLine: 1},
		{name: "exit status", code: "import sys; sys.exit(4)", wantKind: agent.KindExit, wantCode: 4},
		{name: "signal", code: "import os, signal; os.kill(os.getpid(), signal.SIGSEGV)", wantKind: agent.KindSignal, wantCode: 128 + 11},
		{name: "timeout", code: "import time\nprint('started', flush=True)\ntime.sleep(60)", opts: agent.RunOptions{Timeout: 2 * time.Second}, wantKind: agent.KindTimeout, wantCode: -1, wantStdout: "started\n"},
		{name: "out of memory", code: "x = []\nwhile True:\n    x.append(bytearray(16 << 20))\n", opts: agent.RunOptions{SandboxOptions: agent.SandboxOptions{Limits: sandbox.Limits{Memory: 128 << 20}}}, wantKind: agent.KindOOM, wantCode: 137},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := runPythonT(t, m, tc.code, tc.opts)
			assert.Equal(t, tc.wantKind, res.Kind, "stderr: %s", res.Stderr.String())
			if tc.wantKind != agent.KindTimeout {
				assert.Equal(t, tc.wantCode, res.ExitCode)
			}
			if tc.wantStdout != "" || tc.wantKind == agent.KindOK {
				assert.Equal(t, tc.wantStdout, res.Stdout.String())
			}
			if tc.wantErr == "" {
				assert.Nil(t, res.Error)
				return
			}
			require.NotNil(t, res.Error, res.Stderr.String())
			assert.Equal(t, tc.wantErr, res.Error.Type)
			f, ok := res.Error.UserFrame()
			require.True(t, ok)
			assert.Equal(t, tc.wantLine, f.Line)
			assert.True(t, strings.HasSuffix(f.File, "/main.py"), f.File)
		})
	}
	assert.Empty(t, sessionContainers(t, c), "one-shot containers are removed")
}

func TestRunPythonPeakMemory(t *testing.T) {
	m, _ := newManager(t)
	small := runPythonT(t, m, "print(1)", agent.RunOptions{})
	big := runPythonT(t, m, "b = bytearray(200 << 20)\nfor i in range(0, len(b), 4096): b[i] = 1\nprint(len(b))", agent.RunOptions{})
	require.True(t, big.OK(), big.Stderr.String())
	assert.Greater(t, small.PeakMemory, int64(0))
	assert.GreaterOrEqual(t, big.PeakMemory, int64(200<<20), "the 200 MiB touched count")
	assert.Less(t, small.PeakMemory, int64(100<<20))
	assert.Equal(t, int64(sandbox.DefaultMemory), big.MemoryLimit)

	oom := runPythonT(t, m, "x = []\nwhile True:\n    x.append(bytearray(8 << 20))\n    x[-1][::4096] = b'1' * len(x[-1][::4096])\n", agent.RunOptions{SandboxOptions: agent.SandboxOptions{Limits: sandbox.Limits{Memory: 96 << 20}}})
	t.Logf("oom result: kind=%v exit=%d stderr=%q stdout=%q peak=%d", oom.Kind, oom.ExitCode, oom.Stderr.String(), oom.Stdout.String(), oom.PeakMemory)
	require.Equal(t, agent.KindOOM, oom.Kind)
	assert.Greater(t, oom.PeakMemory, int64(48<<20), "the peak of the killed process is known")
}

func TestRunShell(t *testing.T) {
	m, _ := newManager(t)
	type testCase struct {
		name       string
		script     string
		opts       agent.RunOptions
		wantKind   agent.Kind
		wantStdout string
	}
	for _, tc := range []testCase{
		{name: "script with quotes", script: "x='a \"b\" $c'\necho \"$x\" \"$1\"\n", opts: agent.RunOptions{Args: []string{"arg one"}}, wantStdout: "a \"b\" $c arg one\n"},
		{name: "exit status", script: "echo out; echo err >&2; exit 7", wantKind: agent.KindExit, wantStdout: "out\n"},
		{name: "bash when asked", script: "echo ${BASH_VERSION:+bash}", opts: agent.RunOptions{Shell: "bash"}, wantStdout: "bash\n"},
		{name: "user and hardening", script: "id -u; touch /etc/x 2>/dev/null || echo ro; cat /proc/self/status | grep -c '^CapEff:.0000000000000000'", wantStdout: "1000\nro\n1\n"},
		{name: "no network", script: "python3 -c \"import socket; socket.create_connection(('1.1.1.1', 53), 2)\" 2>&1 | tail -1", wantStdout: "OSError: [Errno 101] Network is unreachable\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := m.RunShell(context.Background(), tc.script, tc.opts)
			require.NoError(t, err)
			assert.Equal(t, tc.wantKind, res.Kind, res.Stderr.String())
			assert.Equal(t, tc.wantStdout, res.Stdout.String())
		})
	}
}

// TestPackageRunPython uses the package-level helper, which builds its own
// client and manager; its containers carry a session label of their own, so
// the check is that none of the agent's containers outlives the call.
func TestPackageRunPython(t *testing.T) {
	c := newClient(t)
	if testImage() != agent.DefaultImage {
		t.Skip("the package-level helper runs the default image")
	}
	before := len(agentContainers(t, c))
	res, err := agent.RunPython(context.Background(), "print('hi')", agent.RunOptions{})
	require.NoError(t, err)
	assert.Equal(t, "hi\n", res.Stdout.String())
	assert.LessOrEqual(t, len(agentContainers(t, c)), before)
}

func TestRunOptionErrors(t *testing.T) {
	m, _ := newManager(t)
	type testCase struct {
		name   string
		opts   agent.RunOptions
		is     error
		alsoIs error // the part's own error, when a part refused the value
	}
	for _, tc := range []testCase{
		{name: "bad env name", opts: agent.RunOptions{SandboxOptions: agent.SandboxOptions{Env: map[string]string{"A-B": "x"}}}, is: agent.ErrInvalidOption},
		{name: "bad secret name", opts: agent.RunOptions{SandboxOptions: agent.SandboxOptions{Secrets: map[string]string{"1X": "s"}}}, is: agent.ErrInvalidOption},
		{name: "requirements without a source", opts: agent.RunOptions{SandboxOptions: agent.SandboxOptions{Requirements: agent.Requirements{Packages: []string{"x"}}}}, is: agent.ErrInvalidOption},
		{name: "requirement that is an option", opts: agent.RunOptions{SandboxOptions: agent.SandboxOptions{Requirements: agent.Requirements{Packages: []string{"--index-url=http://evil"}, WheelDir: "/tmp"}}}, is: agent.ErrInvalidOption},
		{name: "egress on gVisor", opts: agent.RunOptions{SandboxOptions: agent.SandboxOptions{Runtime: "runsc", Egress: egress.Allowlist{Hosts: []string{"example.com"}}}}, is: agent.ErrEgressUnsupported},
		{name: "bad egress entry", opts: agent.RunOptions{SandboxOptions: agent.SandboxOptions{Egress: egress.Allowlist{Hosts: []string{"exa mple.com"}}}}, is: agent.ErrInvalidOption, alsoIs: egress.ErrInvalidRule},
		{name: "bad install egress entry", opts: agent.RunOptions{SandboxOptions: agent.SandboxOptions{Requirements: agent.Requirements{Packages: []string{"x"}, Egress: egress.Allowlist{Hosts: []string{"*"}}}}}, is: agent.ErrInvalidOption, alsoIs: egress.ErrInvalidRule},
		{name: "file with two sources", opts: agent.RunOptions{SandboxOptions: agent.SandboxOptions{Files: []agent.File{{Name: "a", Data: []byte("x"), URL: "http://x/a"}}}}, is: agent.ErrInvalidOption},
		{name: "file escaping mounts", opts: agent.RunOptions{SandboxOptions: agent.SandboxOptions{Files: []agent.File{{Name: "../a", Data: []byte("x")}}}}, is: agent.ErrInvalidOption},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := m.RunPython(context.Background(), "print(1)", tc.opts)
			require.ErrorIs(t, err, tc.is)
			if tc.alsoIs != nil {
				assert.ErrorIs(t, err, tc.alsoIs)
			}
		})
	}
}

func TestRunPythonGVisor(t *testing.T) {
	m, c := newManager(t)
	rts, err := c.Runtimes(context.Background())
	require.NoError(t, err)
	if !slices.Contains(rts, "runsc") {
		cienv.Skip(t, "the engine has no runsc runtime")
	}
	// gVisor reports its own kernel version.
	res := runPythonT(t, m, "import platform; print(platform.release())", agent.RunOptions{SandboxOptions: agent.SandboxOptions{Runtime: "runsc"}})
	require.True(t, res.OK(), res.Stderr.String())
	assert.Equal(t, "4.4.0\n", res.Stdout.String())
	assert.Greater(t, res.PeakMemory, int64(0))
}
