package hostile_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/internal/swebenchtest"
	"github.com/swebox/swebox/internal/testenv"
	"github.com/swebox/swebox/swebench"
	"github.com/swebox/swebox/swebench/dataset"
)

// floodMiB is how much the flood prints: 256 times what test_output.txt
// keeps.
const floodMiB = 256

// TestHostileFlood: tests that print hundreds of megabytes after pytest's
// results. test_output.txt keeps its cap (head and tail, so pytest's
// summary survives and the instance is graded), and the evaluating
// process's Go heap, sampled throughout, never holds more than a fraction
// of the flood. It runs alone, with a generous timeout, because the flood
// passes through dockerd and this race-instrumented process.
func TestHostileFlood(t *testing.T) {
	c := testenv.Client(t)
	p := swebenchtest.NewProject(t)
	id := "hostile__flood-1"
	patch := withConftest(swebenchtest.Gold, fmt.Sprintf(`import sys


def pytest_terminal_summary(terminalreporter):
    terminalreporter.write_line("FLOOD-START")
    sys.stdout.flush()
    chunk = (b"y" * 1023 + b"\n") * 1024
    for _ in range(%d):
        sys.stdout.buffer.write(chunk)
    sys.stdout.buffer.flush()
    terminalreporter.write_line("FLOOD-END")
`, floodMiB))
	cfg := p.Config(t, c, "flood", []dataset.Instance{p.Instance(id)}, []dataset.Prediction{swebenchtest.Pred(id, patch)})
	cfg.Timeout = 5 * time.Minute

	runtime.GC()
	var base runtime.MemStats
	runtime.ReadMemStats(&base)
	stop := make(chan struct{})
	var peak uint64
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapInuse)
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	res, err := swebench.Evaluate(context.Background(), cfg)
	close(stop)
	wg.Wait()
	require.NoError(t, err)

	r := swebenchtest.ByID(res)[id]
	assert.Equal(t, swebench.StatusResolved, r.Status, r.Error)
	out := swebenchtest.ReadFile(t, cfg, id, "test_output.txt")
	for _, s := range []string{"FLOOD-START", "FLOOD-END", "bytes of output dropped here]", "3 passed"} {
		assert.Contains(t, out, s)
	}
	fi, err := os.Stat(filepath.Join(swebenchtest.InstanceDir(cfg, id), "test_output.txt"))
	require.NoError(t, err)
	assert.LessOrEqual(t, fi.Size(), cfg.TestOutputLimit+100, "test_output.txt is capped")
	grew := int64(peak) - int64(base.HeapInuse)
	t.Logf("%d MiB of output; test_output.txt %d KiB; Go heap in use grew by at most %d MiB", floodMiB, fi.Size()>>10, grew>>20)
	assert.Less(t, grew, int64(floodMiB/8)<<20, "the evaluating process never holds the flood")
}
