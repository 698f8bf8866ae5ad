package repo

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/go-git/go-git/v5/plumbing"
)

// writeStats counts what materialise wrote.
type writeStats struct {
	files int   // regular files and symlinks
	bytes int64 // bytes of regular files
}

// materialise writes the flattened tree into dst, which must exist and be
// empty. Every directory is created first, by this function, with mkdir
// (which never follows a symlink); afterwards files and symlinks are
// created with O_EXCL / symlink(2), which do not follow one either. So no
// write can land outside dst, whatever links the tree holds: a tree with
// "a -> /etc" and "a/x" fails on the duplicate name "a".
//
// With pb set, every blob written is also added to that pack; with owner
// set, everything written is chowned to it.
func materialise(ctx context.Context, store *objectStore, ft *flatTree, dst string, workers int, pb *packBuilder, owner *Owner) (writeStats, error) {
	wo := writeOpts{umask: currentUmask(), owner: owner}
	for _, d := range ft.dirs {
		if err := makeDir(filepath.Join(dst, filepath.FromSlash(d)), wo); err != nil {
			return writeStats{}, err
		}
	}

	// Read in pack order: it turns random access into a mostly sequential
	// scan and keeps delta bases in the cache when their deltas come.
	order := make([]int, 0, len(ft.entries))
	for i := range ft.entries {
		e := &ft.entries[i]
		if e.kind != kindGitlink {
			loc, ok := store.locate(e.hash)
			if !ok {
				return writeStats{}, fmt.Errorf("read blob %s for %q: %w", e.hash, e.path, ErrObjectMissing)
			}
			e.loc = loc
		}
		order = append(order, i)
	}
	slices.SortFunc(order, func(a, b int) int {
		la, lb := ft.entries[a].loc, ft.entries[b].loc
		return cmp.Or(cmp.Compare(la.pack, lb.pack), cmp.Compare(la.offset, lb.offset))
	})

	workers = max(1, min(workers, len(order)))
	var (
		next     atomic.Int64
		files    atomic.Int64
		nbytes   atomic.Int64
		failed   atomic.Bool
		errOnce  sync.Once
		firstErr error
		wg       sync.WaitGroup
	)
	fail := func(err error) {
		errOnce.Do(func() { firstErr = err })
		failed.Store(true)
	}
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := store.reader()
			defer r.Close()
			var z *packCompressor
			if pb != nil {
				z = newPackCompressor()
			}
			for !failed.Load() {
				j := int(next.Add(1) - 1)
				if j >= len(order) {
					return
				}
				if j%64 == 0 && ctx.Err() != nil {
					fail(ctx.Err())
					return
				}
				e := &ft.entries[order[j]]
				n, data, err := writeEntry(r, e, filepath.Join(dst, filepath.FromSlash(e.path)), wo)
				if err == nil && pb != nil && e.kind != kindGitlink && pb.claim(e.hash) {
					err = pb.add(z, e.hash, plumbing.BlobObject, data)
				}
				if err != nil {
					fail(err)
					return
				}
				if e.kind != kindGitlink {
					files.Add(1)
				}
				nbytes.Add(n)
			}
		}()
	}
	wg.Wait()
	if firstErr != nil {
		return writeStats{}, firstErr
	}
	return writeStats{files: int(files.Load()), bytes: nbytes.Load()}, nil
}

// writeEntry writes one entry and records its lstat data for the index.
// It returns the number of content bytes written to a regular file and
// the blob's content, valid until the reader's next read.
func writeEntry(r *objectReader, e *treeEntry, path string, wo writeOpts) (int64, []byte, error) {
	if e.kind == kindGitlink {
		return 0, nil, makeDir(path, wo)
	}
	t, data, err := r.readTransient(e.hash, e.loc)
	if err != nil {
		return 0, nil, fmt.Errorf("read blob %s for %q: %w", e.hash, e.path, missing(err))
	}
	if t != plumbing.BlobObject {
		return 0, nil, fmt.Errorf("read blob %s for %q: object is a %s", e.hash, e.path, t)
	}
	if e.kind == kindSymlink {
		if err := os.Symlink(string(data), path); err != nil {
			return 0, nil, fmt.Errorf("create symlink: %w", err)
		}
		if wo.owner != nil {
			if err := os.Lchown(path, wo.owner.UID, wo.owner.GID); err != nil {
				return 0, nil, fmt.Errorf("create symlink: %w", err)
			}
		}
		fi, err := os.Lstat(path)
		if err != nil {
			return 0, nil, fmt.Errorf("create symlink: %w", err)
		}
		e.stat = statOf(fi)
		return 0, data, nil
	}
	perm := uint32(0o644)
	if e.kind == kindExec {
		perm = 0o755
	}
	if e.stat, err = writeFile(path, data, perm, wo); err != nil {
		return 0, nil, err
	}
	return int64(len(data)), data, nil
}

// makeDir creates one directory with mode 0755. A directory that already
// exists is fine (a tree may list a name twice); anything else there,
// a symlink in particular, is an error.
func makeDir(path string, wo writeOpts) error {
	err := os.Mkdir(path, 0o755)
	if errors.Is(err, fs.ErrExist) {
		fi, lerr := os.Lstat(path)
		if lerr == nil && fi.IsDir() {
			return nil
		}
		return fmt.Errorf("create directory: %w", err)
	}
	if err != nil {
		return fmt.Errorf("create directory: %w", err)
	}
	if wo.umask&0o755 != 0 {
		if err := os.Chmod(path, 0o755); err != nil {
			return fmt.Errorf("create directory: %w", err)
		}
	}
	if wo.owner != nil {
		if err := os.Lchown(path, wo.owner.UID, wo.owner.GID); err != nil {
			return fmt.Errorf("create directory: %w", err)
		}
	}
	return nil
}

// writeOpts is how files are created.
type writeOpts struct {
	umask fs.FileMode // the process umask, to know when to chmod
	owner *Owner      // chown to this, when set
}
