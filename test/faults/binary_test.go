package faults_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/internal/swebenchtest"
	"github.com/swebox/swebox/internal/testenv"
	"github.com/swebox/swebox/swebench"
	"github.com/swebox/swebox/swebench/grade"
	"github.com/swebox/swebox/swebench/harness"
)

// evalEnv runs the eval command on a replicated demo dataset, every path it
// writes kept under one temporary directory.
type evalEnv struct {
	bin, dir, runID      string
	dataset, predictions string
	repos                string
	expected             map[string]swebench.Status
	logDir, reportDir    string
	model                string
}

// newEvalEnv writes a dataset of the demo's rows picked by pick (each
// replicated under new ids, in the order given).
func newEvalEnv(t *testing.T, bin string, pick func(rows []swebenchtest.DemoRow) []swebenchtest.DemoRow) *evalEnv {
	t.Helper()
	demo := swebenchtest.ExportDemo(t, bin)
	rows := pick(demo.Rows)
	e := &evalEnv{bin: bin, dir: t.TempDir(), repos: demo.Repos, runID: "faults-" + strings.ToLower(testenv.Session(t)[2:])}
	e.runID = regexp.MustCompile(`[^a-z0-9.-]`).ReplaceAllString(e.runID, "-")
	e.dataset, e.predictions, e.expected = swebenchtest.Replicate(t, filepath.Join(e.dir, "input"), rows, len(rows))
	e.logDir, e.reportDir = filepath.Join(e.dir, "logs"), filepath.Join(e.dir, "reports")
	e.model = rows[0].Prediction["model_name_or_path"].(string)
	return e
}

// command is the eval command with the run's flags, then extra.
func (e *evalEnv) command(extra ...string) *exec.Cmd {
	args := append([]string{"-d", e.dataset, "-p", e.predictions, "--repos", e.repos, "--run_id", e.runID,
		"--log_dir", e.logDir, "--report_dir", e.reportDir}, extra...)
	cmd := exec.Command(e.bin, args...)
	cmd.Dir = e.dir
	cmd.Env = append(os.Environ(), "TMPDIR="+filepath.Join(e.dir, "tmp"), "XDG_CACHE_HOME="+filepath.Join(e.dir, "cache"))
	_ = os.MkdirAll(filepath.Join(e.dir, "tmp"), 0o755)
	return cmd
}

func (e *evalEnv) instanceDir(id string) string {
	return filepath.Join(e.logDir, "run_evaluation", e.runID, e.model, id)
}

// reports maps each instance with a report.json to its content.
func (e *evalEnv) reports(t *testing.T) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	paths, err := filepath.Glob(filepath.Join(e.logDir, "run_evaluation", e.runID, "*", "*", "report.json"))
	require.NoError(t, err)
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err == nil {
			out[filepath.Base(filepath.Dir(p))] = b
		}
	}
	return out
}

// rowsWhere keeps the demo rows expected to end with one of statuses.
func rowsWhere(statuses ...swebench.Status) func([]swebenchtest.DemoRow) []swebenchtest.DemoRow {
	return func(rows []swebenchtest.DemoRow) []swebenchtest.DemoRow {
		var out []swebenchtest.DemoRow
		for _, r := range rows {
			for _, s := range statuses {
				if r.Expected == s {
					out = append(out, r)
				}
			}
		}
		return out
	}
}

// hanging is the demo row whose prediction loops forever.
func hanging(t *testing.T, rows []swebenchtest.DemoRow) swebenchtest.DemoRow {
	t.Helper()
	for _, r := range rows {
		if r.Expected == swebench.StatusError && strings.Contains(r.Shows, "hang") {
			return r
		}
	}
	t.Fatal("the demo has no hanging instance")
	return swebenchtest.DemoRow{}
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, what string, timeout time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestEvalEngineUnreachable: the eval command with no engine at its address
// says so, exits 1 and writes nothing, whether the address comes from
// DOCKER_HOST or --docker_host.
func TestEvalEngineUnreachable(t *testing.T) {
	bin := swebenchtest.BuildEval(t)
	e := newEvalEnv(t, bin, func(rows []swebenchtest.DemoRow) []swebenchtest.DemoRow { return rows })
	const host = "unix:///nonexistent/docker.sock"
	type testCase struct {
		name string
		env  []string
		args []string
	}
	for _, tc := range []testCase{
		{name: "DOCKER_HOST", env: []string{"DOCKER_HOST=" + host}},
		{name: "--docker_host", args: []string{"--docker_host", host}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := e.command(tc.args...)
			cmd.Env = append(cmd.Env, tc.env...)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			var xe *exec.ExitError
			require.True(t, errors.As(err, &xe), "exits non-zero: %v\n%s%s", err, stdout.String(), stderr.String())
			assert.Equal(t, 1, xe.ExitCode())
			assert.Contains(t, stderr.String(), host, "the message names the address")
			assert.Contains(t, stderr.String(), "Docker engine")
			assert.NotContains(t, stderr.String(), "panic")
			assert.NoDirExists(t, e.logDir, "nothing is written under --log_dir")
			assert.NoDirExists(t, e.reportDir, "nothing is written under --report_dir")
		})
	}
}

