package agent

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLockDir(t *testing.T) {
	dir := t.TempDir()
	first, err := lockDir(dir)
	require.NoError(t, err)
	_, err = lockDir(dir)
	require.ErrorIs(t, err, ErrStateDirBusy, "a second lock, even in the same process, is refused")
	require.NoError(t, first.Close())
	again, err := lockDir(dir)
	require.NoError(t, err, "closing releases the lock")
	assert.NoError(t, again.Close())
}

func TestRemoveStateDir(t *testing.T) {
	parent := t.TempDir()
	held := filepath.Join(parent, "held")
	require.NoError(t, os.MkdirAll(filepath.Join(held, "runs", "x"), 0o755))
	lock, err := lockDir(held)
	require.NoError(t, err)
	require.ErrorIs(t, RemoveStateDir(held), ErrStateDirBusy, "a held directory is refused")
	assert.DirExists(t, filepath.Join(held, "runs", "x"), "and left whole")

	require.NoError(t, lock.Close())
	require.NoError(t, RemoveStateDir(held), "once released it goes")
	assert.NoDirExists(t, held)
	assert.NoError(t, RemoveStateDir(filepath.Join(parent, "missing")), "a missing directory is not an error")
}
