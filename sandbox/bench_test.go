package sandbox_test

import (
	"context"
	"os/exec"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/internal/testenv"
	"github.com/swebox/swebox/sandbox"
)

// The benchmarks report p50 and p95 per operation besides the mean, and run
// the docker CLI doing the same work in the same process, so the figures in
// BENCHMARKS.md compare like with like:
//
//	go test ./sandbox -run '^$' -bench . -benchtime 30x

func BenchmarkRunOneShot(b *testing.B) {
	c := newClient(b)
	ctx := context.Background()
	spec := sandbox.Spec{Image: testImage(), Policy: sandbox.AllowAll()}
	var d []time.Duration
	b.ResetTimer()
	for b.Loop() {
		start := time.Now()
		res, err := c.Run(ctx, spec, sandbox.ExecRequest{Cmd: []string{"true"}})
		d = append(d, time.Since(start))
		require.NoError(b, err)
		require.Equal(b, 0, res.ExitCode)
	}
	testenv.ReportPercentiles(b, d)
}

// BenchmarkDockerCLIRun is `docker run --rm IMAGE true`, the baseline for
// BenchmarkRunOneShot.
func BenchmarkDockerCLIRun(b *testing.B) {
	newClient(b) // skips without an engine
	if _, err := exec.LookPath("docker"); err != nil {
		b.Skip("docker CLI not installed")
	}
	var d []time.Duration
	for b.Loop() {
		start := time.Now()
		out, err := exec.Command("docker", "run", "--rm", testImage(), "true").CombinedOutput()
		d = append(d, time.Since(start))
		require.NoError(b, err, string(out))
	}
	testenv.ReportPercentiles(b, d)
}

func BenchmarkExecWarm(b *testing.B) {
	c := newClient(b)
	sb := createT(b, c, sandbox.Spec{Policy: sandbox.AllowAll()})
	ctx := context.Background()
	var d []time.Duration
	for b.Loop() {
		start := time.Now()
		res, err := sb.Exec(ctx, sandbox.ExecRequest{Cmd: []string{"true"}})
		d = append(d, time.Since(start))
		require.NoError(b, err)
		require.Equal(b, 0, res.ExitCode)
	}
	testenv.ReportPercentiles(b, d)
}

// BenchmarkDockerCLIExec is `docker exec CONTAINER true` on a running
// container, the baseline for BenchmarkExecWarm.
func BenchmarkDockerCLIExec(b *testing.B) {
	c := newClient(b)
	if _, err := exec.LookPath("docker"); err != nil {
		b.Skip("docker CLI not installed")
	}
	sb := createT(b, c, sandbox.Spec{Policy: sandbox.AllowAll()})
	var d []time.Duration
	for b.Loop() {
		start := time.Now()
		out, err := exec.Command("docker", "exec", sb.ID(), "true").CombinedOutput()
		d = append(d, time.Since(start))
		require.NoError(b, err, string(out))
	}
	testenv.ReportPercentiles(b, d)
}
