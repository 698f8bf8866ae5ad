package repo

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// layouts of local sources built from one fixture.
type layout struct {
	sources string // the directory given to WithLocalSources
	gitDir  string // the repository's git directory, for git archive
}

// newSources lays the fixture out as local sources of every supported
// shape, all holding the repository "acme/widget".
func newSources(t *testing.T, f *fixture) map[string]layout {
	t.Helper()
	out := map[string]layout{}

	nonBare := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(nonBare, "acme"), 0o755))
	require.NoError(t, os.Rename(f.work, filepath.Join(nonBare, "acme", "widget")))
	f.work = filepath.Join(nonBare, "acme", "widget")
	out["non-bare owner/name"] = layout{nonBare, filepath.Join(f.work, ".git")}

	bare := t.TempDir()
	gitT(t, "", "clone", "-q", "--bare", f.work, filepath.Join(bare, "acme__widget.git"))
	out["bare owner__name.git"] = layout{bare, filepath.Join(bare, "acme__widget.git")}

	bare2 := t.TempDir()
	gitT(t, "", "clone", "-q", "--bare", f.work, filepath.Join(bare2, "acme", "widget.git"))
	out["bare owner/name.git"] = layout{bare2, filepath.Join(bare2, "acme", "widget.git")}

	nb2 := t.TempDir()
	gitT(t, "", "clone", "-q", "--no-checkout", f.work, filepath.Join(nb2, "acme__widget"))
	out["non-bare owner__name"] = layout{nb2, filepath.Join(nb2, "acme__widget", ".git")}

	// A partial clone holding the blobs of the commits in use only: what
	// large local caches of SWE-bench repositories look like.
	partial := t.TempDir()
	pdir := filepath.Join(partial, "acme", "widget.git")
	gitT(t, f.work, "config", "uploadpack.allowFilter", "true")
	gitT(t, "", "clone", "-q", "--bare", "--filter=blob:none", "file://"+f.work, pdir)
	for _, c := range f.commits {
		gitT(t, pdir, "archive", "-o", filepath.Join(t.TempDir(), "prefetch.tar"), c)
	}
	promisor, _ := filepath.Glob(filepath.Join(pdir, "objects", "pack", "*.promisor"))
	require.NotEmpty(t, promisor, "partial clone should have promisor packs")
	out["partial bare clone"] = layout{partial, pdir}

	// A linked worktree: .git is a file naming a git dir whose objects
	// live in its commondir.
	linked := t.TempDir()
	gitT(t, f.work, "worktree", "add", "-q", "--detach", filepath.Join(linked, "acme", "widget"), f.commits[0])
	out["linked worktree"] = layout{linked, filepath.Join(f.work, ".git")}

	// Shared clone: borrows the bare clone's objects through alternates.
	shared := t.TempDir()
	sdir := filepath.Join(shared, "acme", "widget")
	gitT(t, "", "clone", "-q", "--shared", "--no-checkout", filepath.Join(bare, "acme__widget.git"), sdir)
	out["shared clone (alternates)"] = layout{shared, filepath.Join(sdir, ".git")}
	return out
}

func TestCheckoutMatchesGitArchive(t *testing.T) {
	f := newFixture(t, filepath.Join(t.TempDir(), "work"))
	layouts := newSources(t, f)
	ctx := context.Background()

	type testCase struct {
		name   string
		layout string
		commit string
	}
	var cases []testCase
	for name := range layouts {
		for i, c := range f.commits {
			cases = append(cases, testCase{name: name + "/commit" + string(rune('1'+i)), layout: name, commit: c})
		}
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			l := layouts[tc.layout]
			c, err := New(WithCacheDir(t.TempDir()), WithLocalSources(l.sources), WithRemote(""))
			require.NoError(t, err)
			dst := filepath.Join(t.TempDir(), "ws")
			before := dirState(t, l.sources)
			res, err := c.Checkout(ctx, CheckoutRequest{Repo: "acme/widget", Commit: tc.commit, Dir: dst})
			require.NoError(t, err)
			assert.Equal(t, before, dirState(t, l.sources), "the local source is read, never written")
			assert.Equal(t, tc.commit, res.Commit)
			assert.Equal(t, SourceLocal, res.Source)
			assert.NotEmpty(t, res.ObjectsDir)
			assert.Equal(t, res.ObjectsDir, res.ObjectsDirs[0])

			want := snapshot(t, archiveT(t, l.gitDir, tc.commit))
			got := snapshot(t, dst)
			assertSameTree(t, want, got)
			files := 0
			for _, e := range want {
				if e.Kind != "dir" {
					files++
				}
			}
			assert.Equal(t, files, res.Files)

			assertCleanRepo(t, dst, tc.commit)
		})
	}
}

