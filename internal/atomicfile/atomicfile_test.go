package atomicfile

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "report.json")
	require.NoError(t, WriteFile(path, []byte("one"), 0o644))
	require.NoError(t, WriteFile(path, []byte("two"), 0o644))
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "two", string(b))
	st, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o644), st.Mode().Perm())
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, entries, 1, "no temporary file is left behind")
	assert.Error(t, WriteFile(filepath.Join(dir, "missing", "x.json"), []byte("x"), 0o644))
}

func TestCreateAbortAndCommit(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "test_output.txt")
	require.NoError(t, os.WriteFile(path, []byte("old"), 0o644))

	f, err := Create(path, 0o644)
	require.NoError(t, err)
	_, err = f.WriteString("half")
	require.NoError(t, err)
	b, _ := os.ReadFile(path)
	assert.Equal(t, "old", string(b), "nothing shows at the path before Commit")
	f.Abort()
	f.Abort()
	b, _ = os.ReadFile(path)
	assert.Equal(t, "old", string(b), "Abort leaves the path alone")
	assert.Error(t, f.Commit(), "no Commit after Abort")

	f, err = Create(path, 0o644)
	require.NoError(t, err)
	_, err = f.WriteString("new")
	require.NoError(t, err)
	require.NoError(t, f.Commit())
	f.Abort() // a no-op after Commit
	b, _ = os.ReadFile(path)
	assert.Equal(t, "new", string(b))
	entries, _ := os.ReadDir(dir)
	assert.Len(t, entries, 1)
}

func TestRemoveStale(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{".report.json.tmp-1", ".eval.sh.tmp-2", "report.json", ".hidden"} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, n), nil, 0o644))
	}
	require.NoError(t, RemoveStale(dir, "report.json"))
	assert.NoFileExists(t, filepath.Join(dir, ".report.json.tmp-1"))
	assert.FileExists(t, filepath.Join(dir, ".eval.sh.tmp-2"))
	require.NoError(t, RemoveStale(dir, ""))
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	assert.ElementsMatch(t, []string{".hidden", "report.json"}, names)
	assert.NoError(t, RemoveStale(filepath.Join(dir, "missing"), ""))
}

// crashSize is the size of each version the crashing writer writes: large
// enough that a kill lands in the middle of writing one.
const crashSize = 8 << 20

// TestCrashLeavesNoPartialFile kills a process that rewrites a file in a
// loop with SIGKILL, several times, and finds each time the whole of one
// version at the path: every byte the same, the full size.
func TestCrashLeavesNoPartialFile(t *testing.T) {
	if os.Getenv("ATOMICFILE_CRASH_PATH") != "" {
		crashWriter(os.Getenv("ATOMICFILE_CRASH_PATH"))
		return
	}
	for trial := range 3 {
		path := filepath.Join(t.TempDir(), "report.json")
		cmd := exec.Command(os.Args[0], "-test.run=^TestCrashLeavesNoPartialFile$")
		cmd.Env = append(os.Environ(), "ATOMICFILE_CRASH_PATH="+path)
		out, err := cmd.StdoutPipe()
		require.NoError(t, err)
		require.NoError(t, cmd.Start())
		sc := bufio.NewScanner(out)
		written := 0
		for written < 2+trial && sc.Scan() {
			if _, err := strconv.Atoi(sc.Text()); err == nil {
				written++
			}
		}
		// The writer is now rewriting the file: kill it mid-write.
		require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
		_ = cmd.Wait()
		require.Equal(t, 2+trial, written, "the writer wrote its versions")

		b, err := os.ReadFile(path)
		require.NoError(t, err)
		require.Len(t, b, crashSize, "trial %d: the file is whole", trial)
		assert.Equal(t, bytes.Repeat(b[:1], crashSize), b, "trial %d: the file is one version", trial)
	}
}

// crashWriter rewrites path forever, version n filled with byte n and
// written as a stream of small writes, and prints n after each.
func crashWriter(path string) {
	chunk := make([]byte, 4<<10)
	for n := 1; ; n++ {
		for i := range chunk {
			chunk[i] = byte(n)
		}
		f, err := Create(path, 0o644)
		for written := 0; err == nil && written < crashSize; written += len(chunk) {
			_, err = f.Write(chunk)
		}
		if err == nil {
			err = f.Commit()
		}
		if err != nil {
			fmt.Println("error:", err)
			os.Exit(1)
		}
		fmt.Println(n)
	}
}
