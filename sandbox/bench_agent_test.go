package sandbox_test

import (
	"context"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/internal/testenv"
	"github.com/swebox/swebox/sandbox"
)

// The exec agent's benchmarks, beside BenchmarkExecWarm (the default
// transport: the agent) and the CLI baselines in bench_test.go:
//
//	go test ./sandbox -run '^$' -bench 'ExecWarm|DockerCLIExec|RunOneShot|RunPooled|DockerCLIRun' -benchtime 200x
//	go test ./sandbox -run '^$' -bench Throughput -benchtime 1x
//
// Each reports the load average when it ends: the machine is shared.

// BenchmarkExecWarmEngine is BenchmarkExecWarm through the engine's exec,
// the transport where the agent cannot be reached.
func BenchmarkExecWarmEngine(b *testing.B) {
	c := newClient(b, sandbox.WithExecAgent(false))
	sb := createT(b, c, sandbox.Spec{Policy: sandbox.AllowAll()})
	require.False(b, sb.UsesExecAgent())
	benchExec(b, sb)
}

func benchExec(b *testing.B, sb *sandbox.Sandbox) {
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
	reportLoad(b)
}

// BenchmarkRunPooled is BenchmarkRunOneShot with a warm pool: each
// iteration takes a started sandbox, runs `true` in it and leaves it to be
// removed in the background. The wait for the pool to have one ready is not
// timed: it measures a one-shot run when the pool keeps up.
func BenchmarkRunPooled(b *testing.B) {
	benchRunPooled(b, newClient(b, sandbox.WithPool(sandbox.PoolOptions{Size: 2})), func(res sandbox.ExecResult) {
		require.Positive(b, res.Usage.MaxRSS, "served by the pool")
	})
}

// benchRunPooled times pooled one-shot runs of `true` on c; check looks at
// each result.
func benchRunPooled(b *testing.B, c *sandbox.Client, check func(sandbox.ExecResult)) {
	ctx := context.Background()
	spec := sandbox.Spec{Image: testImage(), Policy: sandbox.AllowAll()}
	var d []time.Duration
	for b.Loop() {
		b.StopTimer()
		require.NoError(b, c.Warm(ctx, spec, 1))
		b.StartTimer()
		start := time.Now()
		res, err := c.Run(ctx, spec, sandbox.ExecRequest{Cmd: []string{"true"}})
		d = append(d, time.Since(start))
		require.NoError(b, err)
		require.Equal(b, 0, res.ExitCode)
		check(res)
	}
	testenv.ReportPercentiles(b, d)
	reportLoad(b)
}

// BenchmarkThroughput runs 500 commands (`true`) in each of 32 sandboxes at
// once, per transport, and reports commands per second and the CPU seconds
// dockerd and containerd spent meanwhile. SWEBOX_THROUGHPUT_COMMANDS
// changes the 500.
func BenchmarkThroughput(b *testing.B) {
	const sandboxes = 32
	commands := 500
	if n, err := strconv.Atoi(os.Getenv("SWEBOX_THROUGHPUT_COMMANDS")); err == nil && n > 0 {
		commands = n
	}
	for _, tr := range transports {
		b.Run(tr.name, func(b *testing.B) {
			c := newClient(b, sandbox.WithExecAgent(tr.agent))
			sbs := make([]*sandbox.Sandbox, sandboxes)
			var wg sync.WaitGroup
			for i := range sbs {
				wg.Add(1)
				go func() {
					defer wg.Done()
					sbs[i] = createT(b, c, sandbox.Spec{Policy: sandbox.AllowAll()})
				}()
			}
			wg.Wait()
			for _, sb := range sbs {
				require.Equal(b, tr.agent, sb.UsesExecAgent())
			}
			for b.Loop() {
				dockerd, containerd := daemonCPU(b, "dockerd"), daemonCPU(b, "containerd")
				start := time.Now()
				var failed sync.Map
				for _, sb := range sbs {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for range commands {
							res, err := sb.Exec(context.Background(), sandbox.ExecRequest{Cmd: []string{"true"}})
							if err != nil || res.ExitCode != 0 {
								failed.Store(sb.ID(), err)
								return
							}
						}
					}()
				}
				wg.Wait()
				elapsed := time.Since(start)
				failed.Range(func(k, v any) bool { b.Fatalf("sandbox %v: %v", k, v); return false })
				b.ReportMetric(float64(sandboxes*commands)/elapsed.Seconds(), "cmds/s")
				b.ReportMetric(daemonCPU(b, "dockerd")-dockerd, "dockerd-cpu-s")
				b.ReportMetric(daemonCPU(b, "containerd")-containerd, "containerd-cpu-s")
			}
			reportLoad(b)
		})
	}
}

// daemonCPU returns the CPU seconds (user and system) the engine's daemon
// has used, from /proc/PID/stat: dockerd, or the containerd dockerd started
// (other containerd processes may run on the machine); 0 when it cannot be
// read.
func daemonCPU(b *testing.B, name string) float64 {
	pid := daemonPID("dockerd", "")
	if name == "containerd" {
		pid = daemonPID("containerd", pid)
	}
	if pid == "" {
		b.Logf("no %s process", name)
		return 0
	}
	f := procStat(pid)
	if len(f) < 13 {
		return 0
	}
	utime, _ := strconv.ParseFloat(f[11], 64)
	stime, _ := strconv.ParseFloat(f[12], 64)
	const ticks = 100 // USER_HZ on Linux
	return (utime + stime) / ticks
}

// daemonPID finds a process by name, the child of parent when parent is
// set.
func daemonPID(name, parent string) string {
	out, err := exec.Command("pidof", name).Output()
	if err != nil {
		return ""
	}
	for _, pid := range strings.Fields(string(out)) {
		if f := procStat(pid); parent == "" || len(f) > 1 && f[1] == parent {
			return pid
		}
	}
	return ""
}

// procStat returns the fields of /proc/PID/stat after the command name.
func procStat(pid string) []string {
	stat, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return nil
	}
	s := string(stat)
	return strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
}

// reportLoad reports the one-minute load average, for figures taken on a
// shared machine.
func reportLoad(b *testing.B) {
	if la, err := os.ReadFile("/proc/loadavg"); err == nil {
		if v, err := strconv.ParseFloat(strings.Fields(string(la))[0], 64); err == nil {
			b.ReportMetric(v, "load1")
		}
	}
}
