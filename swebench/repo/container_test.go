package repo

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/internal/cienv"
)

// testImage is the image the container tests run: SWEBOX_TEST_IMAGE, else
// swebox/python:bookworm (Debian with git; see scripts/build-image.sh).
func testImage(t *testing.T) string {
	t.Helper()
	img := os.Getenv("SWEBOX_TEST_IMAGE")
	if img == "" {
		img = "swebox/python:bookworm"
	}
	if _, err := exec.LookPath("docker"); err != nil {
		cienv.Skip(t, "docker CLI not found: skipping the in-container git test")
	}
	if out, err := exec.Command("docker", "image", "inspect", "--format", "{{.Id}}", img).CombinedOutput(); err != nil {
		cienv.Skip(t, "image %s not available (%v: %s): skipping the in-container git test", img, err, bytes.TrimSpace(out))
	}
	return img
}

// TestWorkspaceInContainer runs the eval script's git steps inside a
// container, with the workspace at /testbed and the borrowed objects
// directories mounted read-only at their own paths, as the evaluator does.
func TestWorkspaceInContainer(t *testing.T) {
	img := testImage(t)
	f := newFixture(t, filepath.Join(t.TempDir(), "work"))
	layouts := newSources(t, f)
	l := layouts["shared clone (alternates)"] // two chained object dirs
	base, next := f.commits[1], f.commits[2]
	patch := gitT(t, f.work, "diff", "--binary", base, next)

	script := `set -eu
export HOME=/tmp
git config --global --add safe.directory /testbed
cd /testbed
test -z "$(git status --porcelain)"
git show --stat HEAD >/dev/null
test -z "$(git -c core.fileMode=false diff ` + base + `)"
echo broken > src/pkg/mod.py
git checkout ` + base + ` -- src/pkg/mod.py
test -z "$(git status --porcelain)"
git apply --verbose -
grep -q 'return 2' src/pkg/mod.py
test -n "$(git status --porcelain)"
git checkout -- .
git clean -fd
test -z "$(git status --porcelain)"
echo all-git-steps-passed`

	type testCase struct {
		name          string
		user          string
		owner         *Owner
		selfContained bool
	}
	for _, tc := range []testCase{
		{name: "root, alternates", user: "0:0"},
		{name: "uid 1000, alternates", user: "1000:1000", owner: &Owner{UID: 1000, GID: 1000}},
		{name: "uid 1000, self-contained", user: "1000:1000", owner: &Owner{UID: 1000, GID: 1000}, selfContained: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.owner != nil && os.Geteuid() != 0 {
				cienv.Skip(t, "chown needs root")
			}
			dst := filepath.Join(t.TempDir(), "ws")
			res, err := localCache(t, l.sources).Checkout(context.Background(), CheckoutRequest{
				Repo: "acme/widget", Commit: base, Dir: dst, SelfContained: tc.selfContained, Owner: tc.owner,
			})
			require.NoError(t, err)
			if !tc.selfContained {
				require.Len(t, res.ObjectsDirs, 2)
			}
			args := []string{"run", "--rm", "-i", "--network", "none", "--user", tc.user,
				"--label", "swebox.test=repo", "-v", dst + ":/testbed"}
			for _, d := range res.ObjectsDirs {
				args = append(args, "-v", d+":"+d+":ro")
			}
			args = append(args, img, "bash", "-c", script)
			cmd := exec.Command("docker", args...)
			cmd.Stdin = bytes.NewReader([]byte(patch))
			out, err := cmd.CombinedOutput()
			require.NoError(t, err, string(out))
			assert.Contains(t, string(out), "all-git-steps-passed")
		})
	}
}
