package swebench_test

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/internal/cienv"
	"github.com/swebox/swebox/internal/swebenchtest"
	"github.com/swebox/swebox/internal/testenv"
	"github.com/swebox/swebox/sandbox"
	"github.com/swebox/swebox/swebench"
	"github.com/swebox/swebox/swebench/dataset"
	"github.com/swebox/swebox/swebench/grade"
	"github.com/swebox/swebox/swebench/harness"
)

// The test project is testenv's: calc.add is wrong at base_commit; the test
// patch adds the test that shows it (FAIL_TO_PASS) beside two that already
// pass (PASS_TO_PASS).
var (
	goldPatch       = swebenchtest.Gold
	wrongPatch      = swebenchtest.Wrong
	regressionPatch = swebenchtest.Regression
	hangPatch       = swebenchtest.CalcDiff("    while True: pass", "    return a * b")
	badPatch        = "diff --git a/nothere.py b/nothere.py\n--- a/nothere.py\n+++ b/nothere.py\n@@ -1,2 +1,2 @@\n-x = 1\n+x = 2\n y = 3\n"
	pred            = swebenchtest.Pred
	byID            = swebenchtest.ByID
)

type fixture struct {
	client  *sandbox.Client
	project swebenchtest.Project
	dataset []dataset.Instance
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	f := &fixture{client: testenv.Client(t), project: swebenchtest.NewProject(t)}
	for _, id := range []string{"calc__calc-1", "calc__calc-2", "calc__calc-3", "calc__calc-4", "calc__calc-5", "calc__calc-6"} {
		f.dataset = append(f.dataset, f.project.Instance(id))
	}
	return f
}

// config evaluates f.dataset with the sandbox's default limits.
func (f *fixture) config(t testing.TB, runID string, preds []dataset.Prediction) swebench.Config {
	cfg := f.project.Config(t, f.client, runID, f.dataset, preds)
	cfg.Limits, cfg.TestOutputLimit, cfg.MaxWorkers = sandbox.Limits{}, 0, 3
	return cfg
}

func (f *fixture) containers(t testing.TB) int {
	return testenv.CountLeftovers(t, f.client, f.client.Session()).Containers
}

