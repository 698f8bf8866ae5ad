//go:build unix

package hostfs

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Apart from the portable tests: a FIFO (syscall.Mkfifo) and symbolic
// links are what a sandbox plants on a Unix host.

// The sandbox plants these in a directory it can write; the host reads them
// through the package.
func TestRefusesWhatTheSandboxPlants(t *testing.T) {
	host := t.TempDir()
	secret := filepath.Join(host, "secret")
	require.NoError(t, os.WriteFile(secret, []byte("secret"), 0o600))
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "inside"), []byte("inside"), 0o600))
	require.NoError(t, os.Symlink(secret, filepath.Join(dir, "out")))
	require.NoError(t, os.Symlink("inside", filepath.Join(dir, "in")))
	require.NoError(t, syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o600))
	require.NoError(t, os.Mkdir(filepath.Join(dir, "sub"), 0o755))
	require.NoError(t, os.Symlink(host, filepath.Join(dir, "hostdir")))
	root, err := os.OpenRoot(dir)
	require.NoError(t, err)
	defer root.Close()

	type testCase struct {
		name string
		want error
	}
	for _, tc := range []testCase{
		{"out", ErrNotRegular},
		{"in", ErrNotRegular},
		{"fifo", ErrNotRegular},
		{"sub", ErrNotRegular},
		{"hostdir/secret", nil}, // escapes: os.Root refuses
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadFile(root, tc.name, 100)
			require.Error(t, err)
			if tc.want != nil {
				assert.ErrorIs(t, err, tc.want)
			}
			_, _, err = Open(root, tc.name)
			require.Error(t, err)
		})
	}
	b, err := ReadFile(root, "inside", 100)
	require.NoError(t, err)
	assert.Equal(t, "inside", string(b))

	// Writing replaces the link; the host file keeps its content.
	require.NoError(t, WriteFile(root, "out", []byte("new"), 0o644))
	got, err := os.ReadFile(secret)
	require.NoError(t, err)
	assert.Equal(t, "secret", string(got))
	fi, err := os.Lstat(filepath.Join(dir, "out"))
	require.NoError(t, err)
	assert.True(t, fi.Mode().IsRegular())
}
