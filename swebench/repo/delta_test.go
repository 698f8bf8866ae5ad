package repo

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCheckoutDeltaChains checks every version of files stored as long
// delta chains, with OFS_DELTA and with REF_DELTA bases.
func TestCheckoutDeltaChains(t *testing.T) {
	type testCase struct {
		name      string
		ofsDeltas bool
	}
	for _, tc := range []testCase{
		{name: "ofs deltas", ofsDeltas: true},
		{name: "ref deltas"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sources := t.TempDir()
			work := filepath.Join(sources, "acme", "chain")
			gitT(t, "", "init", "-q", "-b", "main", work)
			var lines []string
			for i := range 200 {
				lines = append(lines, fmt.Sprintf("line %d of a file that grows by one line per commit", i))
			}
			var commits []string
			for v := range 40 {
				lines[v*3] = fmt.Sprintf("changed in version %d", v)
				writeT(t, filepath.Join(work, "grow.txt"), strings.Join(lines[:100+v*2], "\n")+"\n", 0o644)
				writeT(t, filepath.Join(work, "sub", "other.txt"), strings.Repeat(fmt.Sprintf("v%d ", v%5), 3000), 0o644)
				gitT(t, work, "add", "-A")
				gitT(t, work, "commit", "-q", "-m", fmt.Sprint("v", v))
				commits = append(commits, strings.TrimSpace(gitT(t, work, "rev-parse", "HEAD")))
			}
			gitT(t, work, "-c", fmt.Sprintf("repack.useDeltaBaseOffset=%t", tc.ofsDeltas), "repack", "-a", "-d", "-q", "--depth=50", "--window=50")
			verify := gitT(t, work, "verify-pack", "-v", filepathGlob(t, filepath.Join(work, ".git", "objects", "pack", "*.idx")))
			m := regexp.MustCompile(`chain length = (\d+): (\d+) objects?`).FindAllStringSubmatch(verify, -1)
			require.NotEmpty(t, m, "the pack should hold deltas")
			assert.GreaterOrEqual(t, len(m), 10, "chains of many lengths: %v", m)

			c := localCache(t, sources)
			for _, commit := range []string{commits[0], commits[13], commits[39]} {
				dst := filepath.Join(t.TempDir(), "ws")
				_, err := c.Checkout(context.Background(), CheckoutRequest{Repo: "acme/chain", Commit: commit, Dir: dst})
				require.NoError(t, err)
				assertSameTree(t, snapshot(t, archiveT(t, filepath.Join(work, ".git"), commit)), snapshot(t, dst))
				assertCleanRepo(t, dst, commit)
			}
		})
	}
}

func filepathGlob(t *testing.T, pattern string) string {
	t.Helper()
	m, err := filepath.Glob(pattern)
	require.NoError(t, err)
	require.Len(t, m, 1)
	return m[0]
}
