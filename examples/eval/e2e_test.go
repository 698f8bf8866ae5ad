package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/internal/testenv"
	"github.com/swebox/swebox/swebench"
	"github.com/swebox/swebox/swebench/grade"
)

// skipWithoutEngine skips the test when no Docker engine answers or the test
// image is missing.
func skipWithoutEngine(t *testing.T) {
	t.Helper()
	testenv.Client(t)
}

// imageArgs passes SWEBOX_TEST_IMAGE on when it names another image than
// the default.
func imageArgs() []string {
	if img := os.Getenv("SWEBOX_TEST_IMAGE"); img != "" && img != swebench.DefaultImage {
		return []string{"--image", img}
	}
	return nil
}

// The demo gives each instance the verdict it was written for, and a rerun
// with the same run id resumes: every instance is skipped with the same
// verdict.
func TestDemoEndToEnd(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs containers for about 30 s")
	}
	skipWithoutEngine(t)
	r := buildDemoRepoT(t)
	cases, err := readDemoCases(demoFS(), r.Repo, r.Commits)
	require.NoError(t, err)

	logDir := t.TempDir()
	args := append([]string{"demo", "--log_dir", logDir, "--run_id", "e2e", "--max_workers", "4"}, imageArgs()...)
	var out bytes.Buffer
	code := run(context.Background(), args, nil, &out, &out)
	t.Log(out.String())
	require.Equal(t, exitOK, code, "the demo failed or a verdict differs")
	assert.Contains(t, out.String(), "demo: all 7 verdicts are the expected ones.")
	assert.Contains(t, out.String(), "outcomes: 2 resolved, 2 unresolved, 1 patch_failed, 1 timed_out, 1 empty_patch\n",
		"every instance has one typed outcome")

	// The run report, written where --log_dir says (the demo's report_dir
	// follows it), holds each instance in the expected category.
	reportPath := filepath.Join(logDir, demoModel+".e2e.json")
	data, err := os.ReadFile(reportPath)
	require.NoError(t, err)
	var rep grade.RunReport
	require.NoError(t, rep.UnmarshalJSON(data))
	want := map[swebench.Status][]string{}
	for _, c := range cases {
		want[c.Expected] = append(want[c.Expected], c.Instance.InstanceID)
	}
	assert.Equal(t, len(cases), rep.TotalInstances)
	assert.Equal(t, want[swebench.StatusResolved], rep.ResolvedIDs)
	assert.Equal(t, want[swebench.StatusUnresolved], rep.UnresolvedIDs)
	assert.Equal(t, want[swebench.StatusError], rep.ErrorIDs)
	assert.Len(t, rep.Outcomes, len(cases), "the run report gives every instance its outcome")
	assert.Equal(t, want[swebench.StatusEmptyPatch], rep.EmptyPatchIDs)

	// Each failure for the reason the demo wrote it for.
	dir := filepath.Join(logDir, "run_evaluation", "e2e", demoModel)
	readReport := func(id string) grade.InstanceReport {
		b, err := os.ReadFile(filepath.Join(dir, id, "report.json"))
		require.NoError(t, err, id)
		var r grade.InstanceReport
		require.NoError(t, r.UnmarshalJSON(b), id)
		return r
	}
	assert.Equal(t, []string{"tests/test_numbers.py::test_clamp_none_means_unbounded"}, readReport("swebox__demo-2").TestsStatus.FailToPass.Failure)
	r3 := readReport("swebox__demo-3")
	assert.Empty(t, r3.TestsStatus.FailToPass.Failure)
	assert.Equal(t, []string{"tests/test_numbers.py::test_parse_int_stays_int"}, r3.TestsStatus.PassToPass.Failure)
	assert.NoFileExists(t, filepath.Join(dir, "swebox__demo-4", "report.json"))
	assert.NoFileExists(t, filepath.Join(dir, "swebox__demo-4", "test_output.txt"), "a patch that does not apply never reaches the tests")
	log6, err := os.ReadFile(filepath.Join(dir, "swebox__demo-6", "test_output.txt"))
	require.NoError(t, err)
	assert.Contains(t, string(log6), "Timeout error: 20 seconds exceeded.")
	assert.NoDirExists(t, filepath.Join(dir, "swebox__demo-5"), "an empty patch is not run")

	// Rewrite mode regrades every test_output.txt without containers, with
	// the official rewrite rules: the timed-out log has no end marker, so
	// swebox__demo-6 now gets a report.json and counts as unresolved.
	out.Reset()
	code = run(context.Background(), append(args, "--rewrite_reports", "true"), nil, &out, &out)
	t.Log(out.String())
	require.Equal(t, exitOK, code)
	rep = grade.RunReport{}
	data, err = os.ReadFile(reportPath)
	require.NoError(t, err)
	require.NoError(t, rep.UnmarshalJSON(data))
	assert.Equal(t, want[swebench.StatusResolved], rep.ResolvedIDs)
	assert.Equal(t, append(append([]string{}, want[swebench.StatusUnresolved]...), "swebox__demo-6"), rep.UnresolvedIDs)
	assert.Equal(t, []string{"swebox__demo-4"}, rep.ErrorIDs)
	assert.False(t, readReport("swebox__demo-6").PatchSuccessfullyApplied)

	// Rerun of the instances that have a report.json: resumed, each skipped
	// with the same verdict.
	out.Reset()
	code = run(context.Background(), append(args, "-i", "swebox__demo-1", "swebox__demo-2", "swebox__demo-3", "swebox__demo-7"), nil, &out, &out)
	t.Log(out.String())
	require.Equal(t, exitOK, code)
	for _, line := range []string{
		"swebox__demo-1: resolved (report.json from an earlier run)",
		"swebox__demo-2: unresolved (report.json from an earlier run)",
		"swebox__demo-3: unresolved (report.json from an earlier run)",
		"swebox__demo-7: resolved (report.json from an earlier run)",
		"demo: all 4 verdicts are the expected ones.",
	} {
		assert.Contains(t, out.String(), line)
	}
}

