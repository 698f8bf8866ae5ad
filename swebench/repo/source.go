package repo

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/storage/filesystem"
)

// find returns a source holding rev for repo: a local source when one
// has it, else the mirror (cloned or fetched as needed). release must be
// called once the source is no longer read.
func (c *Cache) find(ctx context.Context, repo, rev string) (*source, func(), error) {
	owner, name, _ := strings.Cut(repo, "/")
	var looked, lacking []string
	for _, dir := range c.sources {
		for _, cand := range []string{
			filepath.Join(dir, owner, name),
			filepath.Join(dir, owner, name+".git"),
			filepath.Join(dir, owner+"__"+name),
			filepath.Join(dir, owner+"__"+name+".git"),
		} {
			gitDir, ok := gitDirOf(cand)
			if !ok {
				looked = append(looked, cand)
				continue
			}
			src, err := c.openSource(SourceLocal, gitDir, rev)
			if errors.Is(err, ErrCommitNotFound) {
				c.log.Debug("local source lacks commit", "repo", repo, "commit", rev, "source", gitDir)
				lacking = append(lacking, gitDir)
				continue
			}
			if err != nil {
				return nil, nil, fmt.Errorf("open local source for %s: %w", repo, err)
			}
			return src, func() {}, nil
		}
	}
	return c.fromMirror(ctx, repo, rev, looked, lacking)
}

// gitDirOf returns the git directory of a repository at path: path/.git
// (a directory, or a file pointing elsewhere) for a work tree, path itself
// for a bare repository.
func gitDirOf(path string) (string, bool) {
	dotgit := filepath.Join(path, ".git")
	fi, err := os.Stat(dotgit)
	switch {
	case err == nil && fi.IsDir():
		return dotgit, true
	case err == nil:
		data, err := os.ReadFile(dotgit)
		if err != nil {
			return "", false
		}
		target, ok := strings.CutPrefix(strings.TrimSpace(string(data)), "gitdir:")
		if !ok {
			return "", false
		}
		target = strings.TrimSpace(target)
		if !filepath.IsAbs(target) {
			target = filepath.Join(path, target)
		}
		return target, isGitDir(target)
	}
	return path, isGitDir(path)
}

// isGitDir reports whether dir looks like a git directory: HEAD and an
// objects directory (or, for a linked worktree, a commondir file).
func isGitDir(dir string) bool {
	if _, err := os.Stat(filepath.Join(dir, "HEAD")); err != nil {
		return false
	}
	_, err := os.Stat(objectsDirOf(dir))
	return err == nil
}

// objectsDirOf returns the objects directory of a git directory, following
// the commondir of a linked worktree.
func objectsDirOf(gitDir string) string {
	if data, err := os.ReadFile(filepath.Join(gitDir, "commondir")); err == nil {
		common := strings.TrimSpace(string(data))
		if !filepath.IsAbs(common) {
			common = filepath.Join(gitDir, common)
		}
		return filepath.Join(filepath.Clean(common), "objects")
	}
	return filepath.Join(gitDir, "objects")
}

// openSource opens gitDir's objects and resolves rev in it to a commit
// that is present. An absent commit is ErrCommitNotFound.
func (c *Cache) openSource(kind, gitDir, rev string) (*source, error) {
	objectsDir := objectsDirOf(gitDir)
	store, err := openObjectStore(objectsDir, c.objCache)
	if err != nil {
		return nil, err
	}
	h, err := resolveRev(gitDir, rev)
	if err == nil {
		h, err = peelToCommit(store, h)
	}
	if err != nil {
		store.Close()
		return nil, err
	}
	abs := store.dirs[0]
	return &source{kind: kind, gitDir: gitDir, objectsDir: abs, store: store, commit: h}, nil
}

// resolveRev turns a full object id, or a ref name looked up as git does
// (name, refs/name, refs/tags/name, refs/heads/name, refs/remotes/name),
// into an object id.
func resolveRev(gitDir, rev string) (plumbing.Hash, error) {
	if len(rev) == 40 {
		if h, ok := fromHex(rev); ok {
			return h, nil
		}
	}
	if strings.ContainsAny(rev, " ~^:?*[\\") || strings.Contains(rev, "..") {
		return plumbing.ZeroHash, fmt.Errorf("%w: commit %q is neither an object id nor a ref name", ErrBadRequest, rev)
	}
	// go-git's storage only reads here: refs, packed-refs and HEAD.
	st := filesystem.NewStorage(osfs.New(gitDir), nil)
	for _, name := range []string{rev, "refs/" + rev, "refs/tags/" + rev, "refs/heads/" + rev, "refs/remotes/" + rev, "refs/remotes/" + rev + "/HEAD"} {
		ref, err := storer.ResolveReference(st, plumbing.ReferenceName(name))
		if err == nil && ref.Type() == plumbing.HashReference {
			return ref.Hash(), nil
		}
	}
	return plumbing.ZeroHash, fmt.Errorf("%w: no ref %q in %s", ErrCommitNotFound, rev, gitDir)
}

// peelToCommit follows annotated tags to the commit they name.
func peelToCommit(store *objectStore, h plumbing.Hash) (plumbing.Hash, error) {
	r := store.reader()
	defer r.Close()
	for range 10 {
		if !store.has(h) {
			return plumbing.ZeroHash, fmt.Errorf("%w: %s", ErrCommitNotFound, h)
		}
		t, data, err := r.readBytes(h)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		switch t {
		case plumbing.CommitObject:
			return h, nil
		case plumbing.TagObject:
			target, ok := bytes.CutPrefix(data, []byte("object "))
			if !ok || len(target) < 40 {
				return plumbing.ZeroHash, fmt.Errorf("parse tag %s: no object header", h)
			}
			if h, err = parseHash(target[:40]); err != nil {
				return plumbing.ZeroHash, fmt.Errorf("parse tag: %w", err)
			}
		default:
			return plumbing.ZeroHash, fmt.Errorf("%w: %s is a %s", ErrCommitNotFound, h, t)
		}
	}
	return plumbing.ZeroHash, fmt.Errorf("peel %s: tags nested too deep", h)
}
