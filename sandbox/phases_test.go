package sandbox

import (
	"context"
	"io"
	"os"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/internal/cienv"
)

// BenchmarkEnginePhases times each engine call of a one-shot run and of a
// warm exec, with the sandbox's hardened configuration, to show where
// BenchmarkRunOneShot and BenchmarkExecWarm spend their time:
//
//	go test ./sandbox -run '^$' -bench EnginePhases -benchtime 20x
func BenchmarkEnginePhases(b *testing.B) {
	ctx := context.Background()
	c, err := New(WithSession("bench-phases"))
	require.NoError(b, err)
	image := os.Getenv("SWEBOX_TEST_IMAGE")
	if image == "" {
		image = "swebox/python:bookworm"
	}
	if err := c.Ping(ctx); err != nil {
		cienv.Skip(b, "no Docker engine answers: %v", err)
	}
	if ok, _ := c.HasImage(ctx, image); !ok {
		cienv.Skip(b, "test image %s is missing", image)
	}
	b.Cleanup(func() { _, _ = c.Prune(context.Background(), PruneRequest{}) })
	spec := Spec{Image: image}.withDefaults()
	api := EngineOf(c)
	ms := func(d time.Duration, n int) float64 { return float64(d.Microseconds()) / 1000 / float64(n) }

	b.Run("one-shot", func(b *testing.B) {
		var create, start, exit, remove time.Duration
		n := 0
		for b.Loop() {
			n++
			cfg, hc := containerConfig(spec, []string{"true"}, c.labels(nil))
			t0 := time.Now()
			r, err := api.ContainerCreate(ctx, cfg, hc, nil, nil, "")
			require.NoError(b, err)
			t1 := time.Now()
			waitC, errC := api.ContainerWait(ctx, r.ID, container.WaitConditionNextExit)
			require.NoError(b, api.ContainerStart(ctx, r.ID, container.StartOptions{}))
			t2 := time.Now()
			select {
			case <-waitC:
			case err := <-errC:
				require.NoError(b, err)
			}
			t3 := time.Now()
			require.NoError(b, api.ContainerRemove(ctx, r.ID, container.RemoveOptions{Force: true}))
			t4 := time.Now()
			create, start, exit, remove = create+t1.Sub(t0), start+t2.Sub(t1), exit+t3.Sub(t2), remove+t4.Sub(t3)
		}
		b.ReportMetric(ms(create, n), "create-ms")
		b.ReportMetric(ms(start, n), "start-ms")
		b.ReportMetric(ms(exit, n), "until-exit-ms")
		b.ReportMetric(ms(remove, n), "remove-ms")
	})

	b.Run("warm-exec", func(b *testing.B) {
		sb, err := c.Create(ctx, spec)
		require.NoError(b, err)
		defer sb.Close()
		var create, attach, run, inspect time.Duration
		n := 0
		for b.Loop() {
			n++
			t0 := time.Now()
			r, err := api.ContainerExecCreate(ctx, sb.ID(), container.ExecOptions{Cmd: []string{"true"}, AttachStdout: true, AttachStderr: true})
			require.NoError(b, err)
			t1 := time.Now()
			hj, err := api.ContainerExecAttach(ctx, r.ID, container.ExecAttachOptions{})
			require.NoError(b, err)
			t2 := time.Now()
			_, _ = io.Copy(io.Discard, hj.Reader)
			hj.Close()
			t3 := time.Now()
			_, err = api.ContainerExecInspect(ctx, r.ID)
			require.NoError(b, err)
			t4 := time.Now()
			create, attach, run, inspect = create+t1.Sub(t0), attach+t2.Sub(t1), run+t3.Sub(t2), inspect+t4.Sub(t3)
		}
		b.ReportMetric(ms(create, n), "create-ms")
		b.ReportMetric(ms(attach, n), "start-ms")
		b.ReportMetric(ms(run, n), "until-output-ends-ms")
		b.ReportMetric(ms(inspect, n), "inspect-ms")
	})
}
