package main

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// readMemoryPeak starts a server with --read_memory limit, makes a file of
// size random bytes in a session and reads it from n session_read_file
// calls at once; it returns how far the server's peak memory rose.
func readMemoryPeak(t *testing.T, limit, size int64, n int) int64 {
	c := engine(t)
	// A collector that runs often makes the peak the live memory more
	// than garbage waiting for it.
	s := startStdioEnv(t, baseArgs(c, "--store_limit", strconv.FormatInt(size, 10), "--read_memory", strconv.FormatInt(limit, 10)), nil, []string{"GOGC=10"})
	info, _ := callOK[sessionInfoOut](t, s.cs, "session_create", map[string]any{})
	out, _ := callOK[runOutput](t, s.cs, "session_exec", map[string]any{"session": info.Session,
		"command": "head -c " + strconv.FormatInt(size, 10) + " /dev/urandom > big && stat -c %s big"})
	require.Equal(t, strconv.FormatInt(size, 10)+"\n", out.Stdout, out.Stderr)
	before := peakRSS(t, s.cmd.Process.Pid)
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, _ := callOK[sessionReadOut](t, s.cs, "session_read_file", map[string]any{"session": info.Session, "path": "big"})
			assert.Equal(t, size, r.Size)
		}()
	}
	wg.Wait()
	return peakRSS(t, s.cmd.Process.Pid) - before
}

// TestReadFileMemoryBounded: concurrent session_read_file calls of a large
// file hold at most --read_memory bytes of content at once, server-wide.
// 32 concurrent reads of a 16 MiB file (512 MiB in all) raise the server's
// peak memory by less than 12 files' worth with --read_memory at one
// file's size (without the race detector, which multiplies it), and by
// more than twice as much without a bound, in the same run. (Not one
// file's worth: a read holds its content about twice over while its result
// is built, the SDK encodes the result after the handler has given its
// memory back, and the server keeps the last ones for resources/read.)
func TestReadFileMemoryBounded(t *testing.T) {
	const size, n = 16 << 20, 32
	bounded := readMemoryPeak(t, size, size, n)
	unbounded := readMemoryPeak(t, 1<<40, size, n)
	t.Logf("peak memory rose by %d MiB with --read_memory at one file's size, by %d MiB without a bound", bounded>>20, unbounded>>20)
	if !raceEnabled { // the race detector multiplies the memory of both
		assert.Less(t, bounded, int64(12*size), "the rise does not grow with the number of reads")
	}
	assert.Less(t, 2*bounded, unbounded, "the bound is what keeps it down")
}

// TestToolDescriptionsFollowFeedback: the evaluation tools promise the
// per-test report only on a server that gives it (--test_feedback).
func TestToolDescriptionsFollowFeedback(t *testing.T) {
	c := engine(t)
	for _, feedback := range []bool{false, true} {
		args := baseArgs(c)
		if feedback {
			args = append(args, "--test_feedback")
		}
		s := startStdio(t, args, nil)
		tools, err := s.cs.ListTools(context.Background(), nil)
		require.NoError(t, err)
		seen := 0
		for _, tool := range tools.Tools {
			if tool.Name == "swebench_evaluate" || tool.Name == "swebench_grade_log" {
				seen++
				promises := strings.Contains(tool.Description, "per-test report") || strings.Contains(tool.Description, "report.json")
				assert.Equal(t, feedback, promises, "%s with --test_feedback=%v: %s", tool.Name, feedback, tool.Description)
			}
		}
		require.Equal(t, 2, seen)
	}
}
