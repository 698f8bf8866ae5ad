package task

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/swebox/swebox/internal/fsutil"
)

// The directory New makes when Config.Dir is empty holds the workspaces
// bind-mounted into task sandboxes (a checkout each, hundreds of MB for a
// real repository) and the submissions' logs. A program that ends without
// Close (a crash, kill -9, log.Fatal) would leave it in the temporary
// directory for good; its sandboxes the sandbox package removes (see
// sandbox.LabelOwner). So the directory carries a lock that its Tasks
// holds while it lives and the operating system releases when the process
// dies, and each New removes the directories whose lock no process holds.

// taskDirPattern names the directories New makes.
const taskDirPattern = "swebox-tasks-*"

// lockName is the lock file in such a directory. It is made under
// another name, locked, then renamed, so that a sweep never finds a lock
// file that its live maker has not locked yet.
const lockName = ".lock"

// makeTaskDir makes and locks a new task directory.
func makeTaskDir() (dir string, lock *os.File, err error) {
	dir, err = os.MkdirTemp("", taskDirPattern)
	if err != nil {
		return "", nil, err
	}
	fail := func(err error) (string, *os.File, error) {
		if lock != nil {
			lock.Close()
		}
		return "", nil, errors.Join(err, fsutil.RemoveAll(dir))
	}
	tmp := filepath.Join(dir, lockName+".new")
	lock, err = os.OpenFile(tmp, os.O_CREATE|os.O_EXCL|os.O_RDWR, 0o600)
	if err != nil {
		return fail(err)
	}
	ok, err := fsutil.TryLock(lock, true)
	switch {
	case errors.Is(err, fsutil.ErrNoLocking):
		// No locks on this system: the directory is left to Close.
		return dir, lock, nil
	case err != nil:
		return fail(err)
	case !ok:
		return fail(fmt.Errorf("lock %s: held by another process", tmp))
	}
	if err := os.Rename(tmp, filepath.Join(dir, lockName)); err != nil {
		return fail(err)
	}
	return dir, lock, nil
}

// sweepTaskDirs removes the task directories under the temporary
// directory whose lock no process holds: those of programs that ended
// without closing their Tasks. A directory without a lock file, or whose
// lock cannot be taken, is left alone.
func sweepTaskDirs(log *slog.Logger) {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), taskDirPattern))
	for _, d := range dirs {
		if err := sweepTaskDir(d); err != nil && log != nil {
			log.Warn("remove the task directory of an ended program", "dir", d, "err", err)
		}
	}
}

func sweepTaskDir(dir string) error {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil // gone, or not a directory
	}
	f, err := root.OpenFile(lockName, os.O_RDWR, 0)
	root.Close()
	if err != nil {
		return nil // no lock file: not one of ours, or not ready
	}
	defer f.Close()
	ok, err := fsutil.TryLock(f, true)
	if err != nil || !ok {
		return nil // no locking here, or a live Tasks holds it
	}
	return fsutil.RemoveAll(dir)
}
