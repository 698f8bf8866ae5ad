package repo

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/internal/fsutil"
)

// logBuffer collects log lines from concurrent goroutines.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) count(msg string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return strings.Count(b.buf.String(), `msg="`+msg+`"`)
}

// remoteCache returns a Cache whose remote is the directory holding
// f.work as acme/widget, with no local sources, and its log.
func remoteCache(t *testing.T, f *fixture, opts ...Option) (*Cache, *logBuffer) {
	t.Helper()
	logs := &logBuffer{}
	remotes := filepath.Dir(filepath.Dir(f.work))
	c, err := New(append([]Option{
		WithCacheDir(t.TempDir()),
		WithRemote("file://" + remotes + "/{owner}/{name}"),
		WithLogger(slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))),
	}, opts...)...)
	require.NoError(t, err)
	return c, logs
}

func TestMirrorClonesOnceAndFetches(t *testing.T) {
	f := newFixture(t, filepath.Join(t.TempDir(), "acme", "widget"))
	c, logs := remoteCache(t, f)
	ctx := context.Background()

	res, err := c.Checkout(ctx, CheckoutRequest{Repo: "acme/widget", Commit: f.commits[1], Dir: filepath.Join(t.TempDir(), "ws")})
	require.NoError(t, err)
	assert.Equal(t, SourceMirror, res.Source)
	mirror := filepath.Join(c.Dir(), "acme", "widget.git")
	assert.Equal(t, mirror, res.SourcePath)
	assert.Equal(t, filepath.Join(mirror, "objects"), res.ObjectsDir)
	assert.Equal(t, 1, logs.count("cloning repository"))

	// A marker inside the mirror tells a fetch from a re-clone.
	marker := filepath.Join(mirror, "test-marker")
	writeT(t, marker, "x", 0o644)

	// Another commit already in the mirror: no network.
	dst := filepath.Join(t.TempDir(), "ws")
	res, err = c.Checkout(ctx, CheckoutRequest{Repo: "acme/widget", Commit: f.commits[2], Dir: dst})
	require.NoError(t, err)
	assertSameTree(t, snapshot(t, archiveT(t, filepath.Join(f.work, ".git"), f.commits[2])), snapshot(t, dst))
	assertCleanRepo(t, dst, f.commits[2])
	assert.Equal(t, 1, logs.count("cloning repository"))
	assert.Equal(t, 0, logs.count("fetching repository"))

	// A commit made upstream after the clone: fetched, not re-cloned.
	writeT(t, filepath.Join(f.work, "later.txt"), "later\n", 0o644)
	gitT(t, f.work, "add", "later.txt")
	gitT(t, f.work, "commit", "-q", "-m", "four")
	four := strings.TrimSpace(gitT(t, f.work, "rev-parse", "HEAD"))
	dst = filepath.Join(t.TempDir(), "ws")
	res, err = c.Checkout(ctx, CheckoutRequest{Repo: "acme/widget", Commit: four, Dir: dst})
	require.NoError(t, err)
	assert.Equal(t, four, res.Commit)
	assert.Equal(t, "later\n", readT(t, filepath.Join(dst, "later.txt")))
	assert.Equal(t, 1, logs.count("cloning repository"))
	assert.Equal(t, 1, logs.count("fetching repository"))
	assert.FileExists(t, marker)
	assertCleanRepo(t, dst, four)

	// Unknown upstream too: a commit error naming commit and repo.
	missing := strings.Repeat("cd", 20)
	_, err = c.Checkout(ctx, CheckoutRequest{Repo: "acme/widget", Commit: missing, Dir: filepath.Join(t.TempDir(), "ws")})
	require.ErrorIs(t, err, ErrCommitNotFound)
	assert.Contains(t, err.Error(), missing)
	assert.Contains(t, err.Error(), "acme/widget")
}

