package repo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
)

// DefaultRemote is the URL template used to clone a repository that no
// local source holds. {owner} and {name} are replaced by the two halves of
// CheckoutRequest.Repo.
const DefaultRemote = "https://github.com/{owner}/{name}.git"

// Where a checkout's objects came from (CheckoutResult.Source).
const (
	SourceLocal  = "local"  // a repository in one of the local sources, read in place
	SourceMirror = "mirror" // the cache's bare mirror of the remote
)

// Cache materialises repositories at given commits. It reads local
// sources in place and keeps bare mirrors of remote repositories in its
// directory, cloned once and fetched when a commit is missing. A Cache is
// safe for concurrent use, and several processes may share its directory.
type Cache struct {
	dir      string
	sources  []string
	remote   string
	log      *slog.Logger
	workers  int
	objCache int64

	mu    sync.Mutex
	locks map[string]*sync.RWMutex
}

// Option configures a Cache.
type Option func(*Cache) error

// WithCacheDir sets the directory holding the bare mirrors, as
// <dir>/<owner>/<name>.git. It is created when first needed.
// Default: $XDG_CACHE_HOME/swebox/repos, or ~/.cache/swebox/repos.
func WithCacheDir(dir string) Option {
	return func(c *Cache) error {
		if dir == "" {
			return errors.New("cache dir is empty")
		}
		abs, err := filepath.Abs(dir)
		if err != nil {
			return fmt.Errorf("resolve cache dir: %w", err)
		}
		c.dir = abs
		return nil
	}
}

// WithLocalSources adds directories searched, in order and before the
// network, for a repository owner/name as owner/name, owner/name.git,
// owner__name or owner__name.git, bare or not. They are read in place and
// never modified, so they may be partial clones (--filter=blob:none) as
// long as they hold the objects of the commits asked for.
// Default: none.
func WithLocalSources(dirs ...string) Option {
	return func(c *Cache) error {
		for _, d := range dirs {
			if d == "" {
				return errors.New("local source is empty")
			}
			abs, err := filepath.Abs(d)
			if err != nil {
				return fmt.Errorf("resolve local source: %w", err)
			}
			fi, err := os.Stat(abs)
			if err != nil {
				return fmt.Errorf("open local source: %w", err)
			}
			if !fi.IsDir() {
				return fmt.Errorf("open local source %s: not a directory", abs)
			}
			c.sources = append(c.sources, abs)
		}
		return nil
	}
}

// WithRemote sets the URL template used to clone a repository that no
// local source holds; {owner} and {name} are substituted. Any URL go-git
// clones works (https, ssh, file://, or a plain path). The empty string
// disables the network: only local sources and existing mirrors are used.
// Default: [DefaultRemote].
func WithRemote(template string) Option {
	return func(c *Cache) error {
		if template != "" && (!strings.Contains(template, "{name}")) {
			return fmt.Errorf("remote template %q lacks {name}", template)
		}
		c.remote = template
		return nil
	}
}

// WithLogger sets the logger for clones, fetches and checkouts.
// Default: a logger that discards everything.
func WithLogger(l *slog.Logger) Option {
	return func(c *Cache) error {
		if l == nil {
			return errors.New("logger is nil")
		}
		c.log = l
		return nil
	}
}

// WithWorkers sets how many goroutines write files during one checkout.
// Default: GOMAXPROCS, at least 2 and at most 8.
func WithWorkers(n int) Option {
	return func(c *Cache) error {
		if n < 1 {
			return fmt.Errorf("workers must be at least 1, got %d", n)
		}
		c.workers = n
		return nil
	}
}

// WithObjectCacheSize bounds the memory that one checkout spends on
// decoded objects kept for delta resolution.
// Default: 96 MiB.
func WithObjectCacheSize(bytes int64) Option {
	return func(c *Cache) error {
		if bytes < 1<<20 {
			return fmt.Errorf("object cache size must be at least 1 MiB, got %d", bytes)
		}
		c.objCache = bytes
		return nil
	}
}

