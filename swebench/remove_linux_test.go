//go:build linux

package swebench

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/internal/fsutil"
)

// nonRootUID is who removes the workspace when the test runs as root: the
// sandbox user, whose files a workspace holds.
const nonRootUID = 1000

// TestRemoveWorkspaceAsNonRoot removes, as a user other than root, a
// workspace whose tests made directories unreadable (chmod 000) and
// read-only (0555). A plain os.RemoveAll fails on it; fsutil.RemoveAll's
// chmod-and-retry removes it. Root ignores permissions, so as root the
// removal runs in a child process with the credentials of uid 1000.
func TestRemoveWorkspaceAsNonRoot(t *testing.T) {
	if ws := os.Getenv("SWEBOX_REMOVE_WORKSPACE"); ws != "" {
		var err error
		if os.Getenv("SWEBOX_REMOVE_PLAIN") != "" {
			err = os.RemoveAll(ws)
		} else {
			err = fsutil.RemoveAll(ws)
		}
		require.NoError(t, err, "as uid %d", os.Getuid())
		return
	}

	// Everything the child needs must be reachable by uid 1000: a
	// directory of mode 0755 under the sticky /tmp, the test binary
	// copied into it.
	base, err := os.MkdirTemp("", "swebox-remove-")
	require.NoError(t, err)
	defer os.RemoveAll(base)
	require.NoError(t, os.Chmod(base, 0o755))
	bin := filepath.Join(base, "swebench.test")
	copyExecutable(t, bin)

	type testCase struct {
		name    string
		plain   bool
		removed bool
	}
	for _, tc := range []testCase{
		{name: "os.RemoveAll fails", plain: true, removed: false},
		{name: "fsutil.RemoveAll removes it", removed: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The workspace's parent is the remover's too, as the run's
			// work directory is.
			parent := filepath.Join(base, map[bool]string{true: "plain", false: "retry"}[tc.plain])
			require.NoError(t, os.Mkdir(parent, 0o755))
			if os.Getuid() == 0 {
				require.NoError(t, os.Chown(parent, nonRootUID, nonRootUID))
			}
			ws := filepath.Join(parent, "ws")
			hostileWorkspace(t, ws)
			cmd := exec.Command(bin, "-test.run=^TestRemoveWorkspaceAsNonRoot$")
			cmd.Env = append(os.Environ(), "SWEBOX_REMOVE_WORKSPACE="+ws)
			if tc.plain {
				cmd.Env = append(cmd.Env, "SWEBOX_REMOVE_PLAIN=1")
			}
			if os.Getuid() == 0 {
				cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nonRootUID, Gid: nonRootUID}}
			}
			out, err := cmd.CombinedOutput()
			if tc.removed {
				require.NoError(t, err, "%s", out)
				assert.NoDirExists(t, ws)
			} else {
				require.Error(t, err, "the workspace defeats a plain removal: %s", out)
				assert.Contains(t, string(out), filepath.Join(ws, "locked")+": permission denied", "because of the locked directory")
				assert.DirExists(t, ws)
			}
		})
	}
}

// hostileWorkspace makes ws as the tests of an instance could leave it, owned
// by the user who removes it: a directory of mode 000 holding files and a
// subdirectory, and a read-only directory holding a file.
func hostileWorkspace(t *testing.T, ws string) {
	t.Helper()
	for _, d := range []string{"src/pkg", "locked/inner", "readonly"} {
		require.NoError(t, os.MkdirAll(filepath.Join(ws, d), 0o755))
	}
	for _, f := range []string{"src/pkg/a.py", "locked/secret", "locked/inner/b", "readonly/c"} {
		require.NoError(t, os.WriteFile(filepath.Join(ws, f), []byte("x"), 0o644))
	}
	if os.Getuid() == 0 {
		require.NoError(t, filepath.Walk(ws, func(p string, _ os.FileInfo, err error) error {
			if err != nil {
				return err
			}
			return os.Lchown(p, nonRootUID, nonRootUID)
		}))
	}
	require.NoError(t, os.Chmod(filepath.Join(ws, "readonly"), 0o555))
	require.NoError(t, os.Chmod(filepath.Join(ws, "locked"), 0o000))
	t.Cleanup(func() {
		_ = os.Chmod(filepath.Join(ws, "locked"), 0o755)
		_ = os.Chmod(filepath.Join(ws, "readonly"), 0o755)
	})
}

// copyExecutable copies the running test binary to dst, mode 0755.
func copyExecutable(t *testing.T, dst string) {
	t.Helper()
	self, err := os.Executable()
	require.NoError(t, err)
	src, err := os.Open(self)
	require.NoError(t, err)
	defer src.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	require.NoError(t, err)
	_, err = io.Copy(out, src)
	require.NoError(t, errors.Join(err, out.Close()))
}
