package repo

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"

	"github.com/swebox/swebox/internal/fsutil"
)

// mirrorPath is where the bare mirror of owner/name lives.
func (c *Cache) mirrorPath(repo string) string {
	owner, name, _ := strings.Cut(repo, "/")
	return filepath.Join(c.dir, owner, name+".git")
}

// remoteURL expands the remote template for repo.
func (c *Cache) remoteURL(repo string) string {
	owner, name, _ := strings.Cut(repo, "/")
	return strings.NewReplacer("{owner}", owner, "{name}", name).Replace(c.remote)
}

// fromMirror returns the mirror of repo as a source holding rev, cloning
// or fetching it first when needed. Reading happens under a shared lock,
// cloning and fetching under an exclusive one, both in this process and,
// through a lock file, across processes sharing the cache directory.
// looked and lacking say where local sources were searched, for errors.
func (c *Cache) fromMirror(ctx context.Context, repo, rev string, looked, lacking []string) (*source, func(), error) {
	mirror := c.mirrorPath(repo)
	notFound := func(cause error) error {
		where := "no local source"
		if len(c.sources) > 0 {
			where = "looked in " + strings.Join(append(append([]string{}, looked...), lacking...), ", ")
		}
		_, statErr := os.Stat(mirror)
		if len(lacking) > 0 || statErr == nil || errors.Is(cause, ErrCommitNotFound) {
			return fmt.Errorf("%w: %s in %s (%s; mirror %s): %w", ErrCommitNotFound, rev, repo, where, mirror, cause)
		}
		return fmt.Errorf("%w: %s (%s; mirror %s): %w", ErrRepoNotFound, repo, where, mirror, cause)
	}

	// Fast path: the mirror exists and has the commit.
	src, release, err := c.openMirror(ctx, repo, mirror, rev)
	if err == nil {
		return src, release, nil
	}
	if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, ErrCommitNotFound) {
		return nil, nil, err
	}
	if c.remote == "" {
		return nil, nil, notFound(fmt.Errorf("remote disabled: %w", err))
	}

	if err := c.update(ctx, repo, mirror, rev); err != nil {
		if ctx.Err() != nil {
			return nil, nil, fmt.Errorf("update mirror of %s: %w", repo, err)
		}
		return nil, nil, notFound(err)
	}
	src, release, err = c.openMirror(ctx, repo, mirror, rev)
	if err != nil {
		return nil, nil, notFound(err)
	}
	return src, release, nil
}

// hasRev reports whether rev resolves to a commit present in gitDir.
func (c *Cache) hasRev(gitDir, rev string) bool {
	src, err := c.openSource(SourceMirror, gitDir, rev)
	if err != nil {
		return false
	}
	src.store.Close()
	return true
}

// openMirror opens the mirror under a shared lock, kept until release.
func (c *Cache) openMirror(ctx context.Context, repo, mirror, rev string) (*source, func(), error) {
	if _, err := os.Stat(mirror); err != nil {
		return nil, nil, fmt.Errorf("open mirror: %w", err)
	}
	unlock, err := c.lock(ctx, repo, false)
	if err != nil {
		return nil, nil, err
	}
	src, err := c.openSource(SourceMirror, mirror, rev)
	if err != nil {
		unlock()
		return nil, nil, err
	}
	return src, unlock, nil
}

// update clones the mirror, or fetches into it, under the exclusive lock.
// Another process may have done the work while this one waited, so the
// state is checked again once the lock is held.
func (c *Cache) update(ctx context.Context, repo, mirror, rev string) error {
	unlock, err := c.lock(ctx, repo, true)
	if err != nil {
		return err
	}
	defer unlock()
	url := c.remoteURL(repo)

	if _, err := os.Stat(mirror); errors.Is(err, fs.ErrNotExist) {
		return c.clone(ctx, url, mirror)
	}
	if c.hasRev(mirror, rev) {
		return nil
	}
	return c.fetch(ctx, url, mirror, rev)
}

// clone makes a bare clone into a temporary directory beside mirror and
// renames it into place, so that no reader ever sees half a clone.
func (c *Cache) clone(ctx context.Context, url, mirror string) error {
	if err := os.MkdirAll(filepath.Dir(mirror), 0o755); err != nil {
		return fmt.Errorf("create cache dir: %w", err)
	}
	tmp, err := os.MkdirTemp(filepath.Dir(mirror), "."+filepath.Base(mirror)+".clone-")
	if err != nil {
		return fmt.Errorf("create cache dir: %w", err)
	}
	start := time.Now()
	c.log.Info("cloning repository", "url", url, "mirror", mirror)
	_, err = git.PlainCloneContext(ctx, tmp, true, &git.CloneOptions{
		URL:  url,
		Tags: git.AllTags,
	})
	if err != nil {
		os.RemoveAll(tmp)
		return fmt.Errorf("clone %s: %w", url, err)
	}
	if err := os.Rename(tmp, mirror); err != nil {
		os.RemoveAll(tmp)
		return fmt.Errorf("clone %s: %w", url, err)
	}
	c.log.Info("cloned repository", "url", url, "mirror", mirror, "duration", time.Since(start))
	return nil
}

