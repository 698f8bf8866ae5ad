package faults_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/internal/swebenchtest"
	"github.com/swebox/swebox/internal/testenv"
	"github.com/swebox/swebox/sandbox"
	"github.com/swebox/swebox/swebench"
	"github.com/swebox/swebox/swebench/dataset"
	"github.com/swebox/swebox/swebench/harness"
)

// TestEngineUnreachableAtStart: with no engine at the address, Evaluate
// fails at once with an error callers can branch on, and writes nothing.
func TestEngineUnreachableAtStart(t *testing.T) {
	c, err := sandbox.New(sandbox.WithHost("unix:///nonexistent/docker.sock"))
	require.NoError(t, err)
	p := swebenchtest.Project{Repo: "swebox-test/calc", Base: strings.Repeat("a", 40)}
	dir := t.TempDir()
	cfg := swebench.Config{
		Dataset: []dataset.Instance{p.Instance("calc__calc-1")}, Predictions: []dataset.Prediction{swebenchtest.Pred("calc__calc-1", swebenchtest.Gold)},
		RunID: "unreachable", Sandboxes: []*sandbox.Client{c}, Mode: harness.ModeWorkspace,
		LogDir: filepath.Join(dir, "logs"), ReportDir: filepath.Join(dir, "reports"), WorkDir: filepath.Join(dir, "work"),
	}

	res, err := swebench.Evaluate(context.Background(), cfg)
	require.ErrorIs(t, err, sandbox.ErrEngineUnreachable)
	var ee *sandbox.EngineError
	require.True(t, errors.As(err, &ee))
	assert.Equal(t, "unix:///nonexistent/docker.sock", ee.Host)
	assert.Nil(t, res)
	assert.NoDirExists(t, cfg.LogDir, "no log is written")
	assert.NoDirExists(t, cfg.ReportDir, "no report is written")
	assert.NoDirExists(t, cfg.WorkDir, "no workspace is made")
}

// TestEngineGoesAway: the engine disappears after two instances finished.
// The instances running then and those not yet started are errors, the run
// ends with its report written, and a rerun on a working engine resumes
// exactly the error instances.
func TestEngineGoesAway(t *testing.T) {
	healthy := testenv.Client(t)
	// The engine, through a proxy that can be taken down: open connections
	// are closed (streams of running commands break) and new ones refused,
	// as when dockerd stops.
	flaky := testenv.NewEngineProxy(t, healthy.Host(), "unix")
	c, err := sandbox.New(sandbox.WithHost(flaky.Host()), sandbox.WithSession(healthy.Session()))
	require.NoError(t, err)

	p := swebenchtest.NewProject(t)
	var ds []dataset.Instance
	var preds []dataset.Prediction
	for _, id := range []string{"calc__calc-1", "calc__calc-2", "calc__calc-3", "calc__calc-4", "calc__calc-5", "calc__calc-6"} {
		ds = append(ds, p.Instance(id))
		preds = append(preds, swebenchtest.Pred(id, swebenchtest.Gold))
	}
	cfg := p.Config(t, c, "engine-away", ds, preds)
	cfg.MaxWorkers = 2
	var finished atomic.Int32
	cfg.Progress = func(ev swebench.Event) {
		if ev.Kind == swebench.EventFinished && finished.Add(1) == 2 {
			flaky.TakeDown()
		}
	}
	done := make(chan struct{})
	var res *swebench.Result
	go func() {
		defer close(done)
		res, err = swebench.Evaluate(context.Background(), cfg)
	}()
	select {
	case <-done:
	case <-time.After(3 * time.Minute):
		t.Fatal("the run did not end after the engine went away")
	}
	require.ErrorIs(t, err, swebench.ErrEngineLost, "the run reports the lost engine itself")
	require.ErrorIs(t, err, sandbox.ErrEngineUnreachable)
	var lost *swebench.EngineLostError
	require.ErrorAs(t, err, &lost)
	require.NotNil(t, res, "the results of the run come with the error")
	assert.Len(t, res.Report.ResolvedIDs, 2, "the instances finished before the engine went away keep their verdicts")
	assert.Len(t, res.Report.ErrorIDs, 4, "every other instance is an error")
	assert.ElementsMatch(t, res.Report.ErrorIDs, lost.Instances, "the error names the instances the outage ended")
	for _, r := range res.Instances {
		if r.Status == swebench.StatusError {
			assert.ErrorIs(t, r.Err, sandbox.ErrEngineUnreachable, "%s says why", r.InstanceID)
			assert.Equal(t, swebench.OutcomeEngineLost, res.Outcomes[r.InstanceID], "%s: its outcome says so", r.InstanceID)
		}
	}
	rep := swebenchtest.RunReport(t, res.ReportPath)
	assert.Equal(t, float64(4), rep["error_instances"], "the run report is written")

	// The engine is back: a rerun with the same run id on a working client
	// runs exactly the four error instances.
	cfg.Sandboxes, cfg.Progress = []*sandbox.Client{healthy}, nil
	var mu sync.Mutex
	ran := map[string]bool{}
	cfg.Progress = func(ev swebench.Event) {
		if ev.Kind == swebench.EventStarted {
			mu.Lock()
			ran[ev.InstanceID] = true
			mu.Unlock()
		}
	}
	res2, err := swebench.Evaluate(context.Background(), cfg)
	require.NoError(t, err)
	assert.Len(t, res2.Report.ResolvedIDs, 6)
	assert.ElementsMatch(t, res.Report.ErrorIDs, keys(ran), "the rerun runs the error instances and nothing else")

	// Containers the first run could not remove while the engine was away
	// (at most one per worker) are found by their labels and pruned.
	orphans := swebenchtest.CountRunContainers(t, healthy, "engine-away")
	assert.LessOrEqual(t, orphans, cfg.MaxWorkers)
	t.Logf("%d containers orphaned by the outage", orphans)
	_, err = healthy.Prune(context.Background(), sandbox.PruneRequest{Labels: map[string]string{swebench.LabelRun: "engine-away"}})
	require.NoError(t, err)
	assert.Equal(t, testenv.Leftovers{}, testenv.CountLeftovers(t, healthy, healthy.Session()))
}

func keys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
