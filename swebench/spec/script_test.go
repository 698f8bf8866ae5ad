package spec

import (
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/swebench/dataset"
	"github.com/swebox/swebox/swebench/harness"
)

var update = flag.Bool("update", false, "rewrite golden files")

// fromPublished recovers the instance fields a published eval.sh carries:
// base commit (from the diff line) and test patch (from the heredoc; the
// script adds one "\n" after the patch).
func fromPublished(t *testing.T, script string) (base, testPatch string) {
	t.Helper()
	m := regexp.MustCompile(`(?m)^git (?:-c core.fileMode=false )?diff ([0-9a-f]{40})$`).FindStringSubmatch(script)
	require.NotNil(t, m)
	start := strings.Index(script, "<<'EOF_114329324912'\n")
	end := strings.Index(script, "\nEOF_114329324912\n")
	require.True(t, start > 0 && end > start)
	return m[1], script[start+len("<<'EOF_114329324912'\n") : end]
}

func TestPublishedEvalScripts(t *testing.T) {
	type testCase struct {
		name, file, repo, version string
		// adapt turns a published script of an older harness into its
		// v4.1.0 form (documented in testdata/published/README.md).
		adapt func(string) string
	}
	tests := []testCase{
		{name: "astroid v4 era", file: "pylint-dev__astroid-1268.eval.sh", repo: "pylint-dev/astroid", version: "2.9"},
		{
			name: "django harness 2.x", file: "django-3.x-uuid-default.harness2.eval.sh", repo: "django/django", version: "3.1",
			adapt: func(s string) string {
				s = regexp.MustCompile(`(?m)^git diff `).ReplaceAllString(s, "git -c core.fileMode=false diff ")
				s = regexp.MustCompile(`(?m)^(\./tests/runtests\.py .*)$`).ReplaceAllString(s, ": '>>>>> Start Test Output'\n$1\n: '>>>>> End Test Output'")
				return s
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join("testdata", "published", tc.file))
			require.NoError(t, err)
			want := string(raw)
			if tc.adapt != nil {
				want = tc.adapt(want)
			}
			base, testPatch := fromPublished(t, want)
			s, err := For(dataset.Instance{InstanceID: "x__y-1", Repo: tc.repo, Version: tc.version, BaseCommit: base, TestPatch: testPatch})
			require.NoError(t, err)
			assert.Equal(t, SourceOfficial, s.Source)
			assert.Equal(t, want, s.EvalScript(ScriptOptions{NoExitCode: true}))
		})
	}
}

const base = "0123456789abcdef0123456789abcdef01234567"

const djangoPatch = `diff --git a/tests/admin_views/tests.py b/tests/admin_views/tests.py
--- a/tests/admin_views/tests.py
+++ b/tests/admin_views/tests.py
@@ -1,3 +1,4 @@
 import os
+import re
 
 x = 1
diff --git a/tests/admin_views/fixtures/new.json b/tests/admin_views/fixtures/new.json
new file mode 100644
--- /dev/null
+++ b/tests/admin_views/fixtures/new.json
@@ -0,0 +1 @@
+[]
`

