package swebench_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/internal/swebenchtest"
	"github.com/swebox/swebox/internal/testenv"
	"github.com/swebox/swebox/sandbox"
	"github.com/swebox/swebox/swebench"
	"github.com/swebox/swebox/swebench/dataset"
	"github.com/swebox/swebox/swebench/family"
	"github.com/swebox/swebox/swebench/repo"
)

// The stand-in of a SWE-smith mirror repository: a tiny package whose
// tests include one that passes only where the sandbox has no network
// interface but the loopback (in the FAIL_TO_PASS file: the harness runs
// and grades no other file).
var smithFiles = map[string]string{
	"addict.py":   "from _native import base\n\n\ndef add(a, b):\n    return a + b + base\n\n\ndef get(d, k):\n    return d.get(k)\n",
	"README.md":   "addict\n",
	"conftest.py": "# the root conftest puts /testbed on sys.path\n",
	"tests/test_addict.py": "from addict import add, get\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\ndef test_get():\n    assert get({1: 2}, 1) == 2\n\n\n" +
		"def test_offline():\n" +
		"    lines = open('/proc/net/dev').read().splitlines()[2:]\n" +
		"    assert sorted(l.split(':')[0].strip() for l in lines) == ['lo']\n",
}

const smithBug = "diff --git a/addict.py b/addict.py\n--- a/addict.py\n+++ b/addict.py\n@@ -2,5 +2,5 @@ from _native import base\n \n \n def add(a, b):\n-    return a + b + base\n+    return a - b + base\n \n \n"

// smithMirror commits the stand-in as the mirror's main branch and, for
// each instance id, a branch of that name with the bug applied, as
// SWE-smith's gather.py pushes them; it returns each branch's commit.
func smithMirror(t *testing.T, dir string, ids ...string) map[string]string {
	t.Helper()
	r, err := git.PlainInit(dir, false)
	require.NoError(t, err)
	wt, err := r.Worktree()
	require.NoError(t, err)
	sig := &object.Signature{Name: "swesmith", Email: "swesmith@swesmith.ai", When: time.Date(2025, 6, 21, 0, 0, 0, 0, time.UTC)}
	write := func(name, content string) {
		path := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
		_, err := wt.Add(name)
		require.NoError(t, err)
	}
	for name, content := range smithFiles {
		write(name, content)
	}
	main, err := wt.Commit("Initial commit", &git.CommitOptions{Author: sig, Committer: sig})
	require.NoError(t, err)
	heads := map[string]string{}
	for _, id := range ids {
		require.NoError(t, wt.Checkout(&git.CheckoutOptions{Hash: main, Branch: plumbing.NewBranchReferenceName(id), Create: true}))
		write("addict.py", strings.Replace(smithFiles["addict.py"], "return a + b + base", "return a - b + base", 1))
		h, err := wt.Commit("Bug Patch", &git.CommitOptions{Author: sig, Committer: sig})
		require.NoError(t, err)
		heads[id] = h.String()
		require.NoError(t, r.CreateBranch(&config.Branch{Name: id}))
		require.NoError(t, wt.Checkout(&git.CheckoutOptions{Hash: main, Force: true}))
	}
	return heads
}

