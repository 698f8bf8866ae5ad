package swebench_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/internal/swebenchtest"
	"github.com/swebox/swebox/swebench"
	"github.com/swebox/swebox/swebench/dataset"
	"github.com/swebox/swebox/swebench/grade"
)

func readFlaky(t *testing.T, path string) swebench.FlakyReport {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var rep swebench.FlakyReport
	require.NoError(t, json.Unmarshal(b, &rep))
	return rep
}

// A deterministic instance repeated gives the same statuses in every run:
// flaky.json lists nothing, the run report carries no flaky verdicts, and
// each run's files are where the documentation says.
func TestRepeatOfADeterministicInstanceFindsNoFlips(t *testing.T) {
	f := newFixture(t)
	f.dataset = f.dataset[:2]
	cfg := f.config(t, "repeat", []dataset.Prediction{pred("calc__calc-1", goldPatch), pred("calc__calc-2", wrongPatch)})
	cfg.Repeat, cfg.Timeout = 2, 5*time.Minute // the machine may be busy: a timeout is no flip of the tests
	res, err := swebench.Evaluate(context.Background(), cfg)
	require.NoError(t, err)
	got := byID(res)
	for id, want := range map[string]swebench.Outcome{"calc__calc-1": swebench.OutcomeResolved, "calc__calc-2": swebench.OutcomeUnresolved} {
		r := got[id]
		require.NotNil(t, r.Repeats, id)
		assert.Equal(t, []swebench.Outcome{want, want}, r.Repeats.Outcomes, id)
		assert.False(t, r.Repeats.Flipped(), id)
		assert.FileExists(t, filepath.Join(swebenchtest.InstanceDir(cfg, id), "swebox_repeat", "2", "report.json"), "run 2's files")
		assert.FileExists(t, filepath.Join(swebenchtest.InstanceDir(cfg, id), "swebox_repeat", "2", "test_output.txt"))
	}
	assert.Nil(t, res.Report.FlakyVerdicts)
	assert.NotContains(t, string(res.Report.Encode()), grade.FlakyVerdictsKey)
	rep := readFlaky(t, res.FlakyPath)
	assert.Equal(t, 2, rep.Repeat)
	assert.Empty(t, rep.Instances)
	assert.Zero(t, f.containers(t))
}

// A verdict that changes between runs is found, with the tests that changed.
// The runs' difference is made deterministic by resuming: run 1 graded the
// wrong patch in an earlier run (its report.json is kept, as the official
// resume rule says), runs 2 and 3 grade the gold patch.
func TestRepeatFindsAFlippedVerdict(t *testing.T) {
	f := newFixture(t)
	f.dataset = f.dataset[:2]
	cfg := f.config(t, "flip", []dataset.Prediction{pred("calc__calc-1", wrongPatch), pred("calc__calc-2", goldPatch)})
	cfg.Timeout = 5 * time.Minute
	_, err := swebench.Evaluate(context.Background(), cfg)
	require.NoError(t, err)
	official, err := os.ReadFile(filepath.Join(swebenchtest.InstanceDir(cfg, "calc__calc-1"), "report.json"))
	require.NoError(t, err)

	cfg.Predictions = []dataset.Prediction{pred("calc__calc-1", goldPatch), pred("calc__calc-2", goldPatch)}
	cfg.Repeat = 3
	var finished, skipped int
	cfg.Progress = func(ev swebench.Event) {
		switch ev.Kind {
		case swebench.EventFinished:
			finished++
		case swebench.EventSkipped:
			skipped++
		}
	}
	res, err := swebench.Evaluate(context.Background(), cfg)
	require.NoError(t, err)
	assert.Equal(t, 2, finished, "one event per instance, however many runs")
	assert.Zero(t, skipped, "each instance had runs left to do")

	r := byID(res)["calc__calc-1"]
	assert.Equal(t, swebench.OutcomeUnresolved, r.Outcome, "the result is run 1's")
	require.NotNil(t, r.Repeats)
	assert.Equal(t, []swebench.Outcome{swebench.OutcomeUnresolved, swebench.OutcomeResolved, swebench.OutcomeResolved}, r.Repeats.Outcomes)
	assert.True(t, r.Repeats.VerdictFlipped)
	require.Len(t, r.Repeats.FlakyTests, 1)
	assert.Equal(t, swebenchtest.FailToPass[0], r.Repeats.FlakyTests[0].Test)
	assert.Equal(t, []string{"FAILED", "PASSED", "PASSED"}, r.Repeats.FlakyTests[0].Statuses)
	assert.False(t, byID(res)["calc__calc-2"].Repeats.Flipped(), "run 1 of calc-2 graded the same patch")

	after, err := os.ReadFile(filepath.Join(swebenchtest.InstanceDir(cfg, "calc__calc-1"), "report.json"))
	require.NoError(t, err)
	assert.Equal(t, string(official), string(after), "report.json stays run 1's")
	assert.Equal(t, []string{"calc__calc-2"}, res.Report.ResolvedIDs, "the run report counts run 1")
	assert.Equal(t, map[string][]string{"calc__calc-1": {"unresolved", "resolved", "resolved"}}, res.Report.FlakyVerdicts)

	rep := readFlaky(t, res.FlakyPath)
	require.Len(t, rep.Instances, 1)
	assert.Equal(t, "calc__calc-1", rep.Instances[0].InstanceID)
	assert.True(t, rep.Instances[0].VerdictFlipped)
	assert.Equal(t, r.Repeats.FlakyTests, rep.Instances[0].Tests)

	// Everything ran: a rerun evaluates nothing and finds the same.
	finished, skipped = 0, 0
	again, err := swebench.Evaluate(context.Background(), cfg)
	require.NoError(t, err)
	assert.Zero(t, finished)
	assert.Equal(t, 2, skipped)
	assert.Equal(t, res.Report.FlakyVerdicts, again.Report.FlakyVerdicts)
	assert.Zero(t, f.containers(t))
}
