package agent

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A command (or a process an earlier command of its session left running)
// can replace its stats.json or a test case's report with a huge sparse
// file; the host's read stays bounded. The test plants the file where
// /workspace/.swebox/run-<id>/ of the sandbox would.
func TestRunDirReadBounded(t *testing.T) {
	ws := t.TempDir()
	d, err := openRunDir(ws, "sparse")
	require.NoError(t, err)
	t.Cleanup(func() { _ = d.remove() })
	p := filepath.Join(ws, d.rel, "stats.json")
	f, err := os.Create(p)
	require.NoError(t, err)
	require.NoError(t, f.Truncate(1000<<20))
	require.NoError(t, f.Close())

	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	b, err := d.read("stats.json")
	runtime.ReadMemStats(&after)
	assert.Error(t, err, "a 1000 MB stats file is not read")
	assert.Zero(t, len(b))
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(16<<20), "bytes allocated reading a 1000 MB file")
}
