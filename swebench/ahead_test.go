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

	"github.com/swebox/swebox/swebench"
	"github.com/swebox/swebox/swebench/dataset"
)

// Where a sandbox needs no host directory (here each checkout is copied in,
// as on a remote engine or Kubernetes), the sandboxes of the next instances
// are started while one runs: with one worker, every instance after the
// first finds its sandbox started. The verdicts are those of a run without
// it, and neither a finished nor a cancelled run leaves a container.
func TestSandboxesStartedAhead(t *testing.T) {
	f := newFixture(t)
	preds := []dataset.Prediction{
		pred("calc__calc-1", goldPatch),
		pred("calc__calc-2", wrongPatch),
		pred("calc__calc-3", regressionPatch),
		pred("calc__calc-4", badPatch),
	}
	want := map[string]swebench.Outcome{
		"calc__calc-1": swebench.OutcomeResolved, "calc__calc-2": swebench.OutcomeUnresolved,
		"calc__calc-3": swebench.OutcomeUnresolved, "calc__calc-4": swebench.OutcomePatchFailed,
	}
	config := func(runID string, ahead int) swebench.Config {
		cfg := f.config(t, runID, preds)
		cfg.InstanceIDs = []string{"calc__calc-1", "calc__calc-2", "calc__calc-3", "calc__calc-4"}
		cfg.MaxWorkers, cfg.CopyWorkspace, cfg.StartAhead = 1, true, ahead
		return cfg
	}
	startedAhead := func(t *testing.T, r swebench.InstanceResult) bool {
		log, err := os.ReadFile(filepath.Join(r.LogDir, "run_instance.log"))
		require.NoError(t, err)
		return strings.Contains(string(log), "was started ahead of its turn")
	}

	for _, tc := range []struct {
		name  string
		ahead int
		// whether each instance but the first finds its sandbox started
		started bool
	}{
		{name: "default", ahead: 0, started: true},
		{name: "off", ahead: -1, started: false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := swebench.Evaluate(context.Background(), config("ahead-"+tc.name, tc.ahead))
			require.NoError(t, err)
			assert.Equal(t, want, res.Outcomes)
			got := byID(res)
			assert.False(t, startedAhead(t, got["calc__calc-1"]), "the first instance's worker starts its own sandbox")
			for _, id := range []string{"calc__calc-2", "calc__calc-3", "calc__calc-4"} {
				assert.Equal(t, tc.started, startedAhead(t, got[id]), id)
			}
			assert.Zero(t, f.containers(t))
		})
	}

	t.Run("cancelled", func(t *testing.T) {
		cfg := config("ahead-cancel", 0)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		cfg.Progress = func(ev swebench.Event) {
			if ev.Kind == swebench.EventFinished {
				// The first instance's sandbox is gone; the next two
				// instances' were started while it ran.
				assert.Eventually(t, func() bool { return f.containers(t) == 2 }, 30*time.Second, 50*time.Millisecond,
					"two sandboxes started ahead")
				cancel()
			}
		}
		res, err := swebench.Evaluate(ctx, cfg)
		require.ErrorIs(t, err, context.Canceled)
		assert.Equal(t, swebench.OutcomeResolved, res.Outcomes["calc__calc-1"])
		for _, id := range []string{"calc__calc-2", "calc__calc-3", "calc__calc-4"} {
			assert.Equal(t, swebench.OutcomeCancelled, res.Outcomes[id], id)
		}
		assert.Zero(t, f.containers(t), "the sandboxes started ahead are removed with the run")
	})
}
