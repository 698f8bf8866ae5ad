package spec

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/internal/cienv"
	"github.com/swebox/swebox/swebench/dataset"
	"github.com/swebox/swebox/swebench/harness"
)

func testImage() string {
	if img := os.Getenv("SWEBOX_TEST_IMAGE"); img != "" {
		return img
	}
	return "swebox/python:bookworm"
}

// needDocker skips unless the docker CLI, an engine and the test image are
// available.
func needDocker(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("skipping container test in -short mode")
	}
	if _, err := exec.LookPath("docker"); err != nil {
		cienv.Skip(t, "docker CLI not installed")
	}
	img := testImage()
	if out, err := exec.Command("docker", "image", "inspect", "--format", "{{.Id}}", img).CombinedOutput(); err != nil {
		cienv.Skip(t, "no docker engine or no image %s: %s", img, bytes.TrimSpace(out))
	}
	return img
}

func run(t *testing.T, dir string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s %v: %s", name, args, out)
	return string(out)
}

const (
	calcBase = "def add(a, b):\n    return a - b\n\n\ndef sub(a, b):\n    return a - b\n"
	testBase = "from calc import add, sub\n\n\ndef test_sub():\n    assert sub(3, 1) == 2\n"
	// goldPatch fixes add.
	goldPatch = "diff --git a/calc.py b/calc.py\n--- a/calc.py\n+++ b/calc.py\n@@ -1,5 +1,5 @@\n def add(a, b):\n-    return a - b\n+    return a + b\n \n \n def sub(a, b):\n"
	// suiteTestPatch adds test_add to the existing file and a new test file.
	suiteTestPatch = "diff --git a/tests/test_calc.py b/tests/test_calc.py\n--- a/tests/test_calc.py\n+++ b/tests/test_calc.py\n@@ -3,3 +3,7 @@ from calc import add, sub\n \n def test_sub():\n     assert sub(3, 1) == 2\n+\n+\n+def test_add():\n+    assert add(1, 2) == 3\n" +
		"diff --git a/tests/test_new.py b/tests/test_new.py\nnew file mode 100644\n--- /dev/null\n+++ b/tests/test_new.py\n@@ -0,0 +1,2 @@\n+def test_new():\n+    pass\n"
)

// TestEvalScriptInContainer applies patches with the official v4 commands
// and runs a generated eval.sh with bash in the project's test image against
// a small git repository, checking the markers, the parsed outcome lines,
// the exit-code line and the reset of the test files.
func TestEvalScriptInContainer(t *testing.T) {
	img := needDocker(t)
	type testCase struct {
		name     string
		patch    string
		wantLine string
		wantExit string
		wantAdd  string // calc.py's add body after the run
	}
	tests := []testCase{
		{name: "gold patch", patch: goldPatch, wantLine: "PASSED tests/test_calc.py::test_add", wantExit: ">>>>> Test Exit Code: 0", wantAdd: "return a + b"},
		{name: "no patch", patch: "", wantLine: "FAILED tests/test_calc.py::test_add", wantExit: ">>>>> Test Exit Code: 1", wantAdd: "return a - b"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			repo := filepath.Join(root, "testbed")
			require.NoError(t, os.MkdirAll(filepath.Join(repo, "tests"), 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(repo, "calc.py"), []byte(calcBase), 0o644))
			require.NoError(t, os.WriteFile(filepath.Join(repo, "tests", "test_calc.py"), []byte(testBase), 0o644))
			require.NoError(t, os.WriteFile(filepath.Join(repo, "conftest.py"), []byte(""), 0o644))
			run(t, repo, "git", "init", "-q")
			run(t, repo, "git", "add", "-A")
			run(t, repo, "git", "commit", "-qm", "base")
			baseCommit := strings.TrimSpace(run(t, repo, "git", "rev-parse", "HEAD"))

			s, err := For(dataset.Instance{InstanceID: "calc__calc-1", Repo: "calc/calc", Version: "1.0", BaseCommit: baseCommit, TestPatch: suiteTestPatch},
				WithMode(harness.ModeWorkspace), WithDefaultImage(img))
			require.NoError(t, err)
			require.Equal(t, []string{"tests/test_calc.py"}, s.TestFiles)
			script := s.EvalScript(ScriptOptions{})
			require.NoError(t, os.WriteFile(filepath.Join(root, "eval.sh"), []byte(script), 0o644))
			require.NoError(t, os.WriteFile(filepath.Join(root, "patch.diff"), []byte(tc.patch), 0o644))
			run(t, root, "chmod", "-R", "a+rwX", root)

			attempts, err := PatchCommands(harness.V4, "/patch/patch.diff")
			require.NoError(t, err)
			var steps []string
			if tc.patch != "" {
				var alts []string
				for _, argv := range attempts {
					alts = append(alts, strings.Join(argv, " "))
				}
				steps = append(steps, "("+strings.Join(alts, " || ")+")")
			}
			steps = append(steps, "bash /eval.sh")
			out := run(t, root, "docker", "run", "--rm", "--network", "none", "--user", "1000:1000",
				"--label", "swebox.test=spec", "-e", "HOME=/tmp",
				"-v", repo+":/testbed", "-v", filepath.Join(root, "eval.sh")+":/eval.sh:ro",
				"-v", filepath.Join(root, "patch.diff")+":/patch/patch.diff:ro",
				"-w", "/testbed", img, "bash", "-c", strings.Join(steps, " && "))

			start := strings.Index(out, "+ : '>>>>> Start Test Output'")
			end := strings.Index(out, "+ : '>>>>> End Test Output'")
			require.True(t, start >= 0 && end > start, out)
			assert.Contains(t, out[start:end], tc.wantLine)
			assert.Contains(t, out[start:end], "PASSED tests/test_calc.py::test_sub")
			assert.Contains(t, out[start:end], "PASSED tests/test_new.py::test_new")
			// stdout and stderr (the xtrace lines) reach us on separate
			// streams, so the echoed line need not follow the marker here.
			assert.Regexp(t, "(?m)^"+regexp.QuoteMeta(tc.wantExit)+"$", out)

			// The test file is reset to base_commit after the run; the model
			// patch stays.
			got, err := os.ReadFile(filepath.Join(repo, "tests", "test_calc.py"))
			require.NoError(t, err)
			assert.Equal(t, testBase, string(got))
			calc, err := os.ReadFile(filepath.Join(repo, "calc.py"))
			require.NoError(t, err)
			assert.Contains(t, string(calc), tc.wantAdd)
		})
	}
}
