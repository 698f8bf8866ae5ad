// Package swebenchtest is the SWE-bench fixture of the project's tests: a
// small Python project committed with go-git, dataset rows and predictions
// over it, images laid out like the official instance images
// ([BuildTestbedImage]), evaluation configs on a test engine, the eval
// command built and its demo exported, and readers of what a run wrote. The
// engine helpers it builds on are internal/testenv's; sandbox's tests, which
// know nothing of SWE-bench, use only those.
package swebenchtest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/internal/testenv"
	"github.com/swebox/swebox/sandbox"
	"github.com/swebox/swebox/swebench"
	"github.com/swebox/swebox/swebench/dataset"
	"github.com/swebox/swebox/swebench/repo"
)

// CountRunContainers counts the containers of an evaluation run id, whatever
// their session (the eval binary makes its own).
func CountRunContainers(t testing.TB, c *sandbox.Client, runID string) int {
	t.Helper()
	objs, err := c.List(context.Background(), sandbox.ListRequest{All: true, Labels: map[string]string{swebench.LabelRun: runID}})
	require.NoError(t, err)
	n := 0
	for _, o := range objs {
		if o.Kind == sandbox.KindSandbox {
			n++
		}
	}
	return n
}

// The project: calc.add is wrong at the base commit; the test patch adds the
// test that shows it (FAIL_TO_PASS) beside two that pass (PASS_TO_PASS).
// conftest.py is at the root, where pytest loads it for every test run, which
// is where the hostile predictions put their code.
const (
	Conftest = "# conftest\n"
	calcPy   = "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n"
)

var projectFiles = map[string]string{
	"conftest.py":       Conftest,
	"calc.py":           calcPy,
	"tests/test_mul.py": "from calc import mul\n\n\ndef test_mul():\n    assert mul(3, 4) == 12\n",
	"README.md":         "calc\n",
}

// TestPatch is every row's test_patch.
const TestPatch = `diff --git a/tests/test_add.py b/tests/test_add.py
new file mode 100644
--- /dev/null
+++ b/tests/test_add.py
@@ -0,0 +1,5 @@
+from calc import add
+
+
+def test_add():
+    assert add(2, 3) == 5
diff --git a/tests/test_mul.py b/tests/test_mul.py
--- a/tests/test_mul.py
+++ b/tests/test_mul.py
@@ -3,3 +3,7 @@ from calc import mul
 
 def test_mul():
     assert mul(3, 4) == 12
+
+
+def test_mul_zero():
+    assert mul(0, 4) == 0
`

// Tests of every row.
var (
	FailToPass = []string{"tests/test_add.py::test_add"}
	PassToPass = []string{"tests/test_mul.py::test_mul", "tests/test_mul.py::test_mul_zero"}
)

// Patches over calc.py: Gold resolves, Wrong leaves test_add failing,
// Regression breaks a PASS_TO_PASS test.
var (
	Gold       = CalcDiff("    return a + b", "    return a * b")
	Wrong      = CalcDiff("    return a - b + 0", "    return a * b")
	Regression = CalcDiff("    return a + b", "    return a * b + 1")
)

// CalcDiff rewrites the bodies of calc.add and calc.mul.
func CalcDiff(addBody, mulBody string) string {
	return "diff --git a/calc.py b/calc.py\n--- a/calc.py\n+++ b/calc.py\n@@ -1,6 +1,6 @@\n" +
		" def add(a, b):\n-    return a - b\n+" + addBody + "\n \n \n def mul(a, b):\n-    return a * b\n+" + mulBody + "\n"
}

// ReplaceDiff is a diff that replaces the whole content of an existing file.
func ReplaceDiff(path, old, new string) string {
	o, n := lines(old), lines(new)
	var b strings.Builder
	fmt.Fprintf(&b, "diff --git a/%s b/%s\n--- a/%s\n+++ b/%s\n@@ -1,%d +1,%d @@\n", path, path, path, path, len(o), len(n))
	for _, l := range o {
		b.WriteString("-" + l + "\n")
	}
	for _, l := range n {
		b.WriteString("+" + l + "\n")
	}
	return b.String()
}

// NewFileDiff is a diff that creates a file (mode 100644).
func NewFileDiff(path, content string) string {
	n := lines(content)
	var b strings.Builder
	fmt.Fprintf(&b, "diff --git a/%s b/%s\nnew file mode 100644\n--- /dev/null\n+++ b/%s\n@@ -0,0 +1,%d @@\n", path, path, path, len(n))
	for _, l := range n {
		b.WriteString("+" + l + "\n")
	}
	return b.String()
}