func TestEvalScriptGolden(t *testing.T) {
	type testCase struct {
		name string
		inst dataset.Instance
		opts []Option
		so   ScriptOptions
	}
	tests := []testCase{
		{name: "django-3.0-conda", inst: dataset.Instance{InstanceID: "django__django-1", Repo: "django/django", Version: "3.0", BaseCommit: base, TestPatch: djangoPatch}},
		{name: "django-3.0-v4", inst: dataset.Instance{InstanceID: "django__django-1", Repo: "django/django", Version: "3.0", BaseCommit: base, TestPatch: djangoPatch}, so: ScriptOptions{NoExitCode: true}},
		{name: "sympy-1.12-workspace", inst: dataset.Instance{InstanceID: "sympy__sympy-1", Repo: "sympy/sympy", Version: "1.12", BaseCommit: base,
			TestPatch: "diff --git a/sympy/core/tests/test_basic.py b/sympy/core/tests/test_basic.py\n--- a/sympy/core/tests/test_basic.py\n+++ b/sympy/core/tests/test_basic.py\n@@ -1 +1,2 @@\n x\n+y\n"},
			opts: []Option{WithMode(harness.ModeWorkspace)}, so: ScriptOptions{SkipInstall: true}},
		{name: "unknown-repo-new-files-only", inst: dataset.Instance{InstanceID: "acme__w-1", Repo: "acme/w", Version: "1", BaseCommit: base,
			TestPatch: "diff --git a/tests/test_new.py b/tests/test_new.py\nnew file mode 100644\n--- /dev/null\n+++ b/tests/test_new.py\n@@ -0,0 +1 @@\n+def test_a(): pass\n"},
			opts: []Option{WithMode(harness.ModeWorkspace)}},
		{name: "common-go-with-build", inst: dataset.Instance{InstanceID: "gin__gin-1", Repo: "gin-gonic/gin", Version: "1.9", BaseCommit: base,
			TestPatch: "diff --git a/context_test.go b/context_test.go\n--- a/context_test.go\n+++ b/context_test.go\n@@ -1 +1,2 @@\n package gin\n+// x\n"},
			opts: []Option{WithMode(harness.ModeWorkspace), WithOverrides(mustOverrides(`{"gin-gonic/gin": {"script": "common", "directives": "none", "test_cmd": "go test -v ./...", "parser": "gotest", "build": ["go build ./..."]}}`))}},
		{name: "common-new-files-only", inst: dataset.Instance{InstanceID: "gin__gin-2", Repo: "gin-gonic/gin", Version: "1.9", BaseCommit: base,
			TestPatch: "diff --git a/new_test.go b/new_test.go\nnew file mode 100644\n--- /dev/null\n+++ b/new_test.go\n@@ -0,0 +1 @@\n+package gin\n"},
			opts: []Option{WithMode(harness.ModeWorkspace), WithOverrides(mustOverrides(`{"gin-gonic/gin": {"script": "common", "directives": "none", "test_cmd": "go test -v ./...", "parser": "gotest"}}`))},
			so:   ScriptOptions{NoExitCode: true}},
		{name: "v5-dataset-script", inst: dataset.Instance{InstanceID: "o__p-1", Repo: "o/p", Version: "1.0", BaseCommit: base,
			EvalScript: "#!/bin/bash\nset -uxo pipefail\ncd /testbed\n: '>>>>> Start Test Output'\npytest -rA t.py\n: '>>>>> End Test Output'\ngit checkout " + base + " t.py\n\n"},
			so: ScriptOptions{BeforeTestOutput: []string{"cp /assets/a.png tests/a.png"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := For(tc.inst, tc.opts...)
			require.NoError(t, err)
			got := s.EvalScript(tc.so)
			golden := filepath.Join("testdata", tc.name+".eval.sh")
			if *update {
				require.NoError(t, os.WriteFile(golden, []byte(got), 0o644))
			}
			want, err := os.ReadFile(golden)
			require.NoError(t, err)
			assert.Equal(t, string(want), got)
			bashSyntax(t, got)
		})
	}
}

// bashSyntax checks a script with bash -n when bash is installed.
func bashSyntax(t *testing.T, script string) {
	t.Helper()
	bash, err := exec.LookPath("bash")
	if err != nil {
		return
	}
	cmd := exec.Command(bash, "-n")
	cmd.Stdin = strings.NewReader(script)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "bash -n: %s", out)
}

func TestEvalScriptExitCodeLines(t *testing.T) {
	s, err := For(dataset.Instance{InstanceID: "a__b-1", Repo: "pallets/flask", Version: "2.0", BaseCommit: base, TestPatch: djangoPatch})
	require.NoError(t, err)
	v4 := s.EvalScript(ScriptOptions{NoExitCode: true})
	v5 := s.EvalScript(ScriptOptions{})
	// The v5 form is the v4 form plus exactly the two exit-code lines.
	assert.Equal(t, v4, strings.Replace(strings.Replace(v5, "SWEBENCH_TEST_EXIT_CODE=$?\n", "", 1),
		"echo \">>>>> Test Exit Code: $SWEBENCH_TEST_EXIT_CODE\"\n", "", 1))
	assert.Contains(t, v5, "pytest -rA tests/admin_views/tests.py\nSWEBENCH_TEST_EXIT_CODE=$?\n: '>>>>> End Test Output'\necho \">>>>> Test Exit Code: $SWEBENCH_TEST_EXIT_CODE\"\ngit checkout ")
}