// fetch brings the mirror up to date with the remote's branches and tags
// and, if rev is still missing, asks for it by id (servers such as GitHub
// allow fetching any reachable commit).
func (c *Cache) fetch(ctx context.Context, url, mirror, rev string) error {
	r, err := git.PlainOpen(mirror)
	if err != nil {
		return fmt.Errorf("open mirror: %w", err)
	}
	start := time.Now()
	c.log.Info("fetching repository", "url", url, "mirror", mirror, "want", rev)
	err = r.FetchContext(ctx, &git.FetchOptions{
		RemoteName: git.DefaultRemoteName,
		RemoteURL:  url,
		RefSpecs:   []config.RefSpec{"+refs/heads/*:refs/heads/*", "+refs/tags/*:refs/tags/*"},
		Tags:       git.AllTags,
		Force:      true,
	})
	if err != nil && !errors.Is(err, git.NoErrAlreadyUpToDate) {
		return fmt.Errorf("fetch %s: %w", url, err)
	}
	if c.hasRev(mirror, rev) {
		c.log.Info("fetched repository", "url", url, "duration", time.Since(start))
		return nil
	}
	h, ok := fromHex(rev)
	if len(rev) != 40 || !ok {
		return fmt.Errorf("fetch %s: %w: %s", url, ErrCommitNotFound, rev)
	}
	err = r.FetchContext(ctx, &git.FetchOptions{
		RemoteName: git.DefaultRemoteName,
		RemoteURL:  url,
		RefSpecs:   []config.RefSpec{config.RefSpec(h.String() + ":refs/swebox/" + h.String())},
		Tags:       git.NoTags,
	})
	if err != nil && !errors.Is(err, git.NoErrAlreadyUpToDate) {
		return fmt.Errorf("fetch %s from %s: %w", rev, url, err)
	}
	c.log.Info("fetched commit", "url", url, "commit", rev, "duration", time.Since(start))
	return nil
}

// lock takes the per-repository lock, shared or exclusive: first the
// in-process one, then the lock file <cache>/<owner>/<name>.git.lock.
// Both waits give up when ctx is done.
func (c *Cache) lock(ctx context.Context, repo string, exclusive bool) (func(), error) {
	c.mu.Lock()
	mu, ok := c.locks[repo]
	if !ok {
		mu = &sync.RWMutex{}
		c.locks[repo] = mu
	}
	c.mu.Unlock()

	try, unlock := mu.TryRLock, mu.RUnlock
	if exclusive {
		try, unlock = mu.TryLock, mu.Unlock
	}
	if err := poll(ctx, func() (bool, error) { return try(), nil }); err != nil {
		return nil, fmt.Errorf("lock %s: %w", repo, err)
	}
	path := c.mirrorPath(repo) + ".lock"
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		unlock()
		return nil, fmt.Errorf("lock %s: %w", repo, err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		unlock()
		return nil, fmt.Errorf("lock %s: %w", repo, err)
	}
	if err := poll(ctx, func() (bool, error) { return tryLockFile(f, exclusive) }); err != nil {
		f.Close()
		unlock()
		return nil, fmt.Errorf("lock %s: %w", repo, err)
	}
	return func() {
		fsutil.Unlock(f)
		f.Close()
		unlock()
	}, nil
}

// tryLockFile locks the mirror's lock file for other processes. Without
// file locks (fsutil.ErrNoLocking), only the in-process lock protects a
// mirror: processes that share a cache directory must not update one
// repository at once.
func tryLockFile(f *os.File, exclusive bool) (bool, error) {
	ok, err := fsutil.TryLock(f, exclusive)
	if errors.Is(err, fsutil.ErrNoLocking) {
		return true, nil
	}
	return ok, err
}

// poll calls try until it succeeds, fails or ctx is done, backing off
// from 1 ms to 50 ms between attempts.
func poll(ctx context.Context, try func() (bool, error)) error {
	wait := time.Millisecond
	for {
		ok, err := try()
		if err != nil || ok {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
		wait = min(wait*2, 50*time.Millisecond)
	}
}