// TestEvalSIGKILL: the eval command killed with SIGKILL in the middle of a
// run, while an instance's tests run, leaves no half-written file that a
// rerun trusts: every report.json is its instance's whole report, and a
// test_output.txt (which a regrade grades) exists only for tests that ran
// to their end. `eval prune --run_id` removes the containers it left; a rerun
// with the same run id runs exactly the instances that had no report.json,
// leaves the others alone and clears the temporary files of cut writes.
func TestEvalSIGKILL(t *testing.T) {
	bin := swebenchtest.BuildEval(t)
	c := testenv.Client(t)
	var hang swebenchtest.DemoRow
	e := newEvalEnv(t, bin, func(rows []swebenchtest.DemoRow) []swebenchtest.DemoRow {
		// The hanging instance first, so that one worker holds a container
		// when the process dies; then the quick ones, twice over.
		hang = hanging(t, rows)
		quick := rowsWhere(swebench.StatusResolved, swebench.StatusUnresolved)(rows)
		return append([]swebenchtest.DemoRow{hang}, append(quick, quick...)...)
	})
	cmd := e.command("--max_workers", "2", "--timeout", "300")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	require.NoError(t, cmd.Start())
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	hangID := hang.ID + "x0"
	waitFor(t, "three finished instances and the hanging one in its tests", 3*time.Minute, func() bool {
		log, _ := os.ReadFile(filepath.Join(e.instanceDir(hangID), "run_instance.log"))
		return len(e.reports(t)) >= 3 && strings.Contains(string(log), "Running eval script")
	})
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	<-exited

	before := e.reports(t)
	for id, b := range before {
		var rep grade.InstanceReport
		if assert.NoError(t, rep.UnmarshalJSON(b), "%s/report.json is whole", id) {
			assert.Equal(t, id, rep.InstanceID, "%s/report.json is its instance's report", id)
		}
	}
	dirs, err := filepath.Glob(filepath.Join(e.logDir, "run_evaluation", e.runID, "*", "*"))
	require.NoError(t, err)
	require.NotEmpty(t, dirs)
	for _, dir := range dirs {
		if out, err := os.ReadFile(filepath.Join(dir, "test_output.txt")); err == nil {
			whole := strings.Contains(string(out), harness.EndTestOutput) || strings.Contains(string(out), "Timeout error:")
			assert.True(t, whole, "%s: a test_output.txt holds the whole run of the tests", filepath.Base(dir))
		}
	}
	assert.NoFileExists(t, filepath.Join(e.instanceDir(hangID), "test_output.txt"), "the tests killed midway left no log to grade")
	tmp, _ := filepath.Glob(filepath.Join(e.logDir, "run_evaluation", e.runID, "*", "*", ".*.tmp-*"))
	t.Logf("%d reports before the kill, %d temporary files left: %v", len(before), len(tmp), tmp)

	// A container whose creation the engine was still serving when the
	// process died appears after the kill: wait until the engine is done.
	orphans := -1
	waitFor(t, "the engine to finish the killed process's requests", time.Minute, func() bool {
		n := swebenchtest.CountRunContainers(t, c, e.runID)
		settled := n == orphans
		orphans = n
		if !settled {
			time.Sleep(2 * time.Second)
		}
		return settled
	})
	// The killed process's sandboxes end with it: their lease stops them
	// and the engine removes them (AutoRemove). What may be left is a
	// container the engine created but nothing started, which eval prune
	// (or the next client's sweep) removes.
	running, err := testenv.Docker(t, c).ContainerList(context.Background(), container.ListOptions{
		Filters: filters.NewArgs(filters.Arg("label", swebench.LabelRun+"="+e.runID), filters.Arg("status", "running"))})
	require.NoError(t, err)
	assert.Empty(t, running, "the killed process left no running container (%d of the run left in all)", orphans)
	prune := exec.Command(bin, "prune", "--run_id", e.runID)
	pout, err := prune.CombinedOutput()
	require.NoError(t, err, "%s", pout)
	assert.Zero(t, swebenchtest.CountRunContainers(t, c, e.runID), "eval prune removes the orphans: %s", pout)

	// The rerun: a short timeout ends the hanging instance sooner.
	cmd = e.command("--max_workers", "2", "--timeout", "10")
	rerun, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", rerun)
	skipped, ran := progressIDs(string(rerun))
	var want []string
	for id := range e.expected {
		if _, done := before[id]; !done {
			want = append(want, id)
		}
	}
	assert.ElementsMatch(t, keysOf(before), skipped, "the rerun skips the finished instances:\n%s", rerun)
	assert.ElementsMatch(t, want, ran, "and runs exactly the others")
	after := e.reports(t)
	for id, b := range before {
		assert.Equal(t, string(b), string(after[id]), "%s/report.json is left alone", id)
	}
	rep := swebenchtest.RunReport(t, filepath.Join(e.reportDir, e.model+"."+e.runID+".json"))
	assertVerdicts(t, rep, e.expected)
	assert.Zero(t, swebenchtest.CountRunContainers(t, c, e.runID))
	tmp, _ = filepath.Glob(filepath.Join(e.logDir, "run_evaluation", e.runID, "*", "*", ".*.tmp-*"))
	assert.Empty(t, tmp, "the rerun removed the temporary files of cut writes")
}

