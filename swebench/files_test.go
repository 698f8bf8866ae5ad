package swebench

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCappedFile(t *testing.T) {
	type testCase struct {
		name   string
		limit  int64
		writes []string
		want   string
	}
	for _, tc := range []testCase{
		{name: "fits", limit: 16, writes: []string{"abc", "def"}, want: "abcdef"},
		{name: "fills the head, then the tail", limit: 16, writes: []string{"0123456789abcdef"}, want: "0123456789abcdef"},
		{name: "over the limit keeps head and the last bytes", limit: 16, writes: []string{"0123456789abcdefXYZ"},
			want: "0123456789abcd\n[swebox: 3 bytes of output dropped here]\nYZ"},
		{name: "many small writes wrap the tail", limit: 16, writes: strings.Split("0123456789abcdefghijklmnop", ""),
			want: "0123456789abcd\n[swebox: 10 bytes of output dropped here]\nop"},
		{name: "empty", limit: 16, want: ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "out.txt")
			f, err := newCappedFile(path, tc.limit)
			require.NoError(t, err)
			for _, w := range tc.writes {
				n, err := f.Write([]byte(w))
				require.NoError(t, err)
				require.Equal(t, len(w), n)
			}
			require.NoError(t, f.Close())
			require.NoError(t, f.Close(), "Close twice is safe")
			got, err := os.ReadFile(path)
			require.NoError(t, err)
			assert.Equal(t, tc.want, string(got))
		})
	}
}

// failingFile is a pendingFile whose writes fail once ok bytes are written,
// as on a disk that fills up.
type failingFile struct {
	ok, written        int
	committed, aborted bool
}

func (f *failingFile) Write(p []byte) (int, error) {
	if f.written+len(p) > f.ok {
		n := f.ok - f.written
		f.written = f.ok
		return n, syscall.ENOSPC
	}
	f.written += len(p)
	return len(p), nil
}

func (f *failingFile) Commit() error { f.committed = true; return nil }
func (f *failingFile) Abort()        { f.aborted = true }

// TestCappedFileWriteErrors: a write that fails, in the head or in the tail
// written at Close (where pytest's summary is), is Close's error, and the
// file is discarded rather than committed.
func TestCappedFileWriteErrors(t *testing.T) {
	type testCase struct {
		name string
		ok   int // bytes the disk takes
	}
	// limit 16: a 14-byte head, a 2-byte tail; 19 bytes written drop 3.
	for _, tc := range []testCase{
		{name: "head", ok: 5},
		{name: "drop note", ok: 20},
		{name: "tail", ok: 14 + len("\n[swebox: 3 bytes of output dropped here]\n") + 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &failingFile{ok: tc.ok}
			c := newCapped(f, 16)
			n, err := c.Write([]byte("0123456789abcdefXYZ"))
			require.NoError(t, err, "the stream goes on; the error waits for Close")
			require.Equal(t, 19, n)
			assert.ErrorIs(t, c.Close(), syscall.ENOSPC)
			assert.True(t, f.aborted, "the file is discarded")
			assert.False(t, f.committed)
			assert.ErrorIs(t, c.Close(), syscall.ENOSPC, "Close twice says it again")
		})
	}
}

// TestCappedFileShowsWhenClosed: nothing is at the path until Close, and
// Abort leaves nothing there.
func TestCappedFileShowsWhenClosed(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "test_output.txt")
	c, err := newCappedFile(path, 1<<10)
	require.NoError(t, err)
	_, err = c.Write([]byte("collected 3 items\n"))
	require.NoError(t, err)
	assert.NoFileExists(t, path, "a crash now leaves no test_output.txt")
	require.NoError(t, c.Close())
	assert.FileExists(t, path)

	c, err = newCappedFile(path, 1<<10)
	require.NoError(t, err)
	_, err = c.Write([]byte("partial"))
	require.NoError(t, err)
	c.Abort()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "collected 3 items\n", string(b), "Abort leaves the previous file alone")
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, entries, 1, "and no temporary file")
}

func TestWriteFileAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "report.json")
	require.NoError(t, writeFileAtomic(path, []byte("one")))
	require.NoError(t, writeFileAtomic(path, []byte("two")))
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "two", string(b))
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, entries, 1, "no temporary file is left behind")
	assert.Error(t, writeFileAtomic(filepath.Join(dir, "missing", "x.json"), []byte("x")))
}
