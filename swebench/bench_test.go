package swebench_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/swebench"
	"github.com/swebox/swebox/swebench/dataset"
)

// BenchmarkInstanceOverhead evaluates gold patches one instance at a time
// and reports what an instance costs beyond its eval script: checkout,
// sandbox, copies, patch application, grading and teardown; with -v it logs
// the first instance's run_instance.log, whose timestamps show each step.
// The log-diffs sub-benchmark adds the two `git diff` runs the official
// harness logs around the tests (Config.LogDiffs); share-objects lets the
// checkout borrow the source's objects instead of packing the base
// commit's (Config.ShareObjects).
//
//	go test ./swebench -run '^$' -bench InstanceOverhead -benchtime 8x -v
func BenchmarkInstanceOverhead(b *testing.B) {
	for _, v := range []struct {
		name string
		set  func(*swebench.Config)
	}{
		{"default", func(*swebench.Config) {}},
		{"log-diffs", func(c *swebench.Config) { c.LogDiffs = true }},
		{"share-objects", func(c *swebench.Config) { c.ShareObjects = true }},
	} {
		b.Run(v.name, func(b *testing.B) { benchmarkOverhead(b, v.set) })
	}
}

func benchmarkOverhead(b *testing.B, set func(*swebench.Config)) {
	f := newFixture(b)
	base := f.dataset[0]
	var overhead, total []time.Duration
	n := 0
	for b.Loop() {
		n++
		id := fmt.Sprintf("calc__calc-b%d", n)
		inst := base
		inst.InstanceID = id
		f.dataset = []dataset.Instance{inst}
		cfg := f.config(b, fmt.Sprintf("bench-%d", n), []dataset.Prediction{pred(id, goldPatch)})
		cfg.MaxWorkers = 1
		set(&cfg)
		res, err := swebench.Evaluate(context.Background(), cfg)
		require.NoError(b, err)
		require.Len(b, res.Instances, 1)
		r := res.Instances[0]
		require.Equal(b, swebench.StatusResolved, r.Status, r.Error)
		if n == 1 {
			log, _ := os.ReadFile(filepath.Join(r.LogDir, "run_instance.log"))
			b.Logf("run_instance.log of the first instance:\n%s", log)
		}
		overhead = append(overhead, r.Duration-r.TestDuration)
		total = append(total, r.Duration)
	}
	p50 := func(d []time.Duration) float64 {
		slices.Sort(d)
		return float64(d[len(d)/2].Microseconds()) / 1000
	}
	b.ReportMetric(p50(overhead), "overhead-p50-ms")
	b.ReportMetric(p50(total), "instance-p50-ms")
}
