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

// RemoveAll removes the tree at p even where its owner made directories
// unreadable or read-only (chmod 000, 0555), which stops os.RemoveAll for
// anyone but root. The walk that makes them writable again goes through an
// os.Root on p's parent: a sandbox that still runs, and swaps a directory
// for a link, takes no chmod outside the tree. A tree that does not exist
// is not an error.
func RemoveAll(p string) error {
	if err := os.RemoveAll(p); err == nil {
		return nil
	}
	if root, err := os.OpenRoot(filepath.Dir(p)); err == nil {
		_ = fs.WalkDir(root.FS(), filepath.Base(p), func(q string, d fs.DirEntry, err error) error {
			if d != nil && d.IsDir() {
				_ = root.Chmod(q, 0o700)
			}
			return nil
		})
		root.Close()
	}
	if err := os.RemoveAll(p); err != nil {
		return fmt.Errorf("remove %s: %w", p, err)
	}
	return nil
}