func TestEvaluateWorkspaceMode(t *testing.T) {
	f := newFixture(t)
	empty := ""
	preds := []dataset.Prediction{
		pred("calc__calc-1", goldPatch),
		pred("calc__calc-2", wrongPatch),
		pred("calc__calc-3", regressionPatch),
		pred("calc__calc-4", badPatch),
		{InstanceID: "calc__calc-5", ModelNameOrPath: "org/model", ModelPatch: &empty},
		pred("calc__calc-6", hangPatch),
	}
	cfg := f.config(t, "e2e", preds)
	var mu sync.Mutex
	var events []swebench.Event
	cfg.Progress = func(ev swebench.Event) { mu.Lock(); events = append(events, ev); mu.Unlock() }

	res, err := swebench.Evaluate(context.Background(), cfg)
	require.NoError(t, err)
	got := byID(res)
	left, err := os.ReadDir(cfg.WorkDir)
	require.NoError(t, err)
	assert.Empty(t, left, "a finished run leaves nothing under the work directory, not even its run's empty directories")

	type testCase struct {
		id      string
		status  swebench.Status
		f2p     swebench.Fraction
		p2p     swebench.Fraction
		outcome swebench.Outcome
		err     error
	}
	for _, tc := range []testCase{
		{id: "calc__calc-1", status: swebench.StatusResolved, outcome: swebench.OutcomeResolved, f2p: swebench.Fraction{Passed: 1, Total: 1}, p2p: swebench.Fraction{Passed: 2, Total: 2}},
		{id: "calc__calc-2", status: swebench.StatusUnresolved, outcome: swebench.OutcomeUnresolved, f2p: swebench.Fraction{Passed: 0, Total: 1}, p2p: swebench.Fraction{Passed: 2, Total: 2}},
		{id: "calc__calc-3", status: swebench.StatusUnresolved, outcome: swebench.OutcomeUnresolved, f2p: swebench.Fraction{Passed: 1, Total: 1}, p2p: swebench.Fraction{Passed: 0, Total: 2}},
		{id: "calc__calc-4", status: swebench.StatusError, outcome: swebench.OutcomePatchFailed, err: swebench.ErrPatchApply},
		{id: "calc__calc-6", status: swebench.StatusError, outcome: swebench.OutcomeTimedOut, err: swebench.ErrTestTimeout},
	} {
		t.Run(tc.id, func(t *testing.T) {
			r, ok := got[tc.id]
			require.True(t, ok)
			assert.Equal(t, tc.status, r.Status, r.Error)
			assert.Equal(t, tc.f2p, r.FailToPass)
			assert.Equal(t, tc.p2p, r.PassToPass)
			assert.Equal(t, tc.outcome, r.Outcome)
			assert.Equal(t, tc.outcome, res.Outcomes[tc.id], "the run's outcomes")
			if tc.err != nil {
				assert.ErrorIs(t, r.Err, tc.err)
				assert.Equal(t, r.Err.Error(), r.Error, "the string is the error's text")
			} else {
				assert.NoError(t, r.Err)
			}
		})
	}
	// The result carries what the logs say of the patch and the tests.
	applied := got["calc__calc-1"]
	require.NotEmpty(t, applied.PatchAttempts)
	last := applied.PatchAttempts[len(applied.PatchAttempts)-1]
	assert.True(t, last.Applied())
	assert.Equal(t, applied.PatchCommand, last.Command)
	testOutput, err := os.ReadFile(filepath.Join(applied.LogDir, "test_output.txt"))
	require.NoError(t, err)
	assert.NotEmpty(t, applied.LogTail)
	assert.Equal(t, string(testOutput), applied.LogTail, "a short test_output.txt is its own tail")
	failed := got["calc__calc-4"]
	require.NotEmpty(t, failed.PatchAttempts)
	runLog, err := os.ReadFile(filepath.Join(failed.LogDir, "run_instance.log"))
	require.NoError(t, err)
	for _, a := range failed.PatchAttempts {
		assert.False(t, a.Applied(), a.Command)
		assert.NotEmpty(t, a.Output, a.Command)
		assert.Contains(t, string(runLog), "$ "+a.Command+" (exit ", "run_instance.log lists the attempt the result carries")
	}
	assert.Empty(t, failed.LogTail, "the tests did not run")
	assert.Contains(t, got["calc__calc-6"].LogTail, "Timeout error", "a timed-out run's log ends with upstream's timeout line")

	assert.Equal(t, swebench.OutcomeEmptyPatch, res.Outcomes["calc__calc-5"])
	assert.Len(t, res.Outcomes, 6, "one outcome per submitted instance")
	assert.Equal(t, string(swebench.OutcomePatchFailed), swebenchtest.RunReport(t, res.ReportPath)[grade.OutcomesKey].(map[string]any)["calc__calc-4"], "the run report holds them")
	_, ran := got["calc__calc-5"]
	assert.False(t, ran, "an empty patch is not run")

	// Official layout and contents.
	dir := filepath.Join(cfg.LogDir, "run_evaluation", "e2e", "org__model")
	for _, f := range []string{"patch.diff", "eval.sh", "test_output.txt", "run_instance.log", "report.json"} {
		assert.FileExists(t, filepath.Join(dir, "calc__calc-1", f))
	}
	var report map[string]map[string]any
	b, err := os.ReadFile(filepath.Join(dir, "calc__calc-1", "report.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &report))
	assert.Equal(t, true, report["calc__calc-1"]["resolved"])
	assert.NoFileExists(t, filepath.Join(dir, "calc__calc-4", "report.json"))
	rl, err := os.ReadFile(filepath.Join(dir, "calc__calc-4", "run_instance.log"))
	require.NoError(t, err)
	assert.Contains(t, string(rl), ">>>>> Patch Apply Failed")
	to, err := os.ReadFile(filepath.Join(dir, "calc__calc-6", "test_output.txt"))
	require.NoError(t, err)
	assert.Contains(t, string(to), "Timeout error: 20 seconds exceeded.")

	assert.Equal(t, filepath.Join(cfg.ReportDir, "org__model.e2e.json"), res.ReportPath)
	r := res.Report
	assert.Equal(t, 6, r.TotalInstances)
	assert.Equal(t, 6, r.SubmittedInstances)
	assert.Equal(t, 3, r.CompletedInstances)
	assert.Equal(t, []string{"calc__calc-1"}, r.ResolvedIDs)
	assert.Equal(t, []string{"calc__calc-2", "calc__calc-3"}, r.UnresolvedIDs)
	assert.Equal(t, []string{"calc__calc-5"}, r.EmptyPatchIDs)
	assert.Equal(t, []string{"calc__calc-4", "calc__calc-6"}, r.ErrorIDs)
	assert.Zero(t, f.containers(t), "every container of the run is removed")
	assert.Len(t, events, 10, "a start and an end per instance run")

	// A rerun with the same run id skips finished instances, and those
	// whose patch failed or whose tests timed out: it would only repeat
	// them. Their outcomes and errors are the recorded ones.
	var started []string
	cfg.Progress = func(ev swebench.Event) {
		if ev.Kind == swebench.EventStarted {
			mu.Lock()
			started = append(started, ev.InstanceID)
			mu.Unlock()
		}
	}
	res2, err := swebench.Evaluate(context.Background(), cfg)
	require.NoError(t, err)
	// (On a loaded machine more instances may time out; whatever the first
	// run's outcomes, only those without a verdict or a recorded failure of
	// the prediction run again.)
	var again []string
	for id, o := range res.Outcomes {
		switch o {
		case swebench.OutcomeResolved, swebench.OutcomeUnresolved, swebench.OutcomeOutOfMemory, swebench.OutcomeEmptyPatch,
			swebench.OutcomePatchFailed, swebench.OutcomeTimedOut:
			assert.Equal(t, o, res2.Outcomes[id], "%s keeps its outcome", id)
		default:
			again = append(again, id)
		}
	}
	assert.ElementsMatch(t, again, started, "only instances without a verdict or a recorded failure are evaluated again")
	assert.Equal(t, r.ResolvedIDs, res2.Report.ResolvedIDs)
	got2 := byID(res2)
	assert.ErrorIs(t, got2["calc__calc-4"].Err, swebench.ErrPatchApply)
	assert.ErrorIs(t, got2["calc__calc-6"].Err, swebench.ErrTestTimeout)
	var earlier *swebench.EarlierRunError
	assert.ErrorAs(t, got2["calc__calc-6"].Err, &earlier)

	// With RetryFailures they are evaluated again, as the official harness
	// does.
	cfg.RetryFailures, cfg.InstanceIDs, started = true, []string{"calc__calc-1", "calc__calc-4"}, nil
	res2, err = swebench.Evaluate(context.Background(), cfg)
	require.NoError(t, err)
	assert.Equal(t, []string{"calc__calc-4"}, started, "the failure is retried, the verdict is kept")
	assert.Equal(t, swebench.OutcomePatchFailed, res2.Outcomes["calc__calc-4"])
	var none *swebench.EarlierRunError
	assert.False(t, errors.As(byID(res2)["calc__calc-4"].Err, &none), "a fresh error")
	cfg.RetryFailures, cfg.InstanceIDs, cfg.Progress = false, nil, nil

	// Rewrite mode regrades the logs without containers.
	cfg.RewriteReports = true
	cfg.Sandboxes = nil
	res3, err := swebench.Evaluate(context.Background(), cfg)
	require.NoError(t, err)
	assert.Equal(t, r.ResolvedIDs, res3.Report.ResolvedIDs)
	assert.Len(t, res3.Instances, 4, "instances with a test_output.txt")
}

func TestEvalScriptCannotBeRewrittenByTests(t *testing.T) {
	f := newFixture(t)
	// The wrong patch plus a conftest.py that, while the tests run,
	// rewrites every staged script to claim success.
	conftest := swebenchtest.ConftestDiff(`import glob
for p in glob.glob("/testbed/.git/swebox/*") + glob.glob("/testbed/.git/swebox/.*"):
    open(p, "w").write("echo '>>>>> Start Test Output'; echo 'PASSED tests/test_add.py::test_add'; echo '>>>>> End Test Output'; exit 0\\n")
print("rewrote the staged files")
`)
	cfg := f.config(t, "rewrite", []dataset.Prediction{pred("calc__calc-1", wrongPatch+conftest)})
	cfg.InstanceIDs = []string{"calc__calc-1"}
	res, err := swebench.Evaluate(context.Background(), cfg)
	require.NoError(t, err)
	require.Len(t, res.Instances, 1)
	r := res.Instances[0]
	assert.Equal(t, swebench.StatusUnresolved, r.Status, r.Error)
	out, err := os.ReadFile(filepath.Join(r.LogDir, "test_output.txt"))
	require.NoError(t, err)
	assert.Contains(t, string(out), "rewrote the staged files", "the conftest ran")
	assert.Contains(t, string(out), ">>>>> Test Exit Code: 1", "the rest of the script ran as written")
}

func TestEvaluateResumesAfterCancel(t *testing.T) {
	f := newFixture(t)
	var preds []dataset.Prediction
	for _, in := range f.dataset {
		preds = append(preds, pred(in.InstanceID, goldPatch))
	}
	cfg := f.config(t, "resume", preds)
	cfg.MaxWorkers = 1
	ctx, cancel := context.WithCancel(context.Background())
	finished := 0
	cfg.Progress = func(ev swebench.Event) {
		if ev.Kind == swebench.EventFinished {
			finished++
			if finished == 2 {
				cancel()
			}
		}
	}
	res, err := swebench.Evaluate(ctx, cfg)
	require.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, 2, res.Report.CompletedInstances, "finished reports are kept")
	assert.Zero(t, f.containers(t), "cancelling removes the containers")
	outcomes := map[swebench.Outcome]int{}
	for _, o := range res.Outcomes {
		outcomes[o]++
	}
	assert.Equal(t, map[swebench.Outcome]int{swebench.OutcomeResolved: 2, swebench.OutcomeCancelled: 4}, outcomes,
		"the instances stopped or never started are cancelled")

	cfg.Progress = nil
	var skipped, ran int
	cfg.Progress = func(ev swebench.Event) {
		switch ev.Kind {
		case swebench.EventSkipped:
			skipped++
		case swebench.EventFinished:
			ran++
		}
	}
	res, err = swebench.Evaluate(context.Background(), cfg)
	require.NoError(t, err)
	assert.Equal(t, 6, res.Report.ResolvedInstances)
	assert.Equal(t, 2, skipped)
	assert.Equal(t, 4, ran)
	for id, o := range res.Outcomes {
		assert.Equal(t, swebench.OutcomeResolved, o, id)
	}
}

func TestEvaluatePrebuiltMode(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	// An image laid out like the official instance images: the repository
	// at /testbed, owned by root.
	ns := "swebox-test-" + strings.ToLower(f.client.Session()[len(f.client.Session())-6:])
	ref := ns + "/sweb.eval.x86_64.calc_1776_calc-1:latest"
	// The same image under the name the official harness gives images it
	// builds locally (no namespace, no _1776_ rewrite).
	local := "sweb.eval.x86_64.calc__calc-1:" + ns
	swebenchtest.BuildTestbedImage(t, f.client, filepath.Join(f.project.Sources, "swebox-test__calc"), ref, local)

	cfg := f.config(t, "prebuilt", []dataset.Prediction{pred("calc__calc-1", goldPatch)})
	cfg.Mode, cfg.Namespace, cfg.Repos, cfg.Image = harness.ModePrebuilt, ns, nil, ""
	cfg.InstanceIDs = []string{"calc__calc-1"}
	res, err := swebench.Evaluate(ctx, cfg)
	require.NoError(t, err)
	require.Len(t, res.Instances, 1)
	assert.Equal(t, swebench.StatusResolved, res.Instances[0].Status, res.Instances[0].Error)
	assert.Zero(t, f.containers(t))

	cfg.RunID, cfg.Namespace, cfg.ImageTag = "prebuilt-local", swebench.NoNamespace, ns
	res, err = swebench.Evaluate(ctx, cfg)
	require.NoError(t, err)
	assert.Equal(t, swebench.StatusResolved, res.Instances[0].Status, res.Instances[0].Error)

	cfg.RunID, cfg.Namespace, cfg.ImageTag = "prebuilt-wrong", ns, ""
	cfg.Predictions = []dataset.Prediction{pred("calc__calc-1", regressionPatch)}
	res, err = swebench.Evaluate(ctx, cfg)
	require.NoError(t, err)
	assert.Equal(t, swebench.StatusUnresolved, res.Instances[0].Status)
	assert.Equal(t, swebench.Fraction{Passed: 0, Total: 2}, res.Instances[0].PassToPass)
}

type tarBuf struct {
	buf *bytes.Buffer
	tw  *tar.Writer
}

// tarDir starts a build context holding dir under prefix.
func tarDir(t *testing.T, dir, prefix string) *tarBuf {
	t.Helper()
	tb := &tarBuf{buf: &bytes.Buffer{}}
	tb.tw = tar.NewWriter(tb.buf)
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		require.NoError(t, err)
		info, err := d.Info()
		require.NoError(t, err)
		h, err := tar.FileInfoHeader(info, "")
		require.NoError(t, err)
		rel, _ := filepath.Rel(dir, p)
		h.Name = filepath.ToSlash(filepath.Join(prefix, rel))
		require.NoError(t, tb.tw.WriteHeader(h))
		if info.Mode().IsRegular() {
			b, err := os.ReadFile(p)
			require.NoError(t, err)
			_, err = tb.tw.Write(b)
			require.NoError(t, err)
		}
		return nil
	}))
	return tb
}

