package swebench_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/sandbox"
	"github.com/swebox/swebox/swebench"
	"github.com/swebox/swebox/swebench/dataset"
	"github.com/swebox/swebox/swebench/grade"
)

// An instance whose sandbox the cluster loses is evaluated again from
// scratch, at most Config.LostRetries times, and graded once; past the
// bound it is sandbox_lost, an infrastructure outcome and never a verdict.
// The losses are injected after each sandbox has started.
func TestLostSandboxIsRetriedWithinTheBound(t *testing.T) {
	f := newFixture(t)
	type testCase struct {
		name        string
		lostRetries int
		lose        map[string]int // attempts lost per instance, from the first
		want        map[string]swebench.Outcome
		retried     map[string]int
	}
	for _, tc := range []testCase{
		{name: "default bound", lose: map[string]int{"calc__calc-1": 2, "calc__calc-2": 3},
			want:    map[string]swebench.Outcome{"calc__calc-1": swebench.OutcomeResolved, "calc__calc-2": swebench.OutcomeSandboxLost, "calc__calc-3": swebench.OutcomeUnresolved},
			retried: map[string]int{"calc__calc-1": 2, "calc__calc-2": 2}},
		{name: "no retries", lostRetries: -1, lose: map[string]int{"calc__calc-1": 1},
			want:    map[string]swebench.Outcome{"calc__calc-1": swebench.OutcomeSandboxLost, "calc__calc-2": swebench.OutcomeResolved, "calc__calc-3": swebench.OutcomeUnresolved},
			retried: map[string]int{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			calls := map[string]int{}
			restore := swebench.SetLostHook(func(_ context.Context, id string, retry int) error {
				calls[id]++ // one worker: no concurrent calls
				if retry < tc.lose[id] {
					return &sandbox.LostError{Sandbox: "pod-" + id, Node: "node-x", Reason: "NodeUnreachable", Detail: "injected"}
				}
				return nil
			})
			defer restore()
			cfg := f.config(t, "lost-"+strings.ReplaceAll(tc.name, " ", "-"), []dataset.Prediction{
				pred("calc__calc-1", goldPatch), pred("calc__calc-2", goldPatch), pred("calc__calc-3", wrongPatch),
			})
			cfg.InstanceIDs = []string{"calc__calc-1", "calc__calc-2", "calc__calc-3"}
			cfg.MaxWorkers, cfg.LostRetries = 1, tc.lostRetries
			res, err := swebench.Evaluate(context.Background(), cfg)
			require.NoError(t, err)
			assert.Equal(t, tc.want, res.Outcomes)
			for _, r := range res.Instances {
				assert.Len(t, r.Retries, tc.retried[r.InstanceID], r.InstanceID)
				assert.Equal(t, tc.retried[r.InstanceID]+1, calls[r.InstanceID], "%s: attempts", r.InstanceID)
				for _, rt := range r.Retries {
					assert.Equal(t, grade.Retry{Pod: "pod-" + r.InstanceID, Node: "node-x", Reason: "NodeUnreachable", Error: rt.Error}, rt)
					assert.Contains(t, rt.Error, "injected")
				}
				_, statErr := os.Stat(filepath.Join(r.LogDir, "report.json"))
				graded := tc.want[r.InstanceID] == swebench.OutcomeResolved || tc.want[r.InstanceID] == swebench.OutcomeUnresolved
				assert.Equal(t, graded, statErr == nil, "%s: report.json only for a graded instance", r.InstanceID)
				b, err := os.ReadFile(filepath.Join(r.LogDir, "run_instance.log"))
				require.NoError(t, err)
				assert.Equal(t, tc.retried[r.InstanceID], strings.Count(string(b), "Sandbox lost: retry"), "%s: run_instance.log keeps every attempt", r.InstanceID)
			}
			assert.True(t, swebench.OutcomeSandboxLost.Infrastructure())

			rep := res.Report
			assert.NotContains(t, rep.UnresolvedIDs, "calc__calc-2")
			for id, n := range tc.retried {
				assert.Len(t, rep.Retried[id], n, id)
			}
			if len(tc.retried) == 0 {
				assert.Nil(t, rep.Retried, "no swebox_retried key without retries")
			}
			raw, err := os.ReadFile(res.ReportPath)
			require.NoError(t, err)
			i := strings.Index(string(raw), `"`+grade.OutcomesKey+`"`)
			require.Positive(t, i)
			clean := rep
			clean.Retried = nil
			assert.Equal(t, string(clean.Encode()[:i]), string(raw[:i]), "the official keys are those of a report without retries")

			// A rerun keeps the graded instances and still reports their retries.
			restore()
			again, err := swebench.Evaluate(context.Background(), cfg)
			require.NoError(t, err)
			for _, r := range again.Instances {
				if tc.want[r.InstanceID] == swebench.OutcomeResolved && tc.retried[r.InstanceID] > 0 {
					assert.Len(t, r.Retries, tc.retried[r.InstanceID], "%s after a rerun", r.InstanceID)
				}
			}
		})
	}
}

// Config.InstanceTimeout covers every attempt of an instance: the retry
// after a loss gets what is left, not a fresh budget. The first attempt is
// lost at once; the retry hangs (as a command on a silent node may) until
// the instance's time is up, and then the instance ends as sandbox_lost with
// an *InstanceTimeoutError naming the loss, having used one retry of the
// hundred allowed.
func TestInstanceTimeoutCoversEveryRetry(t *testing.T) {
	f := newFixture(t)
	var hung error
	restore := swebench.SetLostHook(func(ctx context.Context, id string, retry int) error {
		if retry == 0 {
			return &sandbox.LostError{Sandbox: "pod-" + id, Node: "node-x", Reason: "Evicted", Detail: "injected"}
		}
		<-ctx.Done()
		hung = context.Cause(ctx)
		return ctx.Err()
	})
	defer restore()
	cfg := f.config(t, "instance-timeout", []dataset.Prediction{pred("calc__calc-1", goldPatch)})
	cfg.InstanceIDs = []string{"calc__calc-1"}
	cfg.MaxWorkers, cfg.LostRetries = 1, 100
	// Long enough for the first attempt's sandbox on a loaded machine, so
	// that the loss, not the setup, comes first.
	cfg.InstanceTimeout = 20 * time.Second
	res, err := swebench.Evaluate(context.Background(), cfg)
	require.NoError(t, err)
	require.Len(t, res.Instances, 1)
	r := res.Instances[0]
	assert.Equal(t, swebench.OutcomeSandboxLost, r.Outcome)
	var te *swebench.InstanceTimeoutError
	require.ErrorAs(t, r.Err, &te)
	assert.Equal(t, 20*time.Second, te.Timeout)
	assert.Equal(t, 1, te.LostSandboxes)
	assert.ErrorIs(t, r.Err, sandbox.ErrSandboxLost)
	assert.Contains(t, r.Error, "injected")
	assert.Len(t, r.Retries, 1, "one retry, then the time was up")
	require.Error(t, hung, "the retry's context ended")
	b, err := os.ReadFile(filepath.Join(r.LogDir, "run_instance.log"))
	require.NoError(t, err)
	assert.Contains(t, string(b), "ran past its time of 20s, which covers every attempt")
}
