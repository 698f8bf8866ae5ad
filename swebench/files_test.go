package swebench

import (
	"os"
	"path/filepath"
	"strings"
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
