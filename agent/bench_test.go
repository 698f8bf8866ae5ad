package agent_test

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/agent"
	"github.com/swebox/swebox/internal/cienv"
	"github.com/swebox/swebox/internal/testenv"
	"github.com/swebox/swebox/sandbox"
)

// Each benchmark has a "swebox" and a "docker-cli" sub-benchmark doing the
// same work in the same run, so BENCHMARKS.md compares like with like; both
// report p50 and p95 besides the mean:
//
//	go test ./agent -run '^$' -bench . -benchtime 20x

// hardenedRun is `docker run` with the flags the sandbox package applies by
// default, the fair baseline for a one-shot.
func hardenedRun(extra ...string) []string {
	args := []string{"run", "--rm", "--init", "--network", "none", "--read-only", "--tmpfs", "/tmp:rw,exec,nosuid,nodev,size=512m",
		"--tmpfs", "/tmp/home:rw,exec,nosuid,nodev,size=512m,uid=1000,gid=1000,mode=0700",
		"--user", "1000:1000", "--cap-drop", "ALL", "--security-opt", "no-new-privileges",
		"--memory", "2g", "--memory-swap", "2g", "--pids-limit", "512", "--label", "swebox.managed=true"}
	return append(args, extra...)
}

func timeCLI(b *testing.B, args []string, want string) {
	b.Helper()
	if _, err := exec.LookPath("docker"); err != nil {
		cienv.Skip(b, "docker CLI not installed")
	}
	b.Logf("docker %s", strings.Join(args, " "))
	var d []time.Duration
	for b.Loop() {
		start := time.Now()
		out, err := exec.Command("docker", args...).CombinedOutput()
		d = append(d, time.Since(start))
		require.NoError(b, err, string(out))
		require.Equal(b, want, string(out))
	}
	testenv.ReportPercentiles(b, d)
}

func timeRuns(b *testing.B, run func() (agent.Result, error), want string) {
	b.Helper()
	var d []time.Duration
	for b.Loop() {
		start := time.Now()
		res, err := run()
		d = append(d, time.Since(start))
		require.NoError(b, err)
		require.Equal(b, want, res.Stdout.String(), res.Stderr.String())
	}
	testenv.ReportPercentiles(b, d)
}

func BenchmarkRunPython(b *testing.B) {
	m, _ := newManager(b)
	ctx := context.Background()
	b.Run("swebox", func(b *testing.B) {
		timeRuns(b, func() (agent.Result, error) { return m.RunPython(ctx, "print(1)", agent.RunOptions{}) }, "1\n")
	})
	b.Run("docker-cli", func(b *testing.B) {
		timeCLI(b, hardenedRun(testImage(), "python3", "-c", "print(1)"), "1\n")
	})
}

// BenchmarkRunPythonPool: one-shot runs in a sandbox of their own and in
// one from a warm pool (commands through the engine's exec, and through the
// exec agent), side by side.
func BenchmarkRunPythonPool(b *testing.B) {
	cold, _ := newManager(b)
	pooled, c := newPooledManager(b, 4)
	warmRuns(b, pooled, c, 4)
	withAgent, ca := newPooledManagerWith(b, []sandbox.Option{sandbox.WithPool(sandbox.PoolOptions{Size: 4}), sandbox.WithExecAgent(true)})
	warmRuns(b, withAgent, ca, 4)
	ctx := context.Background()
	for _, bc := range []struct {
		name string
		m    *agent.Manager
	}{{"unpooled", cold}, {"pooled", pooled}, {"pooled-exec-agent", withAgent}} {
		b.Run(bc.name, func(b *testing.B) {
			timeRuns(b, func() (agent.Result, error) { return bc.m.RunPython(ctx, "print(1)", agent.RunOptions{}) }, "1\n")
		})
	}
}

func BenchmarkSessionSecondCall(b *testing.B) {
	m, c := newManager(b)
	ctx := context.Background()
	s := createT(b, m, "bench", agent.SessionOptions{})
	_, err := s.RunPython(ctx, "print(1)", agent.ExecOptions{})
	require.NoError(b, err)
	b.Run("swebox", func(b *testing.B) {
		timeRuns(b, func() (agent.Result, error) { return s.RunPython(ctx, "print(1)", agent.ExecOptions{}) }, "1\n")
	})
	b.Run("docker-cli", func(b *testing.B) {
		// `docker exec` into the session's own running container.
		_ = c
		timeCLI(b, []string{"exec", "-w", "/workspace", s.Info().Container, "python3", "-c", "print(1)"}, "1\n")
	})
}

func BenchmarkCachedRequirements(b *testing.B) {
	m, c := newManager(b)
	ctx := context.Background()
	wheels := buildWheel(b, c, "", "benchpkg", "1.0")
	opts := agent.RunOptions{SandboxOptions: agent.SandboxOptions{Requirements: agent.Requirements{Packages: []string{"benchpkg"}, WheelDir: wheels}}}
	code := "import benchpkg\nprint(1)"
	warm, err := m.RunPython(ctx, code, opts)
	require.NoError(b, err)
	require.True(b, warm.OK(), warm.Stderr.String())
	env := filepath.Join(m.StateDir(), "envs", warm.Install.Key)
	b.Run("swebox", func(b *testing.B) {
		timeRuns(b, func() (agent.Result, error) { return m.RunPython(ctx, code, opts) }, "1\n")
	})
	b.Run("docker-cli", func(b *testing.B) {
		// The same cached environment, mounted by hand.
		timeCLI(b, hardenedRun("-v", env+":/workspace/.venv:ro", testImage(), "/workspace/.venv/bin/python", "-c", code), "1\n")
	})
}
