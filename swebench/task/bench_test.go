package task_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/internal/testenv"
	"github.com/swebox/swebox/sandbox"
	"github.com/swebox/swebox/swebench"
	"github.com/swebox/swebox/swebench/task"
)

// rollouts is one way of running rollouts: a fresh environment per rollout
// (Start ... Close) or one per instance reset between rollouts, on a client
// with or without a warm pool, each rollout graded (Submit) or ending with
// its Diff (a training loop that grades elsewhere).
type rollouts struct {
	name     string
	reset    bool
	pool     int
	noSubmit bool

	tasks *task.Tasks
	envs  map[string]*task.Env
	// Sums over the rollouts: wall time, Start (or Reset) to the end of the
	// first command less that command's own time, and Submit.
	total, toFirst, submit time.Duration
	n                      int
}

// rollout runs the scripted agent once on the first demo task: it applies
// the gold patch with a command and submits (the rollout must resolve) or
// takes the diff.
func (r *rollouts) rollout(b *testing.B, d demo, i int) {
	ctx := context.Background()
	inst := d.rows[0]
	t0 := time.Now()
	env := r.envs[inst.InstanceID]
	if env == nil || !r.reset {
		var err error
		env, err = r.tasks.Start(ctx, inst.InstanceID)
		require.NoError(b, err)
	} else {
		_, err := env.Reset(ctx)
		require.NoError(b, err)
	}
	x, err := env.Exec(ctx, sandbox.ExecRequest{Cmd: []string{"git", "apply", "-"}, Stdin: stringReader(inst.Patch)})
	require.NoError(b, err)
	require.True(b, x.Success(), x.Stderr.String())
	r.toFirst += time.Since(t0) - x.Duration
	t1 := time.Now()
	if r.noSubmit {
		diff, err := env.Diff(ctx)
		require.NoError(b, err)
		require.NotEmpty(b, diff)
	} else {
		sub, err := env.Submit(ctx, nil)
		require.NoError(b, err)
		require.Equal(b, swebench.OutcomeResolved, sub.Result.Outcome, inst.InstanceID)
	}
	r.submit += time.Since(t1)
	if r.reset {
		r.envs[inst.InstanceID] = env
	} else {
		require.NoError(b, env.Close())
	}
	r.total += time.Since(t0)
	r.n++
}

// BenchmarkRollouts runs the scripted agent (apply the gold patch with a
// command, submit) on the first demo task, many rollouts of one task as in
// training, in several ways, which
// take turns within each iteration so that the machine's load falls on
// each alike: fresh or reset environments, with or without a warm pool
// (size 2); the diff- ways end each rollout with Diff instead of Submit,
// as a training loop that grades patches elsewhere does. For each it
// reports rollouts per minute of its own wall time (a fresh environment's
// Close included), the milliseconds from Start (or Reset) to the first
// command's end less the command's own time, and the milliseconds of
// Submit (or Diff). Every submitted rollout must resolve.
//
//	go test ./swebench/task -run '^$' -bench Rollouts -benchtime 28x
func BenchmarkRollouts(b *testing.B) {
	d := loadDemo(b)
	ways := []*rollouts{
		{name: "fresh"}, {name: "fresh-pool", pool: 2}, {name: "reset", reset: true}, {name: "reset-pool", reset: true, pool: 2},
		{name: "diff-fresh", noSubmit: true}, {name: "diff-fresh-pool", pool: 2, noSubmit: true}, {name: "diff-reset", reset: true, noSubmit: true},
	}
	for _, w := range ways {
		var opts []sandbox.Option
		if w.pool > 0 {
			opts = append(opts, sandbox.WithPool(sandbox.PoolOptions{Size: w.pool}))
		}
		w.tasks = newTasks(b, d, testenv.Client(b, opts...))
		w.envs = map[string]*task.Env{}
		b.Cleanup(func() {
			for _, e := range w.envs {
				_ = e.Close()
			}
		})
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, w := range ways {
			w.rollout(b, d, i)
		}
	}
	b.StopTimer()
	for _, w := range ways {
		n := float64(w.n)
		b.ReportMetric(n/w.total.Minutes(), w.name+"-rollouts/min")
		b.ReportMetric(float64(w.toFirst.Milliseconds())/n, w.name+"-ms-to-first-cmd")
		b.ReportMetric(float64(w.submit.Milliseconds())/n, w.name+"-ms-submit-or-diff")
	}
}
