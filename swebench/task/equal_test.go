package task_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/internal/testenv"
	"github.com/swebox/swebox/sandbox"
	"github.com/swebox/swebox/swebench"
	"github.com/swebox/swebox/swebench/dataset"
	"github.com/swebox/swebox/swebench/task"
)

// applyAsAgent reproduces patch in the environment as an agent would
// (git apply); false when it does not apply.
func applyAsAgent(t *testing.T, env *task.Env, patch string) bool {
	t.Helper()
	r, err := env.Exec(context.Background(), sandbox.ExecRequest{
		Cmd:   []string{"sh", "-c", `f=$(mktemp) && cat > "$f" && git apply "$f"; s=$?; rm -f "$f"; exit $s`},
		Stdin: stringReader(patch),
	})
	require.NoError(t, err)
	return r.Success()
}

// TestSubmitEqualsEval grades, on every demo instance, the gold patch, no
// change and the demo's own prediction (a partial fix, a regression, a
// patch that does not apply, one that hangs) through a task environment
// and through the evaluator (`eval`'s swebench.Evaluate) with the same
// patch: outcome, status, counts and report.json must be equal.
func TestSubmitEqualsEval(t *testing.T) {
	d := loadDemo(t)
	c := testenv.Client(t)
	tasks := newTasks(t, d, c)
	ctx := context.Background()
	kinds := []string{"gold", "noop", "prediction"}
	raw := func(kind string, inst dataset.Instance) string {
		switch kind {
		case "gold":
			return inst.Patch
		case "prediction":
			return d.preds[inst.InstanceID].Patch()
		}
		return ""
	}
	// graded[kind][id] is the task environment's submission.
	graded := map[string]map[string]*task.Submission{}
	for _, inst := range d.rows {
		env, err := tasks.Start(ctx, inst.InstanceID)
		require.NoError(t, err)
		for _, kind := range kinds {
			var sub *task.Submission
			if p := raw(kind, inst); p == "" || applyAsAgent(t, env, p) {
				sub, err = env.Submit(ctx, nil)
			} else {
				// The agent could not make this change; the patch itself
				// is graded.
				sub, err = tasks.Grade(ctx, inst.InstanceID, p, nil)
			}
			require.NoError(t, err)
			if graded[kind] == nil {
				graded[kind] = map[string]*task.Submission{}
			}
			graded[kind][inst.InstanceID] = sub
			_, err = env.Reset(ctx)
			require.NoError(t, err)
		}
		require.NoError(t, env.Close())
	}
	outcomes := map[swebench.Outcome]bool{}
	for _, kind := range kinds {
		var preds []dataset.Prediction
		for _, inst := range d.rows {
			p := graded[kind][inst.InstanceID].Patch
			preds = append(preds, dataset.Prediction{InstanceID: inst.InstanceID, ModelNameOrPath: "m", ModelPatch: &p})
		}
		cfg := evalConfig(d, c)
		cfg.Predictions, cfg.RunID = preds, "eq-"+kind
		cfg.LogDir, cfg.ReportDir = t.TempDir(), t.TempDir()
		res, err := swebench.Evaluate(ctx, cfg)
		require.NoError(t, err)
		byID := map[string]swebench.InstanceResult{}
		for _, r := range res.Instances {
			byID[r.InstanceID] = r
		}
		for _, inst := range d.rows {
			id := inst.InstanceID
			sub := graded[kind][id]
			want := byID[id]
			require.Equal(t, res.Outcomes[id], sub.Result.Outcome, "%s %s", kind, id)
			outcomes[sub.Result.Outcome] = true
			if want.InstanceID == "" {
				continue // not run (empty patch): the outcome is all there is
			}
			require.Equal(t, want.Status, sub.Result.Status, "%s %s", kind, id)
			require.Equal(t, want.FailToPass, sub.Result.FailToPass, "%s %s", kind, id)
			require.Equal(t, want.PassToPass, sub.Result.PassToPass, "%s %s", kind, id)
			wantReport, err := os.ReadFile(filepath.Join(want.LogDir, "report.json"))
			if err != nil {
				require.Nil(t, sub.ReportJSON, "%s %s: eval wrote no report.json", kind, id)
				continue
			}
			require.Equal(t, string(wantReport), string(sub.ReportJSON), "%s %s", kind, id)
		}
		if kind == "gold" {
			for _, inst := range d.rows {
				require.Equal(t, swebench.OutcomeResolved, graded[kind][inst.InstanceID].Result.Outcome, inst.InstanceID)
			}
		}
	}
	// The demo's predictions reach every verdict the demo shows.
	for _, o := range []swebench.Outcome{swebench.OutcomeResolved, swebench.OutcomeUnresolved, swebench.OutcomeEmptyPatch, swebench.OutcomePatchFailed, swebench.OutcomeTimedOut} {
		require.True(t, outcomes[o], "no submission ended %s", o)
	}
}
