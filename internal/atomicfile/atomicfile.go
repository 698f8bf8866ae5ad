// Package atomicfile writes files that a crash cannot leave half written:
// the data goes to a temporary file in the same directory, is synced, and
// is renamed over the target, and the directory is synced so that the
// rename itself survives a power loss. A reader, or a rerun after a crash,
// finds the old file or the new one (or none), never part of one. A crash
// may leave a temporary file named ".<name>.tmp-*" beside the target;
// [RemoveStale] removes those.
package atomicfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// WriteFile writes data to path atomically with permissions perm.
func WriteFile(path string, data []byte, perm fs.FileMode) error {
	f, err := Create(path, perm)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Abort()
		return fmt.Errorf("write %s: %w", path, err)
	}
	return f.Commit()
}

// File is a file being written; nothing appears at its path until Commit.
type File struct {
	*os.File
	path string
	perm fs.FileMode
	done bool
}

// Create starts writing path: the returned File writes to a temporary file
// beside it until Commit renames it into place or Abort removes it.
func Create(path string, perm fs.FileMode) (*File, error) {
	f, err := os.CreateTemp(filepath.Dir(path), tempPrefix(filepath.Base(path))+"*")
	if err != nil {
		return nil, fmt.Errorf("write %s: %w", path, err)
	}
	return &File{File: f, path: path, perm: perm}, nil
}

func tempPrefix(name string) string { return "." + name + ".tmp-" }

// Commit syncs the data, closes the file and renames it to its path, then
// syncs the directory. On error nothing is left but the old file, if any.
func (f *File) Commit() error {
	if f.done {
		return fmt.Errorf("write %s: %w", f.path, os.ErrClosed)
	}
	f.done = true
	tmp := f.Name()
	err := errors.Join(f.Chmod(f.perm), f.Sync())
	err = errors.Join(err, f.Close())
	if err == nil {
		err = os.Rename(tmp, f.path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", f.path, err)
	}
	if err := syncDir(filepath.Dir(f.path)); err != nil {
		return fmt.Errorf("write %s: sync directory: %w", f.path, err)
	}
	return nil
}

// Abort closes and removes the temporary file; the path is left alone.
// It does nothing after Commit or an earlier Abort.
func (f *File) Abort() {
	if f.done {
		return
	}
	f.done = true
	f.Close()
	os.Remove(f.Name())
}

// syncDir makes a rename in dir durable. Windows cannot open a directory
// for syncing, and its renames need no such step.
func syncDir(dir string) error {
	if runtime.GOOS == "windows" {
		return nil
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// RemoveStale removes the temporary files a crash left in dir while
// writing name ("" for any name).
func RemoveStale(dir, name string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	}
	var errs []error
	for _, e := range entries {
		n := e.Name()
		if e.IsDir() || !strings.HasPrefix(n, ".") || !strings.Contains(n, ".tmp-") {
			continue
		}
		if name != "" && !strings.HasPrefix(n, tempPrefix(name)) {
			continue
		}
		if err := os.Remove(filepath.Join(dir, n)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