// ConftestDiff replaces conftest.py with body.
func ConftestDiff(body string) string { return ReplaceDiff("conftest.py", Conftest, body) }

func lines(s string) []string { return strings.Split(strings.TrimSuffix(s, "\n"), "\n") }

// Project is the test project committed in a local sources directory.
type Project struct {
	// Sources is the directory for repo.WithLocalSources.
	Sources string
	// Repo is "owner/name".
	Repo string
	// Base is the commit every row starts from.
	Base string
}

// NewProject commits the test project with go-git, with a fixed signature
// so its commit id never changes.
func NewProject(t testing.TB) Project {
	t.Helper()
	p := Project{Sources: t.TempDir(), Repo: "swebox-test/calc"}
	p.Base = CommitFiles(t, filepath.Join(p.Sources, "swebox-test__calc"), projectFiles)
	return p
}

// CommitFiles makes dir a git repository of one commit holding files
// (path → content), committed with go-git under a fixed signature so that
// the same files always give the same commit id, which it returns.
func CommitFiles(t testing.TB, dir string, files map[string]string) string {
	t.Helper()
	r, err := git.PlainInit(dir, false)
	require.NoError(t, err)
	wt, err := r.Worktree()
	require.NoError(t, err)
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		path := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, []byte(files[name]), 0o644))
		_, err := wt.Add(name)
		require.NoError(t, err)
	}
	sig := &object.Signature{Name: "swebox", Email: "test@swebox.invalid", When: time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)}
	h, err := wt.Commit("base", &git.CommitOptions{Author: sig, Committer: sig})
	require.NoError(t, err)
	return h.String()
}

// Instance is a dataset row of the project.
func (p Project) Instance(id string) dataset.Instance {
	return dataset.Instance{
		Repo: p.Repo, InstanceID: id, BaseCommit: p.Base, Version: "1.0",
		Patch: Gold, TestPatch: TestPatch, FailToPass: FailToPass, PassToPass: PassToPass,
	}
}

// Cache is a repository cache over the project's sources.
func (p Project) Cache(t testing.TB) *repo.Cache {
	t.Helper()
	rc, err := repo.New(repo.WithLocalSources(p.Sources), repo.WithCacheDir(t.TempDir()))
	require.NoError(t, err)
	return rc
}

// Model is the model name of the predictions Pred makes.
const Model = "org/model"

// Pred is a prediction of Model.
func Pred(id, patch string) dataset.Prediction {
	return dataset.Prediction{InstanceID: id, ModelNameOrPath: Model, ModelPatch: &patch}
}

// Config is an evaluation of the project in workspace mode on c, with
// small limits so hostile predictions end fast, every directory a fresh
// temporary one.
func (p Project) Config(t testing.TB, c *sandbox.Client, runID string, ds []dataset.Instance, preds []dataset.Prediction) swebench.Config {
	t.Helper()
	return swebench.Config{
		Dataset: ds, Predictions: preds, RunID: runID,
		Image: testenv.Image(), Repos: p.Cache(t), Sandboxes: []*sandbox.Client{c},
		LogDir: filepath.Join(t.TempDir(), "logs"), ReportDir: t.TempDir(), WorkDir: t.TempDir(),
		Timeout: 20 * time.Second, MaxWorkers: 4,
		Limits:          testenv.SmallLimits,
		TestOutputLimit: 1 << 20,
	}
}

// ByID indexes a result's instances.
func ByID(res *swebench.Result) map[string]swebench.InstanceResult {
	m := map[string]swebench.InstanceResult{}
	if res == nil {
		return m
	}
	for _, r := range res.Instances {
		m[r.InstanceID] = r
	}
	return m
}

// InstanceDir is an instance's official log directory under a config's
// LogDir, for Model.
func InstanceDir(cfg swebench.Config, id string) string {
	return filepath.Join(cfg.LogDir, "run_evaluation", cfg.RunID, "org__model", id)
}

// ReadFile reads a file of an instance's log directory; "" when absent.
func ReadFile(t testing.TB, cfg swebench.Config, id, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(InstanceDir(cfg, id), name))
	if os.IsNotExist(err) {
		return ""
	}
	require.NoError(t, err)
	return string(b)
}