func addToTar(t *testing.T, tb *tarBuf, name, content string) {
	require.NoError(t, tb.tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(content)), Typeflag: tar.TypeReg}))
	_, err := tb.tw.Write([]byte(content))
	require.NoError(t, err)
	require.NoError(t, tb.tw.Close())
}

func TestEvaluateCopiesWorkspacesToRemoteEngines(t *testing.T) {
	f := newFixture(t)
	// The local engine presented as one on another machine (a TCP
	// address), whose containers cannot see this machine's files.
	proxy := testenv.NewEngineProxy(t, f.client.Host(), "tcp")
	remote, err := sandbox.New(sandbox.WithHost(proxy.Host()), sandbox.WithSession(f.client.Session()))
	require.NoError(t, err)
	cfg := f.config(t, "remote", []dataset.Prediction{pred("calc__calc-1", goldPatch), pred("calc__calc-3", regressionPatch)})
	cfg.InstanceIDs = []string{"calc__calc-1", "calc__calc-3"}
	cfg.Sandboxes = []*sandbox.Client{remote}
	res, err := swebench.Evaluate(context.Background(), cfg)
	require.NoError(t, err)
	got := byID(res)
	assert.Equal(t, swebench.StatusResolved, got["calc__calc-1"].Status, got["calc__calc-1"].Error)
	assert.Equal(t, swebench.StatusUnresolved, got["calc__calc-3"].Status, got["calc__calc-3"].Error)
	assert.Equal(t, swebench.Fraction{Passed: 0, Total: 2}, got["calc__calc-3"].PassToPass)
	log, err := os.ReadFile(filepath.Join(got["calc__calc-1"].LogDir, "run_instance.log"))
	require.NoError(t, err)
	assert.Contains(t, string(log), "Copied the checkout into the container")
	assert.Zero(t, f.containers(t))
	vols := testenv.CountLeftovers(t, f.client, f.client.Session()).Volumes
	assert.Zero(t, vols, "the /testbed volumes are removed with their containers")
}