// assertCleanRepo checks dst with the git CLI the way the SWE-bench eval
// script uses it.
func assertCleanRepo(t *testing.T, dst, commit string) {
	t.Helper()
	assert.Empty(t, gitT(t, dst, "status", "--porcelain", "--ignored=no"))
	assert.Equal(t, commit, strings.TrimSpace(gitT(t, dst, "rev-parse", "HEAD")))
	assert.Empty(t, gitT(t, dst, "diff", commit))
	assert.Empty(t, gitT(t, dst, "-c", "core.fileMode=false", "diff", commit))
	assert.Empty(t, gitT(t, dst, "diff", "--cached", commit))
	gitT(t, dst, "show", "--stat", "HEAD")
}

// localCache returns a Cache reading only the given local sources.
func localCache(t *testing.T, sources ...string) *Cache {
	t.Helper()
	c, err := New(WithCacheDir(t.TempDir()), WithLocalSources(sources...), WithRemote(""))
	require.NoError(t, err)
	return c
}

// TestEvalScriptGitSteps runs, on a checkout, the git commands of the
// SWE-bench eval script and of the v5 patch fallbacks.
func TestEvalScriptGitSteps(t *testing.T) {
	f := newFixture(t, filepath.Join(t.TempDir(), "acme", "widget"))
	sources := filepath.Dir(filepath.Dir(f.work))
	base, next := f.commits[1], f.commits[2]
	patch := gitT(t, f.work, "diff", "--binary", base, next)
	require.NotEmpty(t, patch)

	type testCase struct {
		name          string
		selfContained bool
	}
	for _, tc := range []testCase{{name: "alternates"}, {name: "self-contained", selfContained: true}} {
		t.Run(tc.name, func(t *testing.T) {
			dst := filepath.Join(t.TempDir(), "testbed")
			_, err := localCache(t, sources).Checkout(context.Background(), CheckoutRequest{
				Repo: "acme/widget", Commit: base, Dir: dst, SelfContained: tc.selfContained,
			})
			require.NoError(t, err)
			assertCleanRepo(t, dst, base)

			// git checkout <base> -- <file> restores a modified file.
			mod := filepath.Join(dst, "src", "pkg", "mod.py")
			orig, err := os.ReadFile(mod)
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(mod, []byte("broken\n"), 0o644))
			assert.Contains(t, gitT(t, dst, "status", "--porcelain"), "src/pkg/mod.py")
			gitT(t, dst, "checkout", base, "--", "src/pkg/mod.py")
			got, err := os.ReadFile(mod)
			require.NoError(t, err)
			assert.Equal(t, string(orig), string(got))

			// A mode change is invisible to core.fileMode=false.
			require.NoError(t, os.Chmod(filepath.Join(dst, "crlf.txt"), 0o755))
			assert.Empty(t, gitT(t, dst, "-c", "core.fileMode=false", "diff", base))
			assert.NotEmpty(t, gitT(t, dst, "diff", base))
			require.NoError(t, os.Chmod(filepath.Join(dst, "crlf.txt"), 0o644))

			// git apply of the next commit's diff gives the next tree.
			gitInT(t, dst, []byte(patch), "apply", "--verbose", "-")
			for _, p := range []string{"src/pkg/mod.py", "bin/run.sh", "new.txt"} {
				assert.Equal(t, gitT(t, f.work, "show", next+":"+p), readT(t, filepath.Join(dst, p)), p)
			}
			assert.NoFileExists(t, filepath.Join(dst, "README.md"))
			assert.Contains(t, gitT(t, dst, "diff", base), "-# fixture")

			// The v5 reset between patch attempts: back to a clean tree.
			writeT(t, filepath.Join(dst, "untracked", "junk.txt"), "junk\n", 0o644)
			gitT(t, dst, "checkout", "--", ".")
			gitT(t, dst, "clean", "-fd")
			assert.NoDirExists(t, filepath.Join(dst, "untracked"))
			assert.NoFileExists(t, filepath.Join(dst, "new.txt"))
			assertCleanRepo(t, dst, base)
			assert.DirExists(t, filepath.Join(dst, "vendor", "sub"), "git clean keeps the submodule directory")
		})
	}
}

