package main

import (
	"context"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/internal/cienv"
	"github.com/swebox/swebox/swebench"
	"github.com/swebox/swebox/swebench/dataset"
	"github.com/swebox/swebox/swebench/repo"
)

var update = flag.Bool("update", false, "rewrite the bundled demo dataset and other golden files")

func buildDemoRepoT(t *testing.T) demoRepo {
	t.Helper()
	r, err := buildDemoRepo(demoFS(), t.TempDir())
	require.NoError(t, err)
	return r
}

// loadEmbeddedJSONL writes an embedded demo file to disk and loads it with
// the dataset package, as the demo does.
func loadEmbeddedDataset(t *testing.T) []dataset.Instance {
	t.Helper()
	b, err := fs.ReadFile(demoFS(), demoDatasetFile)
	require.NoError(t, err)
	p := filepath.Join(t.TempDir(), demoDatasetFile)
	require.NoError(t, os.WriteFile(p, b, 0o644))
	rows, err := dataset.LoadDataset(p)
	require.NoError(t, err)
	return rows
}

func TestDemoRepoIsDeterministic(t *testing.T) {
	first := buildDemoRepoT(t)
	second := buildDemoRepoT(t)
	assert.Equal(t, first.Commits, second.Commits, "two builds must give the same commit ids")
	assert.Equal(t, first.Head, second.Head)
	require.Len(t, first.Commits, 2)

	// The bundled dataset names exactly these commits.
	for _, row := range loadEmbeddedDataset(t) {
		var found bool
		for _, id := range first.Commits {
			found = found || id == row.BaseCommit
		}
		assert.True(t, found, "%s: base_commit %s is not a commit the builder makes (%v); run go test -run TestDemoDatasetIsCurrent -update", row.InstanceID, row.BaseCommit, first.Commits)
	}
}

func TestDemoDatasetIsCurrent(t *testing.T) {
	r := buildDemoRepoT(t)
	cases, err := readDemoCases(demoFS(), r.Repo, r.Commits)
	require.NoError(t, err)
	gotDataset, gotPreds, err := demoFiles(cases)
	require.NoError(t, err)
	for name, got := range map[string][]byte{demoDatasetFile: gotDataset, demoPredictionsFile: gotPreds} {
		file := filepath.Join("demo", name)
		if *update {
			require.NoError(t, os.WriteFile(file, got, 0o644))
			continue
		}
		want, err := os.ReadFile(file)
		require.NoError(t, err)
		assert.Equal(t, string(want), string(got), "%s is stale: run go test ./examples/eval -run TestDemoDatasetIsCurrent -update", file)
	}
}

func TestDemoCasesCoverEveryOutcome(t *testing.T) {
	r := buildDemoRepoT(t)
	cases, err := readDemoCases(demoFS(), r.Repo, r.Commits)
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(cases), 6)

	count := map[swebench.Status]int{}
	for _, c := range cases {
		count[c.Expected]++
		assert.NotEmpty(t, c.Shows, c.Instance.InstanceID)
		assert.NotEmpty(t, c.Instance.FailToPass, c.Instance.InstanceID)
		assert.NotEmpty(t, c.Instance.PassToPass, c.Instance.InstanceID)
		assert.Equal(t, c.Expected == swebench.StatusEmptyPatch, c.Prediction.EmptyPatch(), "%s: only the empty-patch case has an empty prediction", c.Instance.InstanceID)
		for _, name := range append(append([]string{}, c.Instance.FailToPass...), c.Instance.PassToPass...) {
			file, _, ok := strings.Cut(name, "::")
			require.True(t, ok, name)
			assert.Contains(t, c.Instance.TestPatch, "b/"+file, "%s: %s is not in a file the test patch touches, so the test command would not run it", c.Instance.InstanceID, name)
		}
	}
	// resolved twice, unresolved twice (a F2P still failing, a P2P
	// regression), error twice (patch does not apply, timeout), empty once.
	assert.Equal(t, map[swebench.Status]int{
		swebench.StatusResolved:   2,
		swebench.StatusUnresolved: 2,
		swebench.StatusError:      2,
		swebench.StatusEmptyPatch: 1,
	}, count)
}

// The repository cache checks every demo commit out from the built
// repository used as a local source, with the network disabled.
func TestDemoRepoChecksOut(t *testing.T) {
	r := buildDemoRepoT(t)
	cache, err := repo.New(repo.WithLocalSources(r.Sources), repo.WithRemote(""), repo.WithCacheDir(t.TempDir()))
	require.NoError(t, err)
	h, err := readDemoHistory(demoFS())
	require.NoError(t, err)

	want := map[string][]byte{}
	for _, c := range h.Commits {
		require.NoError(t, overlayDemoTree(demoFS(), path.Join("repo", c.Tree), want))
		dir := filepath.Join(t.TempDir(), "w")
		res, err := cache.Checkout(context.Background(), repo.CheckoutRequest{Repo: r.Repo, Commit: r.Commits[c.Tree], Dir: dir})
		require.NoError(t, err, c.Tree)
		assert.Equal(t, repo.SourceLocal, res.Source)
		assert.Equal(t, len(want), res.Files, c.Tree)
		for p, data := range want {
			got, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(p)))
			require.NoError(t, err, p)
			assert.Equal(t, string(data), string(got), p)
		}
	}
}

// git itself finds the built repository sound and agrees on its history.
func TestDemoRepoPassesGitFsck(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		cienv.Skip(t, "git is not installed")
	}
	r := buildDemoRepoT(t)
	gitDir := filepath.Join(r.Sources, "swebox__demo.git")
	out, err := exec.Command("git", "--git-dir", gitDir, "fsck", "--strict", "--no-dangling").CombinedOutput()
	require.NoError(t, err, string(out))

	out, err = exec.Command("git", "--git-dir", gitDir, "log", "--reverse", "--format=%H %an <%ae> %aI", "main").Output()
	require.NoError(t, err)
	h, err := readDemoHistory(demoFS())
	require.NoError(t, err)
	var want []string
	for _, c := range h.Commits {
		want = append(want, r.Commits[c.Tree]+" "+h.Author.Name+" <"+h.Author.Email+"> "+strings.Replace(c.Date, "Z", "+00:00", 1))
	}
	assert.Equal(t, want, strings.Split(strings.TrimSpace(string(out)), "\n"))
}

// TestStaleDemoDirsRemoved: a demo removes the temporary directories of
// demos that no longer run (a double Ctrl-C exits without removing its
// own), and leaves a running demo's alone.
func TestStaleDemoDirsRemoved(t *testing.T) {
	root := t.TempDir()
	done := exec.Command("true")
	require.NoError(t, done.Run())
	dead := filepath.Join(root, fmt.Sprintf("%s%d-123", demoDirPrefix, done.Process.Pid))
	live := filepath.Join(root, fmt.Sprintf("%s%d-456", demoDirPrefix, os.Getpid()))
	other := filepath.Join(root, "swebox-demo-unrelated")
	for _, d := range []string{dead, live, other} {
		require.NoError(t, os.MkdirAll(filepath.Join(d, "repos"), 0o755))
	}
	removeStaleDemoDirs(root)
	assert.NoDirExists(t, dead)
	assert.DirExists(t, live)
	assert.DirExists(t, other)
}