// exportDemoT writes the demo's inputs for a run outside the demo verb.
func exportDemoT(t *testing.T) (dataset, preds, repos string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "demo")
	var out bytes.Buffer
	require.Equal(t, exitOK, run(context.Background(), []string{"demo", "--export", dir}, nil, &out, &out), out.String())
	return filepath.Join(dir, demoDatasetFile), filepath.Join(dir, demoPredictionsFile), filepath.Join(dir, "repos")
}

// An infrastructure problem stops the run before any instance starts, with
// exit status 1 and a message saying what to do.
func TestRunInfrastructureFailures(t *testing.T) {
	ds, preds, repos := exportDemoT(t)
	base := []string{"-d", ds, "-p", preds, "--repos", repos, "--run_id", "infra"}
	type testCase struct {
		name   string
		args   []string
		engine bool // needs a working engine
		want   []string
	}
	cases := []testCase{
		{name: "engine unreachable", args: []string{"--docker_host", "unix:///nonexistent/docker.sock"},
			want: []string{"cannot reach the engine at unix:///nonexistent/docker.sock", "Start the Docker engine"}},
		{name: "image missing", args: []string{"--image", "swebox/no-such-image:0"}, engine: true,
			want: []string{"missing images: swebox/no-such-image:0", "Build or load them"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.engine {
				skipWithoutEngine(t)
			}
			logDir := t.TempDir()
			var out bytes.Buffer
			code := run(context.Background(), append(append(base, "--log_dir", logDir), tc.args...), nil, &out, &out)
			assert.Equal(t, exitFailure, code, out.String())
			for _, w := range tc.want {
				assert.Contains(t, out.String(), w)
			}
			assert.NoDirExists(t, filepath.Join(logDir, "run_evaluation"), "nothing ran")
		})
	}
}

// SIGINT in the middle of a run: the process exits with 130, removes its
// containers (prune finds nothing of the run) and keeps the reports of the
// instances that finished; a rerun with the same run id resumes and finishes
// with the expected verdicts.
func TestInterruptAndResume(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs containers")
	}
	skipWithoutEngine(t)
	bin := testenv.BuildEval(t)

	runID := fmt.Sprintf("interrupt-%d", time.Now().UnixNano())
	logDir := t.TempDir()
	args := append([]string{"demo", "--log_dir", logDir, "--run_id", runID, "--max_workers", "2"}, imageArgs()...)
	log, err := interruptAfterVerdict(t, exec.Command(bin, args...), nil)
	t.Log(log)
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee)
	assert.Equal(t, exitInterrupted, ee.ExitCode())
	assert.Contains(t, log, "interrupted; finished reports are kept")

	reports, err := filepath.Glob(filepath.Join(logDir, "run_evaluation", runID, demoModel, "*", "report.json"))
	require.NoError(t, err)
	assert.NotEmpty(t, reports, "the finished instance's report is kept")
	assert.Less(t, len(reports), 4, "the run stopped before all were graded")

	var pruneOut, pruneErr bytes.Buffer
	require.Equal(t, exitOK, run(context.Background(), []string{"prune", "--run_id", runID}, nil, &pruneOut, &pruneErr), pruneErr.String())
	assert.Contains(t, pruneOut.String(), "removed 0 containers, 0 volumes, 0 networks", "the interrupted run left nothing behind")

	var again bytes.Buffer
	code := run(context.Background(), args[:len(args):len(args)], nil, &again, &again)
	t.Log(again.String())
	require.Equal(t, exitOK, code)
	assert.Contains(t, again.String(), "(report.json from an earlier run)")
	assert.Contains(t, again.String(), "demo: all 7 verdicts are the expected ones.")
}

// interruptAfterVerdict starts cmd, an eval run, and sends it SIGINT once
// an instance has a verdict (the demo's hanging instance, with its 20 s
// timeout, is still running then); atSignal runs just before the signal.
// It returns the run's standard error and what Wait returned.
func interruptAfterVerdict(t *testing.T, cmd *exec.Cmd, atSignal func()) (string, error) {
	t.Helper()
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	var log strings.Builder
	sc := bufio.NewScanner(stderr)
	finished := regexp.MustCompile(`^\[\d+/\d+\] \S+: (resolved|unresolved) `)
	for sc.Scan() {
		log.WriteString(sc.Text() + "\n")
		if finished.MatchString(sc.Text()) {
			if atSignal != nil {
				atSignal()
			}
			require.NoError(t, cmd.Process.Signal(os.Interrupt))
			break
		}
	}
	for sc.Scan() {
		log.WriteString(sc.Text() + "\n")
	}
	return log.String(), cmd.Wait()
}