func TestEvaluateUnderGVisor(t *testing.T) {
	f := newFixture(t)
	rts, err := f.client.Runtimes(context.Background())
	require.NoError(t, err)
	if !slices.Contains(rts, "runsc") {
		cienv.Skip(t, "runtime runsc is not registered with this engine (have %v)", rts)
	}
	cfg := f.config(t, "gvisor", []dataset.Prediction{pred("calc__calc-1", goldPatch), pred("calc__calc-2", wrongPatch)})
	cfg.InstanceIDs = []string{"calc__calc-1", "calc__calc-2"}
	cfg.Runtime = "runsc"
	res, err := swebench.Evaluate(context.Background(), cfg)
	require.NoError(t, err)
	got := byID(res)
	assert.Equal(t, swebench.StatusResolved, got["calc__calc-1"].Status, got["calc__calc-1"].Error)
	assert.Equal(t, swebench.StatusUnresolved, got["calc__calc-2"].Status, got["calc__calc-2"].Error)
	log, err := os.ReadFile(filepath.Join(got["calc__calc-1"].LogDir, "run_instance.log"))
	require.NoError(t, err)
	assert.Contains(t, string(log), "workspace mode, runsc")
	assert.Zero(t, f.containers(t))
}

func TestRerunWithAChangedPatchWarns(t *testing.T) {
	f := newFixture(t)
	cfg := f.config(t, "changed", []dataset.Prediction{pred("calc__calc-1", goldPatch)})
	cfg.InstanceIDs = []string{"calc__calc-1"}
	res, err := swebench.Evaluate(context.Background(), cfg)
	require.NoError(t, err)
	require.Equal(t, swebench.StatusResolved, res.Instances[0].Status)
	assert.Empty(t, res.Instances[0].Warning)

	// As officially, the finished instance is not evaluated again, but the
	// result says the prediction changed.
	cfg.Predictions = []dataset.Prediction{pred("calc__calc-1", wrongPatch)}
	res, err = swebench.Evaluate(context.Background(), cfg)
	require.NoError(t, err)
	assert.Equal(t, swebench.StatusResolved, res.Instances[0].Status)
	assert.Contains(t, res.Instances[0].Warning, "patch differs")

	cfg.Predictions = []dataset.Prediction{pred("calc__calc-1", goldPatch)}
	res, err = swebench.Evaluate(context.Background(), cfg)
	require.NoError(t, err)
	assert.Empty(t, res.Instances[0].Warning, "the same patch again is no surprise")
}