func TestLocalSourceBeforeMirror(t *testing.T) {
	f := newFixture(t, filepath.Join(t.TempDir(), "acme", "widget"))
	local := t.TempDir()
	gitT(t, "", "clone", "-q", "--bare", f.work, filepath.Join(local, "acme__widget.git"))
	c, logs := remoteCache(t, f, WithLocalSources(local))
	ctx := context.Background()

	res, err := c.Checkout(ctx, CheckoutRequest{Repo: "acme/widget", Commit: f.commits[2], Dir: filepath.Join(t.TempDir(), "ws")})
	require.NoError(t, err)
	assert.Equal(t, SourceLocal, res.Source)
	assert.Equal(t, 0, logs.count("cloning repository"))

	// A commit the local source lacks comes from the mirror.
	writeT(t, filepath.Join(f.work, "later.txt"), "later\n", 0o644)
	gitT(t, f.work, "add", "later.txt")
	gitT(t, f.work, "commit", "-q", "-m", "four")
	four := strings.TrimSpace(gitT(t, f.work, "rev-parse", "HEAD"))
	res, err = c.Checkout(ctx, CheckoutRequest{Repo: "acme/widget", Commit: four, Dir: filepath.Join(t.TempDir(), "ws")})
	require.NoError(t, err)
	assert.Equal(t, SourceMirror, res.Source)
	assert.Equal(t, 1, logs.count("cloning repository"))
}

func TestConcurrentCheckoutsShareOneClone(t *testing.T) {
	f := newFixture(t, filepath.Join(t.TempDir(), "acme", "widget"))
	c, logs := remoteCache(t, f)
	ctx := context.Background()
	const n = 8
	errs := make([]error, n)
	dsts := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		dsts[i] = filepath.Join(t.TempDir(), "ws")
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = c.Checkout(ctx, CheckoutRequest{Repo: "acme/widget", Commit: f.commits[i%3], Dir: dsts[i]})
		}()
	}
	wg.Wait()
	for i := range n {
		require.NoError(t, errs[i])
		assertCleanRepo(t, dsts[i], f.commits[i%3])
	}
	assert.Equal(t, 1, logs.count("cloning repository"))
	entries, err := os.ReadDir(filepath.Join(c.Dir(), "acme"))
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	assert.ElementsMatch(t, []string{"widget.git", "widget.git.lock"}, names, "no clone left behind")
}

// TestMirrorLockFile checks that another process's lock on the mirror is
// honoured: while it is held exclusively, a checkout waits, and gives up
// when its context ends.
func TestMirrorLockFile(t *testing.T) {
	f := newFixture(t, filepath.Join(t.TempDir(), "acme", "widget"))
	c, _ := remoteCache(t, f)
	ctx := context.Background()
	_, err := c.Checkout(ctx, CheckoutRequest{Repo: "acme/widget", Commit: f.commits[0], Dir: filepath.Join(t.TempDir(), "ws")})
	require.NoError(t, err)

	lf, err := os.OpenFile(filepath.Join(c.Dir(), "acme", "widget.git.lock"), os.O_RDWR, 0)
	require.NoError(t, err)
	defer lf.Close()
	ok, err := tryLockFile(lf, true)
	require.NoError(t, err)
	require.True(t, ok)

	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	_, err = c.Checkout(short, CheckoutRequest{Repo: "acme/widget", Commit: f.commits[1], Dir: filepath.Join(t.TempDir(), "ws")})
	require.Error(t, err)
	assert.True(t, errors.Is(err, context.DeadlineExceeded), "got %v", err)

	fsutil.Unlock(lf)
	_, err = c.Checkout(ctx, CheckoutRequest{Repo: "acme/widget", Commit: f.commits[1], Dir: filepath.Join(t.TempDir(), "ws")})
	require.NoError(t, err)
}

// TestMirrorFetchesCommitByID covers a commit that no branch or tag
// reaches (a pull request's head, say): the mirror asks for it by id.
func TestMirrorFetchesCommitByID(t *testing.T) {
	f := newFixture(t, filepath.Join(t.TempDir(), "acme", "widget"))
	gitT(t, f.work, "config", "uploadpack.allowReachableSHA1InWant", "true")
	c, logs := remoteCache(t, f)
	ctx := context.Background()
	_, err := c.Checkout(ctx, CheckoutRequest{Repo: "acme/widget", Commit: f.commits[0], Dir: filepath.Join(t.TempDir(), "ws")})
	require.NoError(t, err)

	tree := strings.TrimSpace(gitT(t, f.work, "write-tree"))
	pr := strings.TrimSpace(gitT(t, f.work, "commit-tree", tree, "-p", f.commits[2], "-m", "pull request"))
	gitT(t, f.work, "update-ref", "refs/pull/1/head", pr)

	dst := filepath.Join(t.TempDir(), "ws")
	res, err := c.Checkout(ctx, CheckoutRequest{Repo: "acme/widget", Commit: pr, Dir: dst})
	require.NoError(t, err)
	assert.Equal(t, pr, res.Commit)
	assert.Equal(t, 1, logs.count("fetched commit"))
	assertCleanRepo(t, dst, pr)
}