// New returns a Cache configured by opts.
func New(opts ...Option) (*Cache, error) {
	c := &Cache{
		remote:   DefaultRemote,
		log:      slog.New(slog.NewTextHandler(io.Discard, nil)),
		workers:  min(max(runtime.GOMAXPROCS(0), 2), 8),
		objCache: 96 << 20,
		locks:    map[string]*sync.RWMutex{},
	}
	for _, opt := range opts {
		if err := opt(c); err != nil {
			return nil, fmt.Errorf("configure repo cache: %w", err)
		}
	}
	if c.dir == "" {
		base := os.Getenv("XDG_CACHE_HOME")
		if base == "" {
			home, err := os.UserHomeDir()
			if err != nil {
				return nil, fmt.Errorf("configure repo cache: no cache dir: %w", err)
			}
			base = filepath.Join(home, ".cache")
		}
		c.dir = filepath.Join(base, "swebox", "repos")
	}
	return c, nil
}

// Dir returns the directory holding the mirrors.
func (c *Cache) Dir() string { return c.dir }

// CheckoutRequest asks for the tree of one commit.
type CheckoutRequest struct {
	// Repo is "owner/name".
	Repo string
	// Commit is a full 40-hex commit id (a SWE-bench base_commit); a ref
	// name such as a tag or branch is resolved in the source.
	Commit string
	// Dir is the destination. It must be absent or empty.
	Dir string
	// SelfContained makes Dir/.git hold the objects it needs (the commit,
	// its trees and blobs, and what `git show` needs of its parent) in one
	// pack, instead of borrowing the source's objects through
	// objects/info/alternates. For Docker engines that cannot bind-mount
	// the source's objects directory (a remote engine). Slower.
	SelfContained bool
	// Owner, when set, is given every file and directory written, .git
	// included, so that a sandbox running as that user can change the
	// workspace (git checkout, git apply, the index). Needs the
	// privilege to chown. Default: the current user.
	Owner *Owner
}

// Owner is a numeric user and group.
type Owner struct {
	UID, GID int
}

// CheckoutResult describes a finished checkout.
type CheckoutResult struct {
	// Commit is the full id of the commit checked out.
	Commit string
	// Tree is the id of its tree.
	Tree string
	// ObjectsDir is the objects directory Dir/.git borrows from through
	// objects/info/alternates: bind-mount it read-only at the same path
	// in a container that runs git in Dir. Empty when SelfContained.
	ObjectsDir string
	// ObjectsDirs is ObjectsDir followed by the directories it borrows
	// from in turn (chained alternates): all must be mounted.
	ObjectsDirs []string
	// Files counts regular files and symlinks written; Bytes sums the
	// regular files' sizes.
	Files int
	Bytes int64
	// Source is SourceLocal or SourceMirror; SourcePath is the git
	// directory read.
	Source     string
	SourcePath string
	// Duration is the time the checkout took, locking included.
	Duration time.Duration
}

var repoNameRE = regexp.MustCompile(`^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$`)

// Checkout writes the tree of req.Commit into req.Dir, byte for byte what
// `git archive` gives, and makes req.Dir a git repository whose HEAD is
// detached at the commit and whose index matches the files, so that
// `git status` is clean. Local sources come first; otherwise the
// repository's mirror is cloned or fetched.
func (c *Cache) Checkout(ctx context.Context, req CheckoutRequest) (CheckoutResult, error) {
	start := time.Now()
	if !repoNameRE.MatchString(req.Repo) || strings.Contains(req.Repo, "..") {
		return CheckoutResult{}, fmt.Errorf("%w: repo %q is not owner/name", ErrBadRequest, req.Repo)
	}
	if req.Commit == "" {
		return CheckoutResult{}, fmt.Errorf("%w: no commit for %s", ErrBadRequest, req.Repo)
	}
	if req.Dir == "" {
		return CheckoutResult{}, fmt.Errorf("%w: no destination dir", ErrBadRequest)
	}
	dst, err := filepath.Abs(req.Dir)
	if err != nil {
		return CheckoutResult{}, fmt.Errorf("resolve destination: %w", err)
	}
	created, err := prepareDest(dst)
	if err != nil {
		return CheckoutResult{}, err
	}
	// A failed checkout leaves dst as it found it, so that a retry can
	// use the same directory.
	undo := func() {
		if created {
			os.RemoveAll(dst)
			return
		}
		if names, err := os.ReadDir(dst); err == nil {
			for _, n := range names {
				os.RemoveAll(filepath.Join(dst, n.Name()))
			}
		}
	}

	src, release, err := c.find(ctx, req.Repo, req.Commit)
	if err != nil {
		undo()
		return CheckoutResult{}, err
	}
	defer release()
	defer src.store.Close()

	res, err := c.checkoutFrom(ctx, src, dst, req)
	if err != nil {
		undo()
		return CheckoutResult{}, fmt.Errorf("checkout %s@%s: %w", req.Repo, req.Commit, err)
	}
	res.Duration = time.Since(start)
	c.log.Debug("checkout", "repo", req.Repo, "commit", res.Commit, "source", res.Source,
		"files", res.Files, "bytes", res.Bytes, "duration", res.Duration)
	return res, nil
}

