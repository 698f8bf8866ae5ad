package task_test

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/internal/testenv"
	"github.com/swebox/swebox/swebench"
	"github.com/swebox/swebox/swebench/dataset"
	"github.com/swebox/swebox/swebench/task"
)

// filesUnder lists the regular files under dir, relative to it.
func filesUnder(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, rel)
		}
		return nil
	})
	require.NoError(t, err)
	return out
}

// TestSubmitFeedback submits the gold patch and no change of a demo task
// under each feedback policy. By default (FeedbackVerdict) the Submission
// has the verdict and the counts, and none of the hidden tests' names
// (looked for in the whole Submission, as JSON), no report.json, no test
// output, and no file of the run stays under Config.Dir/logs or /reports.
// FeedbackFull gives all of it, which shows the first check could fail.
func TestSubmitFeedback(t *testing.T) {
	d := loadDemo(t)
	c := testenv.Client(t)
	ctx := context.Background()
	// demo-2's prediction fixes one of its two FAIL_TO_PASS tests: the
	// other's name is what an unresolved verdict must not tell.
	inst := demoRow(t, d, "swebox__demo-2")
	type testCase struct {
		name     string
		feedback task.Feedback
		full     bool
	}
	for _, tc := range []testCase{
		{name: "default", full: false},
		{name: "verdict", feedback: task.FeedbackVerdict, full: false},
		{name: "full", feedback: task.FeedbackFull, full: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			tasks, err := task.New(ctx, task.Config{Eval: evalConfig(d, c), Dir: dir, Feedback: tc.feedback})
			require.NoError(t, err)
			t.Cleanup(func() { require.NoError(t, tasks.Close()) })
			env, err := tasks.Start(ctx, inst.InstanceID)
			require.NoError(t, err)
			defer env.Close()

			require.True(t, applyAsAgent(t, env, inst.Patch))
			gold, err := env.Submit(ctx, nil)
			require.NoError(t, err)
			_, err = env.Reset(ctx)
			require.NoError(t, err)
			// No change is graded unresolved without running; a change
			// that fails the tests is what hides the failing names.
			require.True(t, applyAsAgent(t, env, d.preds[inst.InstanceID].Patch()))
			wrong, err := env.Submit(ctx, nil)
			require.NoError(t, err)

			assert.Equal(t, swebench.OutcomeResolved, gold.Result.Outcome, gold.Result.Error)
			assert.Equal(t, len(inst.FailToPass), gold.Result.FailToPass.Total)
			assert.Equal(t, gold.Result.FailToPass.Total, gold.Result.FailToPass.Passed)
			assert.Equal(t, swebench.OutcomeUnresolved, wrong.Result.Outcome, wrong.Result.Error)
			assert.Equal(t, swebench.Fraction{Passed: 1, Total: 2}, wrong.Result.FailToPass)
			for _, sub := range []*task.Submission{gold, wrong} {
				b, err := json.Marshal(sub)
				require.NoError(t, err)
				for _, name := range append(append([]string(nil), inst.FailToPass...), inst.PassToPass...) {
					if tc.full {
						assert.Contains(t, string(b)+string(sub.ReportJSON), name)
					} else {
						assert.NotContains(t, string(b), name, "a test name in the submission")
					}
				}
				if tc.full {
					assert.NotNil(t, sub.Report)
					assert.FileExists(t, sub.TestOutput)
					continue
				}
				assert.Nil(t, sub.Report)
				assert.Nil(t, sub.ReportJSON)
				assert.Nil(t, sub.Result.Report)
				assert.Empty(t, sub.TestOutput)
				assert.Empty(t, sub.Result.LogDir)
				assert.Empty(t, sub.Result.LogTail, "the end of the test output")
				assert.NotEmpty(t, sub.Result.PatchAttempts, "how the patch applied stays")
			}
			logs := append(filesUnder(t, filepath.Join(dir, "logs")), filesUnder(t, filepath.Join(dir, "reports"))...)
			if tc.full {
				assert.NotEmpty(t, logs)
				for _, sub := range []*task.Submission{gold, wrong} {
					require.NoError(t, sub.Discard())
					require.NoError(t, sub.Discard(), "twice")
				}
				logs = append(filesUnder(t, filepath.Join(dir, "logs")), filesUnder(t, filepath.Join(dir, "reports"))...)
			}
			assert.Empty(t, logs, "the submissions' logs")
		})
	}
}

func demoRow(t *testing.T, d demo, id string) dataset.Instance {
	t.Helper()
	for _, r := range d.rows {
		if r.InstanceID == id {
			return r
		}
	}
	t.Fatalf("no demo row %s", id)
	return dataset.Instance{}
}

// TestSubmitLimit: with MaxSubmissions 2, one submission, a Reset, then
// three at once: exactly one of those is graded, the others fail with
// ErrSubmissionLimit before grading, and the count stays 2.
func TestSubmitLimit(t *testing.T) {
	d := loadDemo(t)
	c := testenv.Client(t)
	ctx := context.Background()
	tasks, err := task.New(ctx, task.Config{Eval: evalConfig(d, c), Dir: t.TempDir(), MaxSubmissions: 2})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, tasks.Close()) })
	inst := d.rows[0]
	env, err := tasks.Start(ctx, inst.InstanceID)
	require.NoError(t, err)
	defer env.Close()

	require.True(t, applyAsAgent(t, env, inst.Patch))
	_, err = env.Submit(ctx, nil)
	require.NoError(t, err)
	_, err = env.Reset(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, env.Submissions(), "Reset keeps the count")

	var wg sync.WaitGroup
	errs := make([]error, 3)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = env.Submit(ctx, nil)
		}()
	}
	wg.Wait()
	ok, limited := 0, 0
	for _, err := range errs {
		switch {
		case err == nil:
			ok++
		case errors.Is(err, task.ErrSubmissionLimit):
			limited++
		default:
			t.Errorf("submit: %v", err)
		}
	}
	assert.Equal(t, 1, ok)
	assert.Equal(t, 2, limited)
	assert.Equal(t, 2, env.Submissions())
	_, err = env.Submit(ctx, nil)
	assert.ErrorIs(t, err, task.ErrSubmissionLimit)
}