func TestCheckoutSelfContained(t *testing.T) {
	f := newFixture(t, filepath.Join(t.TempDir(), "acme", "widget"))
	sources := filepath.Dir(filepath.Dir(f.work))
	want := gitT(t, f.work, "show", "--format=%H %s", f.commits[2])
	wantTree := snapshot(t, archiveT(t, filepath.Join(f.work, ".git"), f.commits[2]))

	dst := filepath.Join(t.TempDir(), "ws")
	res, err := localCache(t, sources).Checkout(context.Background(), CheckoutRequest{
		Repo: "acme/widget", Commit: f.commits[2], Dir: dst, SelfContained: true,
	})
	require.NoError(t, err)
	assert.Empty(t, res.ObjectsDir)
	assert.Empty(t, res.ObjectsDirs)
	assert.NoFileExists(t, filepath.Join(dst, ".git", "objects", "info", "alternates"))

	// Without the source, the repository still works.
	require.NoError(t, os.RemoveAll(sources))
	assertCleanRepo(t, dst, f.commits[2])
	assert.Equal(t, want, gitT(t, dst, "show", "--format=%H %s", "HEAD"), "git show shows the same diff as in the source")
	assert.Equal(t, 2, len(strings.Fields(gitT(t, dst, "log", "--format=%H"))), "history is the commit and its parent")
	gitT(t, dst, "fsck", "--no-dangling")
	assertSameTree(t, wantTree, snapshot(t, dst))
}

func TestCheckoutChainedAlternates(t *testing.T) {
	f := newFixture(t, filepath.Join(t.TempDir(), "work"))
	layouts := newSources(t, f)
	l := layouts["shared clone (alternates)"]
	dst := filepath.Join(t.TempDir(), "ws")
	res, err := localCache(t, l.sources).Checkout(context.Background(), CheckoutRequest{Repo: "acme/widget", Commit: f.commits[2], Dir: dst})
	require.NoError(t, err)
	require.Len(t, res.ObjectsDirs, 2)
	assert.Equal(t, filepath.Join(l.gitDir, "objects"), res.ObjectsDirs[0])
	assert.Equal(t, filepath.Join(layouts["bare owner__name.git"].gitDir, "objects"), res.ObjectsDirs[1])
	alt, err := os.ReadFile(filepath.Join(dst, ".git", "objects", "info", "alternates"))
	require.NoError(t, err)
	assert.Equal(t, res.ObjectsDir+"\n", string(alt))
	assertCleanRepo(t, dst, f.commits[2])
}

func TestCheckoutResolvesRefs(t *testing.T) {
	f := newFixture(t, filepath.Join(t.TempDir(), "acme", "widget"))
	c := localCache(t, filepath.Dir(filepath.Dir(f.work)))
	type testCase struct {
		name, rev, want string
	}
	for _, tc := range []testCase{
		{"annotated tag", f.tag, f.commits[1]},
		{"full tag ref", "refs/tags/" + f.tag, f.commits[1]},
		{"branch", "main", f.commits[2]},
		{"HEAD", "HEAD", f.commits[2]},
		{"full id", f.commits[0], f.commits[0]},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := c.Checkout(context.Background(), CheckoutRequest{Repo: "acme/widget", Commit: tc.rev, Dir: filepath.Join(t.TempDir(), "ws")})
			require.NoError(t, err)
			assert.Equal(t, tc.want, res.Commit)
		})
	}
}

