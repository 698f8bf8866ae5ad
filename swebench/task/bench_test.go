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

// BenchmarkRollouts runs the scripted agent (apply the gold patch with a
// command, submit) over the demo instances in turn, one rollout per
// iteration: with a fresh environment per rollout (Start ... Close) or one
// environment per instance reset between rollouts, each with and without
// a warm pool. It reports rollouts per minute and the time from Start (or
// Reset) to the end of the first command. Every rollout must resolve.
//
//	go test ./swebench/task -run '^$' -bench Rollouts -benchtime 28x -p 1
func BenchmarkRollouts(b *testing.B) {
	d := loadDemo(b) // in b's directories, which outlive the sub-benchmarks
	for _, bc := range []struct {
		name  string
		reset bool
		pool  int
	}{
		{"fresh", false, 0}, {"fresh-pool", false, 2}, {"reset", true, 0}, {"reset-pool", true, 2},
	} {
		b.Run(bc.name, func(b *testing.B) {
			var opts []sandbox.Option
			if bc.pool > 0 {
				opts = append(opts, sandbox.WithPool(sandbox.PoolOptions{Size: bc.pool}))
			}
			c := testenv.Client(b, opts...)
			tasks := newTasks(b, d, c)
			ctx := context.Background()
			envs := map[string]*task.Env{}
			defer func() {
				for _, e := range envs {
					_ = e.Close()
				}
			}()
			var toFirst, submitting time.Duration
			b.ResetTimer()
			start := time.Now()
			for i := 0; i < b.N; i++ {
				inst := d.rows[i%len(d.rows)]
				t0 := time.Now()
				env := envs[inst.InstanceID]
				switch {
				case env == nil || !bc.reset:
					var err error
					env, err = tasks.Start(ctx, inst.InstanceID)
					require.NoError(b, err)
				default:
					_, err := env.Reset(ctx)
					require.NoError(b, err)
				}
				r, err := env.Exec(ctx, sandbox.ExecRequest{Cmd: []string{"git", "apply", "-"}, Stdin: stringReader(inst.Patch)})
				require.NoError(b, err)
				require.True(b, r.Success(), r.Stderr.String())
				toFirst += time.Since(t0) - r.Duration // the first command's own time left out
				t1 := time.Now()
				sub, err := env.Submit(ctx, nil)
				submitting += time.Since(t1)
				require.NoError(b, err)
				require.Equal(b, swebench.OutcomeResolved, sub.Result.Outcome, inst.InstanceID)
				if bc.reset {
					envs[inst.InstanceID] = env
				} else {
					require.NoError(b, env.Close())
				}
			}
			el := time.Since(start)
			b.ReportMetric(float64(b.N)/el.Minutes(), "rollouts/min")
			b.ReportMetric(float64(toFirst.Milliseconds())/float64(b.N), "ms-to-first-cmd")
			b.ReportMetric(float64(submitting.Milliseconds())/float64(b.N), "ms-submit")
		})
	}
}
