package hostfs

import (
	"archive/tar"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// An entry keeps its kind, mode and size, a symlink its target unfollowed,
// and no entry keeps its owner; readlink is asked for symlinks only.
func TestTarHeader(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "f"), []byte("hello"), 0o640))
	require.NoError(t, os.Mkdir(filepath.Join(dir, "d"), 0o750))
	require.NoError(t, os.Symlink("/etc/passwd", filepath.Join(dir, "l")))
	if os.Geteuid() == 0 {
		// Owned by someone, so that clearing the owner shows.
		for _, n := range []string{"f", "d", "l"} {
			require.NoError(t, os.Lchown(filepath.Join(dir, n), 1234, 1234))
		}
	}
	type testCase struct {
		name     string
		typeflag byte
		mode     int64
		size     int64
		link     string
	}
	for _, tc := range []testCase{
		{name: "f", typeflag: tar.TypeReg, mode: 0o640, size: 5},
		{name: "d", typeflag: tar.TypeDir, mode: 0o750},
		{name: "l", typeflag: tar.TypeSymlink, mode: 0o777, link: "/etc/passwd"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(dir, tc.name)
			info, err := os.Lstat(p)
			require.NoError(t, err)
			asked := 0
			h, err := TarHeader(info, "in/"+tc.name, func() (string, error) { asked++; return os.Readlink(p) })
			require.NoError(t, err)
			assert.Equal(t, "in/"+tc.name, h.Name)
			assert.Equal(t, tc.typeflag, h.Typeflag)
			assert.Equal(t, tc.mode, h.Mode&0o777)
			assert.Equal(t, tc.size, h.Size)
			assert.Equal(t, tc.link, h.Linkname)
			assert.Equal(t, map[bool]int{true: 1, false: 0}[tc.link != ""], asked)
			assert.Zero(t, h.Uid)
			assert.Zero(t, h.Gid)
			assert.Empty(t, h.Uname)
			assert.Empty(t, h.Gname)
		})
	}
	info, err := os.Lstat(filepath.Join(dir, "l"))
	require.NoError(t, err)
	gone := errors.New("link gone")
	_, err = TarHeader(info, "l", func() (string, error) { return "", gone })
	assert.ErrorIs(t, err, gone, "a link that cannot be read is an error, not an empty target")
}