// SWE-smith rows run end to end as its harness runs them, with the
// sandbox's network off: the host checks the instance's revision out of
// the mirror repository (the instance branch for a row without
// base_commit, base_commit for one with it) and copies it over /testbed of
// the row's image, whose untracked files stay (the tests import one); the patch goes in with GIT_APPLY_CMDS; eval.sh is the
// harness's; the profile's pytest command runs the FAIL_TO_PASS files and
// the harness's rule grades. The gold patch (the bug patch reversed)
// resolves; a patch that fixes nothing does not. A PASS_TO_PASS test
// asserts from inside the sandbox that it has no interface but loopback.
// A run that asks for prebuilt mode is refused for these rows.
func TestSmithRunsAsItsHarness(t *testing.T) {
	c := testenv.Client(t)
	ctx := context.Background()
	prefix := "mewwts__addict.75284f95."
	ids := []string{prefix + "func_pm_op_change__e2e1", prefix + "func_pm_op_change__e2e2"}
	mirrors := t.TempDir()
	heads := smithMirror(t, filepath.Join(mirrors, "swesmith", "mewwts__addict.75284f95"), ids...)

	ns := "swebox-test-" + strings.ToLower(c.Session()[len(c.Session())-6:])
	image := family.SmithImage(ids[0], ns, "")
	require.True(t, strings.HasPrefix(image, ns+"/swesmith.x86_64.mewwts_1776_addict.75284f95"), image)
	// The image holds the mirror's clone at main in /testbed, as
	// SWE-smith's images do, and _native.py, a file git does not track
	// that addict.py imports: an output of the image's install, which
	// git checkout leaves in place.
	mirror := filepath.Join(mirrors, "swesmith", "mewwts__addict.75284f95")
	require.NoError(t, os.WriteFile(filepath.Join(mirror, "_native.py"), []byte("base = 0\n"), 0o644))
	swebenchtest.BuildTestbedImage(t, c, mirror, image)

	var rows []dataset.Instance
	for i, id := range ids {
		row := map[string]any{
			"instance_id": id, "repo": "swesmith/mewwts__addict.75284f95", "patch": smithBug,
			"FAIL_TO_PASS": []string{"tests/test_addict.py::test_add"},
			"PASS_TO_PASS": []string{"tests/test_addict.py::test_get", "tests/test_addict.py::test_offline"},
			"image_name":   image, "created_at": "2025-06-21T00:00:00", "problem_statement": "add subtracts",
		}
		if i == 1 {
			row["base_commit"] = heads[id]
		}
		b, err := json.Marshal(row)
		require.NoError(t, err)
		var inst dataset.Instance
		require.NoError(t, json.Unmarshal(b, &inst))
		rows = append(rows, inst)
	}
	require.Equal(t, ids[0], rows[0].BaseRef)
	require.Equal(t, heads[ids[1]], rows[1].BaseCommit)

	rc, err := repo.New(repo.WithLocalSources(mirrors), repo.WithCacheDir(t.TempDir()), repo.WithRemote(""))
	require.NoError(t, err)
	noop := swebenchtest.ReplaceDiff("README.md", "addict\n", "addict, a dict\n")
	base := swebench.Config{
		Dataset: rows, Repos: rc, Sandboxes: []*sandbox.Client{c}, DatasetName: "SWE-bench/SWE-smith",
		LogDir: filepath.Join(t.TempDir(), "logs"), ReportDir: t.TempDir(), WorkDir: t.TempDir(),
		Timeout: 60 * time.Second, MaxWorkers: 2, Limits: testenv.SmallLimits, TestOutputLimit: 1 << 20,
	}
	for _, tc := range []struct {
		name   string
		patch  func(dataset.Instance) string
		status swebench.Status
		f2p    swebench.Fraction
	}{
		{"gold", func(inst dataset.Instance) string { return inst.Patch }, swebench.StatusResolved, swebench.Fraction{Passed: 1, Total: 1}},
		{"no-op", func(dataset.Instance) string { return noop }, swebench.StatusUnresolved, swebench.Fraction{Passed: 0, Total: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := base
			cfg.RunID = "swesmith-" + tc.name
			for _, inst := range rows {
				cfg.Predictions = append(cfg.Predictions, swebenchtest.Pred(inst.InstanceID, tc.patch(inst)))
			}
			res, err := swebench.Evaluate(ctx, cfg)
			require.NoError(t, err)
			byID := swebenchtest.ByID(res)
			require.Len(t, byID, 2)
			for _, id := range ids {
				r := byID[id]
				require.Equal(t, tc.status, r.Status, "%s: %v", id, r.Error)
				assert.Equal(t, tc.f2p, r.FailToPass, id)
				assert.Equal(t, swebench.Fraction{Passed: 2, Total: 2}, r.PassToPass, id, "test_offline passed: no network in the sandbox")
				assert.Equal(t, "git apply --verbose", strings.Join(strings.Fields(r.PatchCommand)[:3], " "), id)
				require.NotNil(t, r.Report)
				assert.Equal(t, family.GradingSmith, r.Report.Notes.Grading)
				eval := swebenchtest.ReadFile(t, cfg, id, "eval.sh")
				p, err := family.SmithProfileOf(id)
				require.NoError(t, err)
				cmd, _ := family.SmithTestCommand(p, []string{"tests/test_addict.py::test_add"})
				assert.Equal(t, family.SmithScript(cmd), eval, id)
				log := swebenchtest.ReadFile(t, cfg, id, "test_output.txt")
				assert.Contains(t, log, "tests/test_addict.py::test_offline PASSED", id)
				assert.Contains(t, log, "tests/test_addict.py::test_get PASSED", id)
			}
		})
	}

	t.Run("prebuilt refused", func(t *testing.T) {
		cfg := base
		cfg.RunID, cfg.Mode, cfg.Repos = "swesmith-prebuilt", "prebuilt", nil
		cfg.Predictions = []dataset.Prediction{swebenchtest.Pred(ids[0], rows[0].Patch)}
		cfg.InstanceIDs = []string{ids[0]}
		res, err := swebench.Evaluate(ctx, cfg)
		require.NoError(t, err)
		r := swebenchtest.ByID(res)[ids[0]]
		require.Equal(t, swebench.StatusError, r.Status)
		assert.ErrorIs(t, r.Err, family.ErrHostCheckout)
	})
	assert.Zero(t, testenv.CountLeftovers(t, c, c.Session()).Containers)
}
