package task_test

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/internal/kubetest"
	"github.com/swebox/swebox/swebench"
	"github.com/swebox/swebox/swebench/dataset"
)

// TestKubeStartDiffReset is TestStartDiffReset with the sandboxes as pods
// of the test cluster: /testbed copied into the pod's volume, the agent's
// leftover process gone with the pod Reset replaces, and every pod gone
// after Close. The sandbox must not reach the cluster's API server.
func TestKubeStartDiffReset(t *testing.T) {
	host, port := kubetest.APIHostPort(t)
	startDiffReset(t, kubetest.Client(t), net.JoinHostPort(host, port))
}

// TestKubeResetEqualsFreshStart is TestResetEqualsFreshStart with the
// sandboxes as pods: after each hostile rollout, the pod Reset hands over
// shows its user what a fresh Start's pod shows.
func TestKubeResetEqualsFreshStart(t *testing.T) {
	resetEqualsFreshStart(t, kubetest.Client(t))
}

// TestKubeSubmit grades the gold patch and no change through a task
// environment on the cluster and through the evaluator on the cluster
// with the same patch: the same outcome and report.json; a reset between
// the two leaves the environment as Start gave it.
func TestKubeSubmit(t *testing.T) {
	c := kubetest.Client(t)
	d := loadDemo(t)
	tasks := newTasks(t, d, c)
	ctx := context.Background()
	inst := d.rows[0]
	env, err := tasks.Start(ctx, inst.InstanceID)
	require.NoError(t, err)
	defer env.Close()

	for _, kind := range []string{"gold", "noop"} {
		t.Run(kind, func(t *testing.T) {
			if kind == "gold" {
				require.True(t, applyAsAgent(t, env, inst.Patch))
			}
			sub, err := env.Submit(ctx, nil)
			require.NoError(t, err)
			want := swebench.OutcomeResolved
			if kind == "noop" {
				want = swebench.OutcomeEmptyPatch
			}
			assert.Equal(t, want, sub.Result.Outcome, sub.Result.Error)

			p := sub.Patch
			cfg := evalConfig(d, c)
			cfg.InstanceIDs = []string{inst.InstanceID}
			cfg.Predictions = []dataset.Prediction{{InstanceID: inst.InstanceID, ModelNameOrPath: "m", ModelPatch: &p}}
			cfg.RunID, cfg.LogDir, cfg.ReportDir = "kube-"+kind, t.TempDir(), t.TempDir()
			res, err := swebench.Evaluate(ctx, cfg)
			require.NoError(t, err)
			assert.Equal(t, res.Outcomes[inst.InstanceID], sub.Result.Outcome)
			if kind == "gold" {
				require.Len(t, res.Instances, 1)
				b, err := os.ReadFile(filepath.Join(res.Instances[0].LogDir, "report.json"))
				require.NoError(t, err)
				assert.Equal(t, string(b), string(sub.ReportJSON))
			}
			before := env.Sandbox().ID()
			_, err = env.Reset(ctx)
			require.NoError(t, err)
			assert.NotEqual(t, before, env.Sandbox().ID(), "Reset gives a new pod")
			diff, err := env.Diff(ctx)
			require.NoError(t, err)
			assert.Empty(t, diff)
		})
	}
}
