package main

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/internal/swebenchtest"
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

// SIGINT in the middle of the plain demo (no arguments, as `go run
// ./examples/eval` starts it): the process exits with 130, removes its
// containers (prune finds nothing of the run), keeps the reports of the
// instances that finished and prints the command that resumes; that
// command, pasted into bash, resumes and finishes with the expected
// verdicts.
func TestInterruptAndResume(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs containers")
	}
	skipWithoutEngine(t)
	bin := swebenchtest.BuildEval(t)

	work := t.TempDir() // the plain demo writes logs/ in the working directory
	cmd := exec.Command(bin, imageArgs()...)
	cmd.Dir = work
	log, err := interruptAfterVerdict(t, cmd, nil)
	t.Log(log)
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee)
	assert.Equal(t, exitInterrupted, ee.ExitCode())
	hint := regexp.MustCompile(`(?m)interrupted; finished reports are kept.*To resume:\n  (.+)$`).FindStringSubmatch(log)
	require.NotNil(t, hint, "no resume command in:\n%s", log)
	resume := hint[1]
	assert.True(t, strings.HasPrefix(resume, bin+" demo "), "the resume command runs this binary's demo verb: %s", resume)
	runID := regexp.MustCompile(`--run_id (\S+)`).FindStringSubmatch(resume)
	require.NotNil(t, runID, "the resume command names the run: %s", resume)

	reports, err := filepath.Glob(filepath.Join(work, "logs", "run_evaluation", runID[1], demoModel, "*", "report.json"))
	require.NoError(t, err)
	assert.NotEmpty(t, reports, "the finished instance's report is kept")
	assert.NoFileExists(t, filepath.Join(work, "logs", "run_evaluation", runID[1], demoModel, "swebox__demo-6", "test_output.txt"),
		"the run stopped before the hanging instance's timeout")

	var pruneOut, pruneErr bytes.Buffer
	require.Equal(t, exitOK, run(context.Background(), []string{"prune", "--run_id", runID[1]}, nil, &pruneOut, &pruneErr), pruneErr.String())
	assert.Contains(t, pruneOut.String(), "removed 0 containers, 0 volumes, 0 networks", "the interrupted run left nothing behind")

	// Paste the printed command into bash, in the same directory.
	var stdout, stderr bytes.Buffer
	again := exec.Command("bash", "-c", resume)
	again.Dir, again.Stdout, again.Stderr = work, &stdout, &stderr
	require.NoError(t, again.Run(), "%s\nstdout:\n%s\nstderr:\n%s", resume, stdout.String(), stderr.String())
	assert.Contains(t, stderr.String(), "(report.json from an earlier run)")
	assert.Contains(t, stdout.String(), "demo: all 7 verdicts are the expected ones.")
}

// The command `eval demo --export` prints runs when pasted into bash, and
// its results go to standard output, so that `> file` captures the summary
// table while the progress lines stay on standard error.
func TestExportedCommandRuns(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs containers")
	}
	skipWithoutEngine(t)
	bin := swebenchtest.BuildEval(t)
	work := t.TempDir()

	// Started by a bare name found on PATH, as a user's `eval` would be,
	// it prints its absolute path: pasted, a bare "eval" is bash's builtin.
	export := exec.Command(bin, "demo", "--export", "demo")
	export.Args[0] = "eval"
	export.Dir = work
	out, err := export.Output()
	require.NoError(t, err)
	m := regexp.MustCompile(`(?m)^run it with:\n  (.+)$`).FindStringSubmatch(string(out))
	require.NotNil(t, m, "no command in:\n%s", out)
	pasted := m[1]
	require.True(t, strings.HasPrefix(pasted, bin+" -d demo/dataset.jsonl "), pasted)

	script := pasted + " " + strings.Join(imageArgs(), " ") + " >run.log 2>progress.log"
	sh := exec.Command("bash", "-c", script)
	sh.Dir = work
	shOut, err := sh.CombinedOutput()
	require.NoError(t, err, "%s: %s", script, shOut)
	stdout, err := os.ReadFile(filepath.Join(work, "run.log"))
	require.NoError(t, err)
	stderr, err := os.ReadFile(filepath.Join(work, "progress.log"))
	require.NoError(t, err)
	t.Logf("stdout:\n%s\nstderr:\n%s", stdout, stderr)
	assert.Regexp(t, `(?m)^INSTANCE +OUTCOME +F2P +P2P +TIME +NOTE$`, string(stdout))
	assert.Contains(t, string(stdout), "outcomes: 2 resolved, 2 unresolved, 1 patch_failed, 1 timed_out, 1 empty_patch\n")
	assert.Contains(t, string(stdout), "run report: ")
	assert.NotContains(t, string(stdout), "[1/", "progress lines belong on standard error")
	assert.Regexp(t, `(?m)^\[\d+/\d+\] swebox__demo-1: resolved `, string(stderr))
	assert.Regexp(t, `(?m)^\[\d+/\d+\] swebox__demo-4: patch_failed after `, string(stderr))
	assert.NotContains(t, string(stderr), "INSTANCE", "the summary belongs on standard output")
	assert.FileExists(t, filepath.Join(work, "logs", "run_evaluation", "demo", demoModel, "swebox__demo-1", "report.json"))
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
