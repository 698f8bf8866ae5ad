package repo

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/internal/cienv"
)

// benchRepo generates a deterministic repository of files×~2 KiB text
// files in nested directories (20 top-level dirs, 10 subdirs each), packed
// by git gc, under sources/bench/big. It returns the sources dir, the git
// directory and the commit.
func benchRepo(b *testing.B, files int) (sources, gitDir, commit string) {
	b.Helper()
	sources = b.TempDir()
	work := filepath.Join(sources, "bench", "big")
	require.NoError(b, os.MkdirAll(work, 0o755))
	rng := rand.New(rand.NewPCG(1, 2))
	words := strings.Fields("def class return import from self value result error test " +
		"assert None True False for in if else while with as lambda yield data item")
	for i := range files {
		dir := filepath.Join(work, fmt.Sprintf("pkg%02d", i%20), fmt.Sprintf("sub%d", (i/20)%10))
		var sb strings.Builder
		for sb.Len() < 2048 {
			for range 8 {
				sb.WriteString(words[rng.IntN(len(words))])
				sb.WriteByte(' ')
			}
			fmt.Fprintf(&sb, "%d\n", rng.IntN(100000))
		}
		mode := os.FileMode(0o644)
		if i%50 == 0 {
			mode = 0o755
		}
		require.NoError(b, os.MkdirAll(dir, 0o755))
		require.NoError(b, os.WriteFile(filepath.Join(dir, fmt.Sprintf("file%05d.py", i)), []byte(sb.String()), mode))
	}
	gitT(b, "", "init", "-q", "-b", "main", work)
	gitT(b, work, "add", "-A")
	gitT(b, work, "commit", "-q", "-m", "generated")
	gitT(b, work, "gc", "-q")
	commit = strings.TrimSpace(gitT(b, work, "rev-parse", "HEAD"))
	return sources, filepath.Join(work, ".git"), commit
}

// checkoutMethods are the ways of materialising the benchmark commit that
// BenchmarkCheckout compares, each writing into a fresh dst.
func checkoutMethods(b *testing.B, sources, gitDir, commit string) []checkoutMethod {
	ctx := context.Background()
	c, err := New(WithCacheDir(b.TempDir()), WithLocalSources(sources), WithRemote(""))
	require.NoError(b, err)
	return []checkoutMethod{
		{"go-git", func(dst string) {
			_, err := c.Checkout(ctx, CheckoutRequest{Repo: "bench/big", Commit: commit, Dir: dst})
			require.NoError(b, err)
		}},
		{"go-git-self-contained", func(dst string) {
			_, err := c.Checkout(ctx, CheckoutRequest{Repo: "bench/big", Commit: commit, Dir: dst, SelfContained: true})
			require.NoError(b, err)
		}},
		{"git-worktree-add", func(dst string) {
			gitT(b, filepath.Dir(gitDir), "worktree", "add", "-q", "--detach", dst, commit)
		}},
		{"git-archive-tar", func(dst string) {
			require.NoError(b, os.Mkdir(dst, 0o755))
			cmd := exec.Command("sh", "-c", `git --git-dir="$1" archive "$2" | tar -x -C "$3"`, "sh", gitDir, commit, dst)
			cmd.Env = gitEnv(os.TempDir())
			out, err := cmd.CombinedOutput()
			require.NoError(b, err, string(out))
		}},
	}
}

type checkoutMethod struct {
	name string
	run  func(dst string)
}

// BenchmarkCheckout compares Cache.Checkout (files, index and .git) with
// the git CLI on the same generated 5,000-file repository, in the same
// run. Checkouts are kept until the benchmark ends: deleting 5,000 files
// between iterations would charge the file system's delayed work (journal,
// discard) to the next iteration.
//
// The round-robin sub-benchmark runs every method once per iteration, in
// rotating order, and reports each one's median: on a shared, noisy
// machine that is the fairest comparison.
//
//	go test -run '^$' -bench BenchmarkCheckout -benchtime 15x ./swebench/repo/
func BenchmarkCheckout(b *testing.B) {
	if _, err := exec.LookPath("git"); err != nil {
		cienv.Skip(b, "git CLI not found")
	}
	sources, gitDir, commit := benchRepo(b, 5000)
	methods := checkoutMethods(b, sources, gitDir, commit)
	defer gitT(b, filepath.Dir(gitDir), "worktree", "prune")

	for _, m := range methods {
		b.Run(m.name, func(b *testing.B) {
			root := b.TempDir()
			for i := 0; b.Loop(); i++ {
				m.run(filepath.Join(root, fmt.Sprintf("ws%d", i)))
			}
		})
	}
	b.Run("round-robin", func(b *testing.B) {
		root := b.TempDir()
		times := make([][]time.Duration, len(methods))
		for i := 0; b.Loop(); i++ {
			for k := range methods {
				j := (i + k) % len(methods)
				start := time.Now()
				methods[j].run(filepath.Join(root, fmt.Sprintf("%s-%d", methods[j].name, i)))
				times[j] = append(times[j], time.Since(start))
			}
		}
		for j, m := range methods {
			slices.Sort(times[j])
			b.ReportMetric(float64(times[j][len(times[j])/2].Microseconds())/1000, m.name+"-ms")
		}
	})
}
