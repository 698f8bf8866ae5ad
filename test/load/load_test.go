//go:build linux

package load_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sync/errgroup"

	"github.com/swebox/swebox/internal/swebenchtest"
	"github.com/swebox/swebox/internal/testenv"
	"github.com/swebox/swebox/sandbox"
	"github.com/swebox/swebox/swebench"
	"github.com/swebox/swebox/swebench/dataset"
)

// baseline is what the process holds before a load: the leak checks compare
// against it once the load's clients are closed.
type baseline struct {
	goroutines, fds int
}

// takeBaseline counts goroutines and descriptors before the load. The
// clients that outlive the load (the probe) are used one call at a time, so
// they hold at most the one idle engine connection they already hold now.
func takeBaseline() baseline {
	return baseline{goroutines: runtime.NumGoroutine(), fds: openFDs()}
}

func openFDs() int {
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return 0
	}
	return len(entries)
}

// assertNoLeaks waits a little for goroutines and connections to wind down,
// then checks that the process is back to its baseline.
func (b baseline) assertNoLeaks(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) && (runtime.NumGoroutine() > b.goroutines || openFDs() > b.fds) {
		time.Sleep(100 * time.Millisecond)
	}
	if runtime.NumGoroutine() > b.goroutines {
		buf := make([]byte, 1<<20)
		t.Logf("goroutines:\n%s", buf[:runtime.Stack(buf, true)])
	}
	assert.LessOrEqual(t, runtime.NumGoroutine(), b.goroutines, "no goroutine outlives the load")
	assert.LessOrEqual(t, openFDs(), b.fds, "no file descriptor outlives the load")
}

// TestLoadSandboxes: 100 sandboxes created at once through the library, each
// running a command, then removed: every command's output is its own, and
// no container, volume, goroutine or file descriptor is left.
func TestLoadSandboxes(t *testing.T) {
	const n = 100
	probe := testenv.Client(t) // skips without an engine; counts leftovers
	base := takeBaseline()
	c, err := sandbox.New(sandbox.WithSession(probe.Session()))
	require.NoError(t, err)

	start := time.Now()
	var g errgroup.Group
	var viaAgent atomic.Int64
	for i := range n {
		g.Go(func() error {
			spec := sandbox.Spec{Image: testenv.Image(), Limits: sandbox.Limits{Memory: 64 << 20, NanoCPUs: 2e8, PidsLimit: 32}}
			sb, err := c.Create(context.Background(), spec)
			if err != nil {
				return fmt.Errorf("sandbox %d: %w", i, err)
			}
			res, err := sb.Exec(context.Background(), sandbox.ExecRequest{Cmd: []string{"echo", strconv.Itoa(i)}, Timeout: 2 * time.Minute})
			if sb.UsesExecAgent() {
				viaAgent.Add(1)
			}
			rerr := sb.Remove(context.Background())
			if err != nil {
				return fmt.Errorf("sandbox %d: %w", i, err)
			}
			if rerr != nil {
				return fmt.Errorf("sandbox %d: %w", i, rerr)
			}
			if got := strings.TrimSpace(res.Stdout.String()); got != strconv.Itoa(i) || res.ExitCode != 0 {
				return fmt.Errorf("sandbox %d: exit %d, output %q", i, res.ExitCode, got)
			}
			return nil
		})
	}
	require.NoError(t, g.Wait())
	t.Logf("%d sandboxes created, used and removed at once in %s; %d commands went through the exec agent", n, time.Since(start).Round(time.Millisecond), viaAgent.Load())
	// The exec agent is the default transport on a local engine; a
	// sandbox whose agent did not answer in time uses the engine's exec.
	assert.Positive(t, viaAgent.Load(), "commands through the exec agent")
	assert.Equal(t, testenv.Leftovers{}, testenv.CountLeftovers(t, probe, probe.Session()))
	require.NoError(t, c.Close())
	base.assertNoLeaks(t)
}

// TestLoadEvaluate: an evaluation with four times as many workers as cores,
// in-process: every verdict is the expected one, and nothing is left behind.
func TestLoadEvaluate(t *testing.T) {
	probe := testenv.Client(t)
	p := swebenchtest.NewProject(t)
	var ds []dataset.Instance
	var preds []dataset.Prediction
	expected := map[string]swebench.Status{}
	for i := range 16 {
		id := fmt.Sprintf("calc__calc-%d", i)
		status, patch := swebench.StatusResolved, swebenchtest.Gold
		switch i % 4 {
		case 1:
			status, patch = swebench.StatusUnresolved, swebenchtest.Wrong
		case 3:
			status, patch = swebench.StatusUnresolved, swebenchtest.Regression
		}
		ds = append(ds, p.Instance(id))
		preds = append(preds, swebenchtest.Pred(id, patch))
		expected[id] = status
	}
	base := takeBaseline()
	c, err := sandbox.New(sandbox.WithSession(probe.Session()))
	require.NoError(t, err)
	cfg := p.Config(t, c, "load", ds, preds)
	cfg.MaxWorkers = 8
	cfg.Timeout = 2 * time.Minute

	start := time.Now()
	res, err := swebench.Evaluate(context.Background(), cfg)
	require.NoError(t, err)
	took := time.Since(start)
	t.Logf("%d instances, %d workers: %s, %.0f instances per minute", len(ds), cfg.MaxWorkers, took.Round(time.Millisecond), float64(len(ds))/took.Minutes())
	for _, r := range res.Instances {
		assert.Equal(t, expected[r.InstanceID], r.Status, "%s: %s", r.InstanceID, r.Error)
	}
	assert.Len(t, res.Instances, len(ds))
	assert.Equal(t, testenv.Leftovers{}, testenv.CountLeftovers(t, probe, probe.Session()))
	require.NoError(t, c.Close())
	base.assertNoLeaks(t)
}

