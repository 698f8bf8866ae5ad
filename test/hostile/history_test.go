package hostile_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/internal/swebenchtest"
	"github.com/swebox/swebox/internal/testenv"
	"github.com/swebox/swebox/swebench"
	"github.com/swebox/swebox/swebench/dataset"
)

// stealFix is a conftest.py that looks for the upstream fix in the
// repository's history, as a model that knows where the harness keeps it
// would: every object git can reach from the workspace, the fix commit by
// its id, and the source's objects directory on disk, which it also tries
// to write into. It copies the fixed
// calc.py into place when it finds it, and reports what it saw in pytest's
// header.
func stealFix(fix, sourceObjects string) string {
	return fmt.Sprintf(`import os, subprocess

def _git(*args):
    return subprocess.run(["git", *args], capture_output=True, text=True)

_all = _git("cat-file", "--batch-all-objects", "--batch-check").stdout.split("\n")
_commits = [line.split()[0] for line in _all if " commit " in line]
_fix = _git("show", "%[1]s:calc.py")
_seen = "STEAL objects=%%d commits=%%d fix-exit=%%d source-visible=%%s" %% (
    len([l for l in _all if l]), len(_commits), _fix.returncode, os.path.isdir(%[2]q))
try:
    with open(os.path.join(%[2]q, "evil"), "w") as f:
        f.write("x")
    _seen += " source-write=ok"
except OSError as e:
    _seen += " source-write-errno=%%d" %% e.errno
if _fix.returncode == 0:
    with open("calc.py", "w") as f:
        f.write(_fix.stdout)

def pytest_report_header(config):
    return [_seen]
`, fix, sourceObjects)
}

// TestLaterCommitsAreUnreadable: the repository source holds the commit
// that fixes the instance (as a mirror of the upstream repository does).
// By default a prediction whose code looks for it finds only the base
// commit and does not resolve; with Config.ShareObjects, the same
// prediction reads the fix and resolves, which shows the attack is real,
// and cannot write into the mounted objects (EROFS).
func TestLaterCommitsAreUnreadable(t *testing.T) {
	c := testenv.Client(t)
	p := swebenchtest.NewProject(t)
	srcDir := filepath.Join(p.Sources, "swebox-test__calc")
	fix := commitFix(t, srcDir)

	id := "hostile__history-1"
	patch := swebenchtest.ConftestDiff(stealFix(fix, filepath.Join(srcDir, ".git", "objects")))
	for _, share := range []bool{false, true} {
		t.Run(fmt.Sprintf("share objects %v", share), func(t *testing.T) {
			cfg := p.Config(t, c, "history", []dataset.Instance{p.Instance(id)}, []dataset.Prediction{swebenchtest.Pred(id, patch)})
			cfg.ShareObjects = share
			res, err := swebench.Evaluate(context.Background(), cfg)
			require.NoError(t, err)
			r := swebenchtest.ByID(res)[id]
			out := swebenchtest.ReadFile(t, cfg, id, "test_output.txt")
			line := stealLine(out)
			require.NotEmpty(t, line, "the prediction's conftest ran:\n%s", out)
			t.Log(line)
			if share {
				assert.Contains(t, line, "fix-exit=0 source-visible=True")
				assert.Contains(t, line, fmt.Sprintf("source-write-errno=%d", syscall.EROFS), "the shared objects are mounted read-only")
				assert.Equal(t, swebench.StatusResolved, r.Status, "with shared objects the fix is readable: %s", r.Error)
				return
			}
			assert.Contains(t, line, "commits=1 ", "only the base commit is in the workspace")
			assert.NotContains(t, line, "fix-exit=0")
			assert.Contains(t, line, "source-visible=False")
			assert.Equal(t, swebench.StatusUnresolved, r.Status, r.Error)
		})
	}
}

// commitFix commits the gold fix on top of the base commit in the source
// repository and returns its id.
func commitFix(t *testing.T, dir string) string {
	t.Helper()
	r, err := git.PlainOpen(dir)
	require.NoError(t, err)
	wt, err := r.Worktree()
	require.NoError(t, err)
	calc := filepath.Join(dir, "calc.py")
	old, err := os.ReadFile(calc)
	require.NoError(t, err)
	fixed := strings.Replace(string(old), "return a - b", "return a + b", 1)
	require.NotEqual(t, string(old), fixed)
	require.NoError(t, os.WriteFile(calc, []byte(fixed), 0o644))
	_, err = wt.Add("calc.py")
	require.NoError(t, err)
	sig := &object.Signature{Name: "upstream", Email: "upstream@swebox.invalid", When: time.Date(2024, 2, 1, 0, 0, 0, 0, time.UTC)}
	h, err := wt.Commit("fix add", &git.CommitOptions{Author: sig, Committer: sig})
	require.NoError(t, err)
	return h.String()
}

// stealLine is the line the conftest printed.
func stealLine(out string) string {
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "STEAL ") {
			return l
		}
	}
	return ""
}
