package sandbox_test

import (
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/internal/cienv"
	"github.com/swebox/swebox/internal/testenv"
	"github.com/swebox/swebox/sandbox"
)

// The benchmarks report p50 and p95 per operation besides the mean, and run
// the docker CLI doing the same work in the same process, so the figures in
// BENCHMARKS.md compare like with like:
//
//	go test ./sandbox -run '^$' -bench . -benchtime 20x

func BenchmarkRunOneShot(b *testing.B) { benchRunOneShot(b, newClient(b)) }

func benchRunOneShot(b *testing.B, c *sandbox.Client) {
	ctx := context.Background()
	spec := sandbox.Spec{Image: testImage(), Policy: sandbox.AllowAll()}
	// A first run outside the timing: the Kubernetes backend proves network
	// isolation once per client.
	_, err := c.Run(ctx, spec, sandbox.ExecRequest{Cmd: []string{"true"}})
	require.NoError(b, err)
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

// BenchmarkDockerCLIRun is `docker run --rm` of `true` with the hardening of
// a default Spec, the baseline for BenchmarkRunOneShot.
func BenchmarkDockerCLIRun(b *testing.B) {
	c := newClient(b) // skips without an engine
	if _, err := exec.LookPath("docker"); err != nil {
		cienv.Skip(b, "docker CLI not installed")
	}
	args := append(append([]string{"run", "--rm"}, hardenedRunFlags(c)...), testImage(), "true")
	b.Logf("docker %s", strings.Join(args, " "))
	var d []time.Duration
	for b.Loop() {
		start := time.Now()
		out, err := exec.Command("docker", args...).CombinedOutput()
		d = append(d, time.Since(start))
		require.NoError(b, err, string(out))
	}
	testenv.ReportPercentiles(b, d)
}

// hardenedRunFlags are the docker run flags of a default Spec's container.
func hardenedRunFlags(c *sandbox.Client) []string {
	tmp := fmt.Sprintf("rw,exec,nosuid,nodev,size=%d", sandbox.DefaultTmpSize)
	return []string{
		"--network", "none", "--read-only", "--user", sandbox.DefaultUser,
		"--cap-drop", "ALL", "--security-opt", "no-new-privileges", "--init",
		"--pids-limit", strconv.Itoa(sandbox.DefaultPidsLimit),
		"--memory", strconv.Itoa(sandbox.DefaultMemory), "--memory-swap", strconv.Itoa(sandbox.DefaultMemory),
		"--cpus", strconv.FormatFloat(sandbox.DefaultNanoCPUs/1e9, 'f', -1, 64),
		"--tmpfs", "/tmp:" + tmp + ",mode=1777",
		"--tmpfs", sandbox.HomeDir + ":" + tmp + ",uid=1000,gid=1000,mode=0700",
		"--ulimit", fmt.Sprintf("nofile=%d:%d", sandbox.DefaultNoFile, sandbox.DefaultNoFile),
		"--ulimit", fmt.Sprintf("fsize=%d:%d", sandbox.DefaultFileSize, sandbox.DefaultFileSize),
		"--log-opt", "max-size=" + sandbox.DefaultLogSize, "--log-opt", "max-file=1",
		"--label", sandbox.LabelManaged + "=true", "--label", sandbox.LabelSession + "=" + c.Session(),
		"--entrypoint", "", "--env", "HOME=" + sandbox.HomeDir,
	}
}

// BenchmarkExecWarm is a warm exec through the default transport, the
// exec agent on a local engine; BenchmarkExecWarmEngine is the engine's
// exec.
func BenchmarkExecWarm(b *testing.B) { benchExecWarm(b, newClient(b)) }

func benchExecWarm(b *testing.B, c *sandbox.Client) {
	sb := createT(b, c, sandbox.Spec{Policy: sandbox.AllowAll()})
	b.Logf("exec agent: %v", sb.UsesExecAgent())
	benchExec(b, sb)
}

// BenchmarkDockerCLIExec is `docker exec CONTAINER true` on a running
// container, the baseline for BenchmarkExecWarm.
func BenchmarkDockerCLIExec(b *testing.B) {
	c := newClient(b)
	if _, err := exec.LookPath("docker"); err != nil {
		cienv.Skip(b, "docker CLI not installed")
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