// TestLoad200 runs 200 instances of the eval command's demo dataset (each
// row replicated under new ids; the one that hangs until the timeout is left
// out) with 8 workers through the eval command, samples the process's memory
// and descriptors while it runs, and checks every verdict.
func TestLoad200(t *testing.T) {
	if os.Getenv("SWEBOX_LOAD") != "1" {
		t.Skip("set SWEBOX_LOAD=1 to run the 200-instance load test (a few minutes)")
	}
	const n, workers = 200, 8
	probe := testenv.Client(t)
	bin := swebenchtest.BuildEval(t)
	demo := swebenchtest.ExportDemo(t, bin)
	var rows []swebenchtest.DemoRow
	for _, r := range demo.Rows {
		if !strings.Contains(r.Shows, "hang") {
			rows = append(rows, r)
		}
	}
	dir := t.TempDir()
	ds, preds, expected := swebenchtest.Replicate(t, filepath.Join(dir, "input"), rows, n)
	runID := "load200-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	reportDir := filepath.Join(dir, "reports")
	cmd := exec.Command(bin, "-d", ds, "-p", preds, "--repos", demo.Repos, "--run_id", runID,
		"--max_workers", strconv.Itoa(workers), "--timeout", "300",
		"--log_dir", filepath.Join(dir, "logs"), "--report_dir", reportDir)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "TMPDIR="+filepath.Join(dir, "tmp"), "XDG_CACHE_HOME="+filepath.Join(dir, "cache"))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "tmp"), 0o755))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out

	start := time.Now()
	require.NoError(t, cmd.Start())
	samples := sampleProcess(cmd.Process.Pid)
	err := cmd.Wait()
	took := time.Since(start)
	peak := samples()
	require.NoError(t, err, "%s", out.String())
	maxRSS := int64(cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss) << 10

	t.Logf("%d instances, %d workers, %d CPUs: wall %s, %.1f instances per minute, peak RSS %.1f MiB, at most %d open fds and %d threads",
		n, workers, runtime.NumCPU(), took.Round(time.Second), float64(n)/took.Minutes(), float64(maxRSS)/(1<<20), peak.fds, peak.threads)

	rep := swebenchtest.RunReport(t, filepath.Join(reportDir, rows[0].Prediction["model_name_or_path"].(string)+"."+runID+".json"))
	got := map[string]swebench.Status{}
	for key, status := range map[string]swebench.Status{
		"resolved_ids": swebench.StatusResolved, "unresolved_ids": swebench.StatusUnresolved,
		"error_ids": swebench.StatusError, "empty_patch_ids": swebench.StatusEmptyPatch,
	} {
		for _, id := range swebenchtest.IDs(rep, key) {
			got[id] = status
		}
	}
	assert.Len(t, got, n)
	wrong := 0
	for id, want := range expected {
		if got[id] != want {
			wrong++
			t.Errorf("%s: got %q, want %q", id, got[id], want)
		}
	}
	assert.Zero(t, wrong, "every verdict is the expected one")
	assert.Zero(t, swebenchtest.CountRunContainers(t, probe, runID), "no container of the run is left")
	assert.Less(t, maxRSS, int64(512<<20), "the eval process stays under 512 MiB")
	assert.Less(t, peak.fds, 64+16*workers, "open descriptors stay bounded by the workers, not the instances")
}

type procPeak struct{ fds, threads int }

// sampleProcess polls /proc/<pid> every 200 ms until the returned function
// is called, and then returns the peaks it saw.
func sampleProcess(pid int) func() procPeak {
	var mu sync.Mutex
	var peak procPeak
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			case <-time.After(200 * time.Millisecond):
			}
			fds, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
			threads := 0
			if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid)); err == nil {
				for _, line := range strings.Split(string(b), "\n") {
					if v, ok := strings.CutPrefix(line, "Threads:"); ok {
						threads, _ = strconv.Atoi(strings.TrimSpace(v))
					}
				}
			}
			mu.Lock()
			peak.fds, peak.threads = max(peak.fds, len(fds)), max(peak.threads, threads)
			mu.Unlock()
		}
	}()
	return func() procPeak {
		close(stop)
		<-done
		mu.Lock()
		defer mu.Unlock()
		return peak
	}
}