// prepareDest creates dst if absent (reporting so) and refuses it if not
// empty.
func prepareDest(dst string) (created bool, err error) {
	f, err := os.Open(dst)
	if errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(dst, 0o755); err != nil {
			return false, fmt.Errorf("create destination: %w", err)
		}
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("open destination: %w", err)
	}
	defer f.Close()
	names, err := f.Readdirnames(1)
	if err != nil && !errors.Is(err, io.EOF) {
		return false, fmt.Errorf("read destination %s: %w", dst, err)
	}
	if len(names) > 0 {
		return false, fmt.Errorf("%w: %s", ErrDirNotEmpty, dst)
	}
	return false, nil
}

// source is a git directory holding a commit.
type source struct {
	kind       string // SourceLocal or SourceMirror
	gitDir     string
	objectsDir string
	store      *objectStore
	commit     plumbing.Hash
}

// checkoutFrom writes the commit's tree from src into dst.
func (c *Cache) checkoutFrom(ctx context.Context, src *source, dst string, req CheckoutRequest) (CheckoutResult, error) {
	r := src.store.reader()
	defer r.Close()
	t, data, err := r.readBytes(src.commit)
	if err != nil {
		return CheckoutResult{}, fmt.Errorf("read commit: %w", missing(err))
	}
	if t != plumbing.CommitObject {
		return CheckoutResult{}, fmt.Errorf("%w: %s is a %s, not a commit", ErrCommitNotFound, src.commit, t)
	}
	tree, parents, err := parseCommit(data)
	if err != nil {
		return CheckoutResult{}, err
	}
	ft, err := flatten(r, tree)
	if err != nil {
		return CheckoutResult{}, err
	}
	res := CheckoutResult{
		Commit:     src.commit.String(),
		Tree:       tree.String(),
		Source:     src.kind,
		SourcePath: src.gitDir,
	}
	var alternates []string
	if !req.SelfContained {
		alternates = []string{src.objectsDir}
		res.ObjectsDir = src.objectsDir
		res.ObjectsDirs = src.store.dirs
	}
	gitDir, err := initGitDir(dst, src.commit, alternates)
	if err != nil {
		return CheckoutResult{}, err
	}
	var pb *packBuilder
	if req.SelfContained {
		if pb, err = newPackBuilder(filepath.Join(gitDir, "objects", "pack")); err != nil {
			return CheckoutResult{}, err
		}
	}
	stats, err := materialise(ctx, src.store, ft, dst, c.workers, pb, req.Owner)
	if err == nil && pb != nil {
		err = finishSelfContained(r, pb, gitDir, src.commit, parents, ft)
	} else if pb != nil {
		pb.abort()
	}
	if err != nil {
		return CheckoutResult{}, err
	}
	if err := writeIndex(filepath.Join(gitDir, "index"), ft); err != nil {
		return CheckoutResult{}, err
	}
	if req.Owner != nil {
		if err := chownGitDir(dst, gitDir, *req.Owner); err != nil {
			return CheckoutResult{}, err
		}
	}
	res.Files, res.Bytes = stats.files, stats.bytes
	return res, nil
}
