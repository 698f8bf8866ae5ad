package agent

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/swebox/swebox/internal/fsutil"
)

// lockDir takes the state directory's lock: an exclusive lock on the file
// .lock in dir, held until the returned file is closed and released by the
// operating system when the process dies, so a crashed manager never leaves
// the directory locked. A lock another process holds is ErrStateDirBusy.
func lockDir(dir string) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(dir, ".lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock state directory: %w", err)
	}
	ok, err := fsutil.TryLock(f, true)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("lock state directory %s: %w", dir, err)
	}
	if !ok {
		f.Close()
		return nil, fmt.Errorf("%w: %s", ErrStateDirBusy, dir)
	}
	return f, nil
}

// LockStateDir takes dir's lock the way a Manager takes its state
// directory's: held until Close and released by the operating system when
// the process dies. A lock another holder has is ErrStateDirBusy. A program
// that keeps other files of a run beside (or above) a state directory locks
// that directory with it, so that [RemoveStateDir] spares it while the run
// lives.
func LockStateDir(dir string) (io.Closer, error) { return lockDir(dir) }

// RemoveStateDir removes dir, a state directory given to [WithStateDir],
// unless a live Manager holds it: then it returns ErrStateDirBusy and
// leaves it alone. A directory that does not exist is not an error. A
// program that gives each run its own state directory uses it to clear
// those of runs that died without closing their Manager.
func RemoveStateDir(dir string) error {
	if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	lock, err := lockDir(dir)
	if err != nil {
		return err
	}
	// Everything but the lock file goes while the lock is held, so a
	// Manager starting on dir meanwhile finds it busy, not half removed.
	entries, err := os.ReadDir(dir)
	if err != nil {
		lock.Close()
		return fmt.Errorf("read state directory: %w", err)
	}
	var errs []error
	for _, e := range entries {
		if e.Name() != ".lock" {
			errs = append(errs, fsutil.RemoveAll(filepath.Join(dir, e.Name())))
		}
	}
	errs = append(errs, lock.Close())
	if err := errors.Join(errs...); err != nil {
		return err
	}
	return fsutil.RemoveAll(dir)
}
