package main

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"

	"github.com/swebox/swebox/agent"
)

// tempDir is where one server keeps every temporary file:
// <os.TempDir()>/swebox-mcp-<name>/<instance>/, locked while the server
// lives. A server killed before it could remove it leaves it behind; the
// next server of the same name removes every instance directory whose lock
// is free, and never one a live server holds.
type tempDir struct {
	dir  string
	lock io.Closer
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]`)

// tempRoot is the directory of every server named name.
func tempRoot(name string) string {
	return filepath.Join(os.TempDir(), "swebox-mcp-"+unsafeName.ReplaceAllString(name, "_"))
}

// newTempDir removes what dead servers of the same name left, then creates
// and locks this server's directory.
func newTempDir(name string, log *slog.Logger) (*tempDir, error) {
	root := tempRoot(name)
	if err := os.MkdirAll(root, 0o700); err != nil {
		return nil, fmt.Errorf("create temporary directory: %w", err)
	}
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil, fmt.Errorf("read temporary directory: %w", err)
	}
	for _, e := range entries {
		p := filepath.Join(root, e.Name())
		if err := agent.RemoveStateDir(p); err != nil && !errors.Is(err, agent.ErrStateDirBusy) {
			// Not fatal: this server's files go elsewhere.
			log.Warn("remove files of an earlier server", "dir", p, "err", err)
		}
	}
	dir, err := os.MkdirTemp(root, "run-")
	if errors.Is(err, os.ErrNotExist) {
		// A server of the same name that just exited removed the root.
		if err = os.MkdirAll(root, 0o700); err == nil {
			dir, err = os.MkdirTemp(root, "run-")
		}
	}
	if err != nil {
		return nil, fmt.Errorf("create temporary directory: %w", err)
	}
	lock, err := agent.LockStateDir(dir)
	if err != nil {
		return nil, errors.Join(fmt.Errorf("lock temporary directory: %w", err), os.RemoveAll(dir))
	}
	return &tempDir{dir: dir, lock: lock}, nil
}

// path is name inside the server's directory.
func (t *tempDir) path(name string) string { return filepath.Join(t.dir, name) }

// Close releases the lock and removes the directory, and the root when no
// other server uses it; run it after everything that writes there has
// stopped.
func (t *tempDir) Close() error {
	err := errors.Join(t.lock.Close(), agent.RemoveStateDir(t.dir))
	_ = os.Remove(filepath.Dir(t.dir)) // fails, as it should, while not empty
	return err
}