func TestDatasetScriptParsing(t *testing.T) {
	type testCase struct {
		name, script, want string
		so                 ScriptOptions
	}
	tests := []testCase{
		{
			name:   "header dropped anywhere, surrounding space stripped",
			script: "\n  #!/bin/bash\nset -uxo pipefail\necho a\nset -uxo pipefail\n: '>>>>> End Test Output'\n \x1c",
			want:   "#!/bin/bash\nset -uxo pipefail\necho a\nSWEBENCH_TEST_EXIT_CODE=$?\n: '>>>>> End Test Output'\necho \">>>>> Test Exit Code: $SWEBENCH_TEST_EXIT_CODE\"\n",
		},
		{
			name:   "no end marker: untouched",
			script: "#!/bin/bash\necho hi",
			want:   "#!/bin/bash\nset -uxo pipefail\necho hi\n",
		},
		{
			name:   "only the first end marker line",
			script: "x '>>>>> End Test Output'\ny '>>>>> End Test Output'",
			want:   "#!/bin/bash\nset -uxo pipefail\nSWEBENCH_TEST_EXIT_CODE=$?\nx '>>>>> End Test Output'\necho \">>>>> Test Exit Code: $SWEBENCH_TEST_EXIT_CODE\"\ny '>>>>> End Test Output'\n",
		},
		{
			name:   "asset restore without start marker goes last",
			script: "echo a",
			so:     ScriptOptions{NoExitCode: true, BeforeTestOutput: []string{"restore"}},
			want:   "#!/bin/bash\nset -uxo pipefail\necho a\n\nrestore",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := TestSpec{DatasetScript: tc.script}
			assert.Equal(t, tc.want, s.EvalScript(tc.so))
		})
	}
}

func TestQuoteUnsafePaths(t *testing.T) {
	patch := "diff --git a/tests/a b.py b/tests/a b.py\n--- a/tests/a b.py\n+++ b/tests/a b.py\n@@ -1 +1 @@\n" +
		"diff --git a/tests/it's;x.py b/tests/it's;x.py\n--- a/tests/it's;x.py\n+++ b/tests/it's;x.py\n@@ -1 +1 @@\n" +
		"diff --git a/tests/ok-1.py b/tests/ok-1.py\n--- a/tests/ok-1.py\n+++ b/tests/ok-1.py\n@@ -1 +1 @@\n"
	s, err := For(dataset.Instance{InstanceID: "a__b-1", Repo: "a/b", BaseCommit: base, TestPatch: patch})
	require.NoError(t, err)
	assert.Len(t, s.Notes, 4) // two files, two directives
	plain := s.EvalScript(ScriptOptions{})
	assert.Contains(t, plain, "git checkout "+base+" tests/a b.py tests/it's;x.py tests/ok-1.py\n")
	quoted := s.EvalScript(ScriptOptions{QuoteUnsafePaths: true})
	assert.Contains(t, quoted, "git checkout "+base+" 'tests/a b.py' 'tests/it'\\''s;x.py' tests/ok-1.py\n")
	assert.Contains(t, quoted, "pytest -rA 'tests/a b.py' 'tests/it'\\''s;x.py' tests/ok-1.py\n")
	bashSyntax(t, quoted)

	// Safe paths: identical scripts.
	s, err = For(dataset.Instance{InstanceID: "a__b-1", Repo: "django/django", Version: "3.0", BaseCommit: base, TestPatch: djangoPatch})
	require.NoError(t, err)
	assert.Empty(t, s.Notes)
	assert.Equal(t, s.EvalScript(ScriptOptions{}), s.EvalScript(ScriptOptions{QuoteUnsafePaths: true}))

	_, err = For(dataset.Instance{InstanceID: "a__b-1", Repo: "a/b", BaseCommit: "HEAD; rm -rf /"})
	assert.Error(t, err)
}

func mustOverrides(content string) *Overrides {
	dir, err := os.MkdirTemp("", "ov")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	p := filepath.Join(dir, "ov.json")
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		panic(err)
	}
	o, err := LoadOverrides(p)
	if err != nil {
		panic(err)
	}
	return o
}
