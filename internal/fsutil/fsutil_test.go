package fsutil_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/internal/fsutil"
)

// Two opens of one file exclude each other, in one process too; shared
// locks coexist; Unlock and Close release.
func TestTryLock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lock")
	open := func() *os.File {
		f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
		require.NoError(t, err)
		t.Cleanup(func() { f.Close() })
		return f
	}
	a, b := open(), open()
	ok, err := fsutil.TryLock(a, true)
	require.NoError(t, err)
	require.True(t, ok)
	ok, err = fsutil.TryLock(b, true)
	require.NoError(t, err)
	assert.False(t, ok, "held by the other open file")
	ok, err = fsutil.TryLock(b, false)
	require.NoError(t, err)
	assert.False(t, ok, "a shared lock waits for the exclusive one")

	fsutil.Unlock(a)
	ok, err = fsutil.TryLock(b, false)
	require.NoError(t, err)
	assert.True(t, ok)
	ok, err = fsutil.TryLock(a, false)
	require.NoError(t, err)
	assert.True(t, ok, "shared locks coexist")
	ok, err = fsutil.TryLock(open(), true)
	require.NoError(t, err)
	assert.False(t, ok)
	require.NoError(t, a.Close())
	require.NoError(t, b.Close())
	ok, err = fsutil.TryLock(open(), true)
	require.NoError(t, err)
	assert.True(t, ok, "closing releases")
}

// RemoveAll removes a tree with unreadable and read-only directories
// (swebench's TestRemoveWorkspaceAsNonRoot runs it as a user other than
// root, whom permissions bind), and a missing tree is not an error.
func TestRemoveAll(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ws")
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "locked", "deep"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "locked", "deep", "f"), []byte("x"), 0o644))
	require.NoError(t, os.Chmod(filepath.Join(dir, "locked", "deep"), 0o555))
	require.NoError(t, os.Chmod(filepath.Join(dir, "locked"), 0o000))
	require.NoError(t, fsutil.RemoveAll(dir))
	assert.NoDirExists(t, dir)
	assert.NoError(t, fsutil.RemoveAll(dir))
}