// TestEvalSIGINT: Ctrl-C stops the run and removes every container of it
// within seconds, keeps the finished reports and exits 130.
func TestEvalSIGINT(t *testing.T) {
	bin := swebenchtest.BuildEval(t)
	c := testenv.Client(t)
	e := newEvalEnv(t, bin, func(rows []swebenchtest.DemoRow) []swebenchtest.DemoRow {
		hang := hanging(t, rows)
		quick := rowsWhere(swebench.StatusResolved)(rows)
		return append(append([]swebenchtest.DemoRow{}, quick...), hang, hang, hang)
	})
	cmd := e.command("--max_workers", "3", "--timeout", "300")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	require.NoError(t, cmd.Start())
	var wg sync.WaitGroup
	wg.Add(1)
	var waitErr error
	go func() { defer wg.Done(); waitErr = cmd.Wait() }()
	// Wait until the quick instances are done and the hanging ones run
	// their tests.
	var hangs []string
	for id, st := range e.expected {
		if st == swebench.StatusError {
			hangs = append(hangs, id)
		}
	}
	waitFor(t, "the hanging instances to run their tests", 3*time.Minute, func() bool {
		for _, id := range hangs {
			log, _ := os.ReadFile(filepath.Join(e.instanceDir(id), "run_instance.log"))
			if !strings.Contains(string(log), "Running eval script") {
				return false
			}
		}
		return len(e.reports(t)) == len(e.expected)-len(hangs)
	})
	require.Equal(t, 3, swebenchtest.CountRunContainers(t, c, e.runID))
	finished := e.reports(t)
	require.NotEmpty(t, finished)
	start := time.Now()
	require.NoError(t, cmd.Process.Signal(os.Interrupt))
	wg.Wait()
	took := time.Since(start)
	t.Logf("exited %s after SIGINT:\n%s", took.Round(time.Millisecond), out.String())

	var xe *exec.ExitError
	require.True(t, errors.As(waitErr, &xe), "%v", waitErr)
	assert.Equal(t, 130, xe.ExitCode())
	assert.Zero(t, swebenchtest.CountRunContainers(t, c, e.runID), "every container of the run is removed")
	assert.Less(t, took, 20*time.Second, "within seconds")
	after := e.reports(t)
	for id := range finished {
		assert.Contains(t, after, id, "finished reports are kept")
	}
}

var progressLine = regexp.MustCompile(`(?m)^\[\d+/\d+\] (\S+): (.*)$`)

// progressIDs reads the eval command's progress lines: the instances skipped
// for a report.json of an earlier run, and those it ran.
func progressIDs(out string) (skipped, ran []string) {
	for _, m := range progressLine.FindAllStringSubmatch(out, -1) {
		if strings.Contains(m[2], "report.json from an earlier run") || strings.Contains(m[2], "in an earlier run, not retried") {
			skipped = append(skipped, m[1])
		} else {
			ran = append(ran, m[1])
		}
	}
	return skipped, ran
}

// assertVerdicts checks every instance of a run report against expected.
func assertVerdicts(t *testing.T, rep map[string]any, expected map[string]swebench.Status) {
	t.Helper()
	got := map[string]swebench.Status{}
	for key, status := range map[string]swebench.Status{
		"resolved_ids": swebench.StatusResolved, "unresolved_ids": swebench.StatusUnresolved,
		"error_ids": swebench.StatusError, "empty_patch_ids": swebench.StatusEmptyPatch,
	} {
		for _, id := range swebenchtest.IDs(rep, key) {
			got[id] = status
		}
	}
	var wrong []string
	for id, want := range expected {
		if got[id] != want {
			wrong = append(wrong, id+": got "+string(got[id])+", want "+string(want))
		}
	}
	sort.Strings(wrong)
	assert.Empty(t, wrong, "every verdict is the expected one")
}

func keysOf[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