func TestCheckoutErrors(t *testing.T) {
	f := newFixture(t, filepath.Join(t.TempDir(), "acme", "widget"))
	sources := filepath.Dir(filepath.Dir(f.work))
	nonEmpty := t.TempDir()
	writeT(t, filepath.Join(nonEmpty, "x"), "x", 0o644)
	missingCommit := strings.Repeat("ab", 20)

	// A partial clone that never fetched the blobs of the first commit.
	partialSources := t.TempDir()
	pdir := filepath.Join(partialSources, "acme", "widget.git")
	gitT(t, f.work, "config", "uploadpack.allowFilter", "true")
	gitT(t, "", "clone", "-q", "--bare", "--filter=blob:none", "file://"+f.work, pdir)
	require.NoError(t, os.RemoveAll(f.work+".moved"))

	type testCase struct {
		name     string
		sources  []string
		remote   string
		req      CheckoutRequest
		wantErr  error
		contains []string
	}
	cases := []testCase{
		{
			name:     "unknown repo, no remote",
			sources:  []string{sources},
			req:      CheckoutRequest{Repo: "acme/nothing", Commit: f.commits[0]},
			wantErr:  ErrRepoNotFound,
			contains: []string{"acme/nothing", filepath.Join(sources, "acme", "nothing"), filepath.Join(sources, "acme__nothing.git"), "remote disabled"},
		},
		{
			name:     "unknown repo, unreachable remote",
			sources:  []string{sources},
			remote:   filepath.Join(t.TempDir(), "{owner}", "{name}"),
			req:      CheckoutRequest{Repo: "acme/nothing", Commit: f.commits[0]},
			wantErr:  ErrRepoNotFound,
			contains: []string{"acme/nothing", filepath.Join(sources, "acme", "nothing"), "clone"},
		},
		{
			name:     "unknown commit",
			sources:  []string{sources},
			req:      CheckoutRequest{Repo: "acme/widget", Commit: missingCommit},
			wantErr:  ErrCommitNotFound,
			contains: []string{missingCommit, "acme/widget", f.work},
		},
		{
			name:     "unknown ref",
			sources:  []string{sources},
			req:      CheckoutRequest{Repo: "acme/widget", Commit: "no-such-branch"},
			wantErr:  ErrCommitNotFound,
			contains: []string{"no-such-branch", "acme/widget"},
		},
		{
			name:     "destination not empty",
			sources:  []string{sources},
			req:      CheckoutRequest{Repo: "acme/widget", Commit: f.commits[0], Dir: nonEmpty},
			wantErr:  ErrDirNotEmpty,
			contains: []string{nonEmpty},
		},
		{
			name:    "bad repo name",
			sources: []string{sources},
			req:     CheckoutRequest{Repo: "../etc", Commit: f.commits[0]},
			wantErr: ErrBadRequest,
		},
		{
			name:    "no commit",
			sources: []string{sources},
			req:     CheckoutRequest{Repo: "acme/widget"},
			wantErr: ErrBadRequest,
		},
		{
			name:     "partial clone lacks blobs",
			sources:  []string{partialSources},
			req:      CheckoutRequest{Repo: "acme/widget", Commit: f.commits[0]},
			wantErr:  ErrObjectMissing,
			contains: []string{"README.md"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := New(WithCacheDir(t.TempDir()), WithLocalSources(tc.sources...), WithRemote(tc.remote))
			require.NoError(t, err)
			if tc.req.Dir == "" {
				tc.req.Dir = filepath.Join(t.TempDir(), "ws")
			}
			_, err = c.Checkout(context.Background(), tc.req)
			require.ErrorIs(t, err, tc.wantErr)
			if tc.req.Dir != nonEmpty {
				assert.NoDirExists(t, tc.req.Dir, "a failed checkout removes what it wrote")
			} else {
				assert.FileExists(t, filepath.Join(nonEmpty, "x"), "a non-empty destination is left alone")
			}
			for _, s := range tc.contains {
				assert.Contains(t, err.Error(), s)
			}
		})
	}
}

func TestNewOptions(t *testing.T) {
	type testCase struct {
		name    string
		opts    []Option
		wantErr bool
	}
	for _, tc := range []testCase{
		{name: "defaults"},
		{name: "missing local source", opts: []Option{WithLocalSources(filepath.Join(t.TempDir(), "nope"))}, wantErr: true},
		{name: "empty cache dir", opts: []Option{WithCacheDir("")}, wantErr: true},
		{name: "template without name", opts: []Option{WithRemote("https://example.com/x.git")}, wantErr: true},
		{name: "zero workers", opts: []Option{WithWorkers(0)}, wantErr: true},
		{name: "nil logger", opts: []Option{WithLogger(nil)}, wantErr: true},
		{name: "tiny object cache", opts: []Option{WithObjectCacheSize(10)}, wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("XDG_CACHE_HOME", "/xdg")
			c, err := New(tc.opts...)
			if tc.wantErr {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, "/xdg/swebox/repos", c.Dir())
		})
	}
}
