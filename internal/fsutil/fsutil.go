// Package fsutil holds the file system helpers that agent and swebench
// share: a non-blocking lock on an open file, released by the operating
// system when the process dies, and the removal of a tree that a sandbox
// made unreadable or read-only in places.
package fsutil

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// ErrNoLocking is TryLock's error on a platform without file locks.
var ErrNoLocking = errors.New("no file locking on this platform")

// TryLock takes a lock on f without waiting: exclusive or shared. It
// reports false, without an error, when another open file holds a
// conflicting lock. The lock belongs to the open file (flock(2) on Unix,
// LockFileEx on Windows), so two opens in one process exclude each other
// too, and it goes when f is closed or the process dies.
func TryLock(f *os.File, exclusive bool) (bool, error) { return tryLock(f, exclusive) }

// Unlock releases a lock TryLock took.
func Unlock(f *os.File) { unlock(f) }

// RemoveAll removes the tree at p, also when the tests a sandbox ran made
// directories in it unreadable or read-only (chmod 000, 0555), which
// os.RemoveAll alone cannot remove as a user other than root. A tree that
// does not exist is not an error.
func RemoveAll(p string) error {
	if err := os.RemoveAll(p); err == nil {
		return nil
	}
	_ = filepath.WalkDir(p, func(q string, d fs.DirEntry, err error) error {
		if d != nil && d.IsDir() {
			_ = os.Chmod(q, 0o700)
		}
		return nil
	})
	if err := os.RemoveAll(p); err != nil {
		return fmt.Errorf("remove %s: %w", p, err)
	}
	return nil
}
