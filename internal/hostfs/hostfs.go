// Package hostfs reads and writes files in directories a sandbox can write
// (workspaces, install trees, job output, run directories) without letting
// the sandbox steer the host. Every access goes through an [os.Root], so no
// path leads outside the directory; a symlink at the name itself is refused
// rather than followed; only regular files are read, opened non-blocking so
// a FIFO cannot hold the host; and reads are bounded, so a file the sandbox
// made huge (a sparse 1000 MB file costs it nothing) costs the host at most
// the bound. It also describes host files as tar entries ([TarHeader]).
//
// It imports nothing of the module's, so that sandbox can import it.
package hostfs

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// ErrNotRegular: the name is a symlink, a directory, a FIFO or another
// special file, which the host does not read.
var ErrNotRegular = errors.New("not a regular file")

// ErrTooLarge: the file is larger than the caller's bound.
var ErrTooLarge = errors.New("file too large")

// Open opens the regular file name in root for reading. A symlink at name
// is refused, not followed (even one that stays inside root), and the file
// opened is checked to be regular.
func Open(root *os.Root, name string) (*os.File, fs.FileInfo, error) {
	fi, err := root.Lstat(name)
	if err != nil {
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, nil, &fs.PathError{Op: "open", Path: name, Err: ErrNotRegular}
	}
	// O_NONBLOCK: a FIFO swapped in after the Lstat opens without waiting
	// for a writer, and is refused below.
	f, err := root.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, err
	}
	fi, err = f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = &fs.PathError{Op: "open", Path: name, Err: ErrNotRegular}
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, fi, nil
}

// ReadFile reads the regular file name in root, which must hold at most
// limit bytes ([ErrTooLarge] otherwise). It never allocates more than
// limit+1 bytes, whatever size the file claims.
func ReadFile(root *os.Root, name string, limit int64) ([]byte, error) {
	f, fi, err := Open(root, name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi.Size() > limit {
		return nil, &fs.PathError{Op: "read", Path: name, Err: fmt.Errorf("%w: %d bytes, more than %d", ErrTooLarge, fi.Size(), limit)}
	}
	// The file may grow after the Stat; read one byte more than allowed to
	// see it.
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, &fs.PathError{Op: "read", Path: name, Err: fmt.Errorf("%w: more than %d bytes", ErrTooLarge, limit)}
	}
	return b, nil
}

// WriteFile writes data to name in root as a new file with mode perm.
// Whatever the sandbox left at name (a symlink, a FIFO, a tree) is removed
// first and the file is created exclusively, so the write lands in a file
// of the host's own making.
func WriteFile(root *os.Root, name string, data []byte, perm fs.FileMode) error {
	if err := root.RemoveAll(name); err != nil {
		return err
	}
	f, err := root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	return errors.Join(err, f.Close())
}
