package spec

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/swebench/dataset"
	"github.com/swebox/swebox/swebench/harness"
)

func TestDirectives(t *testing.T) {
	type testCase struct {
		name  string
		patch string
		style DirectiveStyle
		want  []string
	}
	tests := []testCase{
		{name: "files", style: DirectivesFiles,
			patch: "diff --git a/tests/test_a.py b/tests/test_a.py\nindex 1..2\ndiff --git a/src/x.py b/src/x.py\n",
			want:  []string{"tests/test_a.py", "src/x.py"}},
		{name: "non-test extensions dropped", style: DirectivesFiles,
			patch: "diff --git a/a.json b/a.json\ndiff --git a/b.png b/b.png\ndiff --git a/data.csv b/data.csv\ndiff --git a/notacsv b/notacsv\n" +
				"diff --git a/r.txt b/r.txt\ndiff --git a/R.md b/R.md\ndiff --git a/p.pkl b/p.pkl\ndiff --git a/c.yml b/c.yml\n" +
				"diff --git a/c.yaml b/c.yaml\ndiff --git a/pyproject.toml b/pyproject.toml\ndiff --git a/i.jpeg b/i.jpeg\ndiff --git a/t.rst b/t.rst\n",
			want: []string{"t.rst"}},
		{name: "django dotted modules", style: DirectivesDjango,
			patch: "diff --git a/tests/admin_views/tests.py b/tests/admin_views/tests.py\ndiff --git a/django/test/utils.py b/django/test/utils.py\ndiff --git a/tests/templates/x.html b/tests/templates/x.html\n",
			want:  []string{"admin_views.tests", "django.test.utils", "templates.x.html"}},
		{name: "match inside a line, greedy b/", style: DirectivesFiles,
			patch: "+    text = 'diff --git a/foo b/bar'\ndiff --git a/x b/y b/z.py\n",
			want:  []string{"bar'", "z.py"}},
		{name: "none", style: DirectivesNone, patch: "diff --git a/t.py b/t.py\n"},
		{name: "humaneval", style: directivesHumanEval, patch: "", want: []string{"test.py"}},
		{name: "renamed file uses new path", style: DirectivesFiles,
			patch: "diff --git a/tests/old.py b/tests/new.py\nsimilarity index 100%\nrename from tests/old.py\nrename to tests/new.py\n",
			want:  []string{"tests/new.py"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, Directives(tc.patch, tc.style))
		})
	}
}

func TestModifiedFiles(t *testing.T) {
	type testCase struct {
		name, patch string
		want        []string
	}
	tests := []testCase{
		{name: "modified and new", patch: djangoPatch, want: []string{"tests/admin_views/tests.py"}},
		{name: "deleted file is reset", patch: "diff --git a/t/old.py b/t/old.py\ndeleted file mode 100644\n--- a/t/old.py\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n", want: []string{"t/old.py"}},
		{name: "new file without --- line", patch: "diff --git a/t/e.py b/t/e.py\nnew file mode 100644\nindex 0000000..e69de29\n", want: nil},
		{name: "rename keeps source", patch: "diff --git a/t/a.py b/t/b.py\nsimilarity index 90%\nrename from t/a.py\nrename to t/b.py\n--- a/t/a.py\n+++ b/t/b.py\n@@ -1 +1 @@\n-x\n+y\n", want: []string{"t/a.py"}},
		{name: "removed line that looks like a header", patch: "diff --git a/t/x.py b/t/x.py\n--- a/t/x.py\n+++ b/t/x.py\n@@ -1,2 +1 @@\n--- /dev/null\n x\ndiff --git a/t/y.py b/t/y.py\n--- a/t/y.py\n+++ b/t/y.py\n", want: []string{"t/x.py", "t/y.py"}},
		{name: "timestamp after tab", patch: "diff --git a/t/x.py b/t/x.py\n--- a/t/x.py\t2020-01-01 00:00:00\n+++ b/t/x.py\t2020-01-01\n@@ -1 +1 @@\n", want: []string{"t/x.py"}},
		{name: "CRLF", patch: "diff --git a/t/x.py b/t/x.py\r\n--- a/t/x.py\r\n+++ b/t/x.py\r\n@@ -1 +1 @@\r\n", want: []string{"t/x.py"}},
		{name: "binary", patch: "diff --git a/t/i.png b/t/i.png\nindex 1..2 100644\nBinary files a/t/i.png and b/t/i.png differ\n", want: []string{"t/i.png"}},
		{name: "empty", patch: "", want: nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, ModifiedFiles(tc.patch))
		})
	}
}

func inst(repo, version string) dataset.Instance {
	return dataset.Instance{InstanceID: "owner__repo-1", Repo: repo, Version: version, BaseCommit: base,
		TestPatch: "diff --git a/tests/test_x.py b/tests/test_x.py\n--- a/tests/test_x.py\n+++ b/tests/test_x.py\n@@ -1 +1 @@\n"}
}

func TestForOfficialTables(t *testing.T) {
	type testCase struct {
		repo, version string
		cmd, parser   string
		install       string
		source        Source
		evalCmds      int
		nanoCPUs      int64
	}
	tests := []testCase{
		{"django/django", "1.9", "./tests/runtests.py --verbosity 2 test_x", harness.ParserDjango, "python setup.py install", SourceOfficial, 4, 0},
		{"django/django", "4.2", "./tests/runtests.py --verbosity 2 --settings=test_sqlite --parallel 1 test_x", harness.ParserDjango, "python -m pip install -e .", SourceOfficial, 0, 0},
		{"astropy/astropy", "1.3", "pytest -rA -vv -o console_output_style=classic --tb=no tests/test_x.py", harness.ParserPytestV2, "python -m pip install -e .[test] --verbose", SourceOfficial, 0, 0},
		{"astropy/astropy", "v5.3", "pytest -rA tests/test_x.py", harness.ParserPytestV2, "python -m pip install -e .[test] --verbose", SourceOfficial, 0, 0},
		{"sympy/sympy", "1.1", "PYTHONWARNINGS='ignore::UserWarning,ignore::SyntaxWarning' bin/test -C --verbose tests/test_x.py", harness.ParserSympy, "python -m pip install -e .", SourceOfficial, 0, 0},
		{"mwaskom/seaborn", "0.12", "pytest --no-header -rA tests/test_x.py", harness.ParserSeaborn, "python -m pip install -e .[dev]", SourceOfficial, 0, 0},
		{"sphinx-doc/sphinx", "7.1", "tox --current-env -epy39 -v -- tests/test_x.py", harness.ParserPytestV2, "python -m pip install -e .[test]", SourceOfficial, 0, 0},
		{"matplotlib/matplotlib", "3.9", "pytest -rA tests/test_x.py", harness.ParserMatplotlib, `python -m pip install --no-build-isolation -e ".[dev]"`, SourceOfficial, 0, 0},
		{"psf/requests", "2.0", "pytest -rA tests/test_x.py", harness.ParserPytestOptions, "python -m pip install .", SourceOfficial, 0, 0},
		{"pylint-dev/pylint", "2.15", "pytest -rA tests/test_x.py", harness.ParserPytestOptions, "python -m pip install -e .", SourceOfficial, 0, 2e9},
		{"scikit-learn/scikit-learn", "0.22", "pytest -rA tests/test_x.py", harness.ParserPytestV2, "python -m pip install -v --no-use-pep517 --no-build-isolation -e .", SourceOfficial, 0, 0},
		{"pydata/xarray", "2022.03", "pytest -rA tests/test_x.py", harness.ParserPytest, "python -m pip install -e .", SourceOfficial, 0, 0},
		{"pallets/flask", "9.9", "pytest -rA tests/test_x.py", harness.ParserPytest, "python -m pip install -e .", SourceRepoFallback, 0, 0},
		{"acme/widgets", "1.0", "pytest -rA tests/test_x.py", harness.ParserPytest, "", SourceDefault, 0, 0},
		{"swe-bench/humaneval", "1.0", "python test.py", "", "", SourceOfficial, 0, 0},
	}
	for _, tc := range tests {
		t.Run(tc.repo+"@"+tc.version, func(t *testing.T) {
			s, err := For(inst(tc.repo, tc.version))
			require.NoError(t, err)
			assert.Equal(t, tc.cmd, s.TestCommand())
			assert.Equal(t, tc.parser, s.Parser)
			assert.Equal(t, tc.install, s.Install)
			assert.Equal(t, tc.source, s.Source)
			assert.Len(t, s.EvalCommands, tc.evalCmds)
			assert.Equal(t, tc.nanoCPUs, s.NanoCPUs)
			assert.Equal(t, dataset.EvalTypePassAndFail, s.EvalType)
			assert.Equal(t, []string{"tests/test_x.py"}, s.TestFiles)
			if tc.source == SourceRepoFallback {
				require.Len(t, s.Notes, 1)
				assert.Contains(t, s.Notes[0], "KeyError")
			}
		})
	}
}

func TestTablesAreComplete(t *testing.T) {
	// Every official Python repository is present with a parser (humaneval
	// excepted) and a test command for every version.
	want := []string{"astropy/astropy", "django/django", "marshmallow-code/marshmallow", "matplotlib/matplotlib",
		"mwaskom/seaborn", "pallets/flask", "psf/requests", "pvlib/pvlib-python", "pydata/xarray", "pydicom/pydicom",
		"pylint-dev/astroid", "pylint-dev/pylint", "pytest-dev/pytest", "pyvista/pyvista", "scikit-learn/scikit-learn",
		"sphinx-doc/sphinx", "sqlfluff/sqlfluff", "swe-bench/humaneval", "sympy/sympy"}
	assert.Equal(t, want, Repos())
	for _, r := range Repos() {
		tb := tables[r]
		_, ok := tb.versions[tb.latest]
		assert.True(t, ok, "%s: latest %s not in table", r, tb.latest)
		for _, v := range Versions(r) {
			assert.NotEmpty(t, tb.versions[v].testCmd, "%s %s", r, v)
			assert.NotEmpty(t, tb.versions[v].python, "%s %s", r, v)
		}
		s, err := For(inst(r, tb.latest))
		require.NoError(t, err)
		if r != "swe-bench/humaneval" {
			assert.NotEmpty(t, s.Parser, r)
		} else {
			assert.Empty(t, s.Parser, "the official table has no parser for humaneval")
		}
	}
	assert.Len(t, Versions("sphinx-doc/sphinx"), 34)
	assert.Nil(t, Versions("nope/nope"))
	// Spot checks of the sphinx pre_install composition.
	s41, _ := For(inst("sphinx-doc/sphinx", "4.1"))
	assert.Len(t, s41.PreInstall, 1+6+2)
	assert.Contains(t, s41.PreInstall[7], "grep -q 'sphinxcontrib-htmlhelp>=2.0.0'")
	s74, _ := For(inst("sphinx-doc/sphinx", "7.4"))
	assert.Equal(t, []string{"sed -i 's/pytest/pytest -rA/' tox.ini", "apt-get update && apt-get install -y graphviz"}, s74.PreInstall)
	assert.Equal(t, "3.9", s74.Python)
	s80, _ := For(inst("sphinx-doc/sphinx", "8.0"))
	assert.Equal(t, "3.10", s80.Python)
}

func TestForInstanceFields(t *testing.T) {
	in := inst("pallets/flask", "2.0")
	in.EvalScript = "#!/bin/bash\necho custom\n"
	in.LogParser = "jest"
	in.EvalType = dataset.EvalTypeFailOnly
	in.Image = "example/img:1"
	s, err := For(in)
	require.NoError(t, err)
	assert.Equal(t, SourceInstance, s.Source)
	assert.Equal(t, "jest", s.Parser)
	assert.Equal(t, dataset.EvalTypeFailOnly, s.EvalType)
	assert.Equal(t, "example/img:1", s.Image)
	assert.Equal(t, "#!/bin/bash\nset -uxo pipefail\necho custom\n", s.EvalScript(ScriptOptions{}))
}

func TestForImages(t *testing.T) {
	dir := t.TempDir()
	ovPath := writeTemp(t, dir, "ov.json", `{"acme/w": {"image": "ov/repo:1"}, "acme/w:2.0": {"image": "ov/ver:1"}, "acme/v:1.0": {"image": "ov/v10:1"}}`)
	ov, err := LoadOverrides(ovPath)
	require.NoError(t, err)
	im, err := NewImageMap(map[string]string{"acme/w": "map/repo:1", "acme/w:3.0": "map/ver:1", "acme/u": "map/u:1"})
	require.NoError(t, err)
	ws := []Option{WithMode(harness.ModeWorkspace), WithImages(im), WithOverrides(ov), WithDefaultImage("swebox/python:bookworm")}
	type testCase struct {
		name string
		id   string
		repo string
		ver  string
		opts []Option
		want string
	}
	tests := []testCase{
		{name: "official remote name", id: "django__django-11099", repo: "django/django", ver: "3.0", want: "swebench/sweb.eval.x86_64.django_1776_django-11099:latest"},
		{name: "uppercase id lowered", id: "Foo__Bar-1", repo: "foo/bar", ver: "1", opts: []Option{WithTag("v2")}, want: "swebench/sweb.eval.x86_64.foo_1776_bar-1:v2"},
		{name: "namespace with __ is rewritten too", id: "a__b-1", repo: "a/b", opts: []Option{WithNamespace("my__ns")}, want: "my_1776_ns/sweb.eval.x86_64.a_1776_b-1:latest"},
		{name: "local build name keeps __", id: "a__b-1", repo: "a/b", opts: []Option{WithNamespace("")}, want: "sweb.eval.x86_64.a__b-1:latest"},
		{name: "map version beats override repo", id: "x", repo: "acme/w", ver: "3.0", opts: ws, want: "map/ver:1"},
		{name: "override version beats map repo", id: "x", repo: "acme/w", ver: "2.0", opts: ws, want: "ov/ver:1"},
		{name: "map repo beats override repo", id: "x", repo: "acme/w", ver: "9", opts: ws, want: "map/repo:1"},
		{name: "override version only", id: "x", repo: "acme/v", ver: "1.0", opts: ws, want: "ov/v10:1"},
		{name: "override version does not cover other versions", id: "x", repo: "acme/v", ver: "1.1", opts: ws, want: "swebox/python:bookworm"},
		{name: "map repo", id: "x", repo: "acme/u", ver: "1", opts: ws, want: "map/u:1"},
		{name: "no image known", id: "x", repo: "acme/z", ver: "1", opts: []Option{WithMode(harness.ModeWorkspace)}, want: ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := For(dataset.Instance{InstanceID: tc.id, Repo: tc.repo, Version: tc.ver, BaseCommit: base}, tc.opts...)
			require.NoError(t, err)
			assert.Equal(t, tc.want, s.Image)
		})
	}
}

func TestForModesAndRules(t *testing.T) {
	s, err := For(inst("django/django", "3.0"))
	require.NoError(t, err)
	assert.True(t, s.Conda)
	s, err = For(inst("django/django", "3.0"), WithMode(harness.ModeWorkspace))
	require.NoError(t, err)
	assert.False(t, s.Conda)
	s, err = For(inst("django/django", "3.0"), WithMode(harness.ModeWorkspace), WithConda(true))
	require.NoError(t, err)
	assert.True(t, s.Conda)

	type testCase struct {
		repo  string
		rules harness.Rules
		want  string
	}
	for _, tc := range []testCase{
		{"chartjs/Chart.js", harness.V4, dataset.EvalTypeFailOnly},
		{"eslint/eslint", harness.V4, dataset.EvalTypePassAndFail},
		{"eslint/eslint", harness.V5, dataset.EvalTypeFailOnly},
		{"pallets/flask", harness.V5, dataset.EvalTypePassAndFail},
	} {
		s, err := For(inst(tc.repo, "1.0"), WithRules(tc.rules))
		require.NoError(t, err)
		assert.Equal(t, tc.want, s.EvalType, tc.repo+" "+string(tc.rules))
	}

	for _, bad := range []Option{WithMode("x"), WithRules("v3"), WithTag(""), WithTag("a:b"), WithNamespace("a b"), WithDefaultImage("a b")} {
		_, err := For(inst("a/b", "1"), bad)
		assert.Error(t, err)
	}
	_, err = For(dataset.Instance{InstanceID: "x", Repo: "a/b"})
	assert.ErrorIs(t, err, ErrNoBaseCommit)
}

func writeTemp(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	return p
}

func TestOverrides(t *testing.T) {
	path := writeTemp(t, t.TempDir(), "ov.json", `{
  "acme/w": {
    "test_cmd": "python -m pytest -rA",
    "parser": "pytest_v2",
    "install": "",
    "eval_commands": ["export A=1"],
    "directives": "django"
  },
  "acme/w:2.0": {"test_cmd": "tox --", "eval_type": "fail_only", "directives": "none"},
  "django/django": {"install": "true"}
}`)
	ov, err := LoadOverrides(path)
	require.NoError(t, err)

	in := inst("acme/w", "1.0")
	s, err := For(in, WithOverrides(ov))
	require.NoError(t, err)
	assert.Equal(t, SourceOverride, s.Source)
	assert.Equal(t, "python -m pytest -rA test_x", s.TestCommand())
	assert.Equal(t, "pytest_v2", s.Parser)
	assert.Equal(t, []string{"export A=1"}, s.EvalCommands)

	in = inst("acme/w", "2.0")
	s, err = For(in, WithOverrides(ov))
	require.NoError(t, err)
	assert.Equal(t, "tox --", s.TestCommand())
	assert.Equal(t, "pytest_v2", s.Parser)
	assert.Equal(t, dataset.EvalTypeFailOnly, s.EvalType)

	// An override that sets only install keeps the official test command
	// and source.
	s, err = For(inst("django/django", "3.0"), WithOverrides(ov))
	require.NoError(t, err)
	assert.Equal(t, SourceOfficial, s.Source)
	assert.Equal(t, "true", s.Install)
	assert.Equal(t, harness.ParserDjango, s.Parser)

	// Overrides beat the row's own fields, and say so for eval_script.
	in = inst("acme/w", "1.0")
	in.EvalScript, in.LogParser = "echo", "jest"
	s, err = For(in, WithOverrides(ov))
	require.NoError(t, err)
	assert.Equal(t, "pytest_v2", s.Parser)
	require.Len(t, s.Notes, 1)
	assert.Contains(t, s.Notes[0], "eval_script")

	known := func(n string) bool { return n == "pytest" }
	err = ov.CheckParsers(known)
	var fe *FileError
	require.ErrorAs(t, err, &fe)
	assert.Equal(t, path+`:4: key "acme/w": field "parser": unknown log parser "pytest_v2"`, err.Error())
	assert.NoError(t, ov.CheckParsers(func(string) bool { return true }))
}

func TestLoadOverridesErrors(t *testing.T) {
	type testCase struct {
		name, content, msg string
	}
	tests := []testCase{
		{"unknown field", "{\n \"a/b\": {\n  \"test_cmd\": \"x\",\n  \"tset_cmd\": \"y\"\n }\n}", `FILE:4: key "a/b": field "tset_cmd": unknown field (want test_cmd, parser, install, pre_install, eval_commands, image, eval_type, directives, script or build)`},
		{"wrong type", "{\"a/b\": {\"eval_commands\": \"x\"}}", `FILE:1: key "a/b": field "eval_commands": want a list of strings, got string`},
		{"list of numbers", "{\"a/b\": {\"pre_install\": [1]}}", `FILE:1: key "a/b": field "pre_install": want array: json: cannot unmarshal number into Go value of type string`},
		{"bad key", "{\n\"ab\": {}}", `FILE:2: key "ab": want "owner/name" or "owner/name:version"`},
		{"empty version", "{\"a/b:\": {}}", `FILE:1: key "a/b:": empty or invalid version after ":"`},
		{"entry not an object", "{\"a/b\": 3}", `FILE:1: key "a/b": want a JSON object, got number`},
		{"bad eval_type", "{\"a/b\": {\"eval_type\": \"both\"}}", `FILE:1: key "a/b": field "eval_type": want "pass_and_fail" or "fail_only", got "both"`},
		{"bad directives", "{\"a/b\": {\"directives\": \"dots\"}}", `FILE:1: key "a/b": field "directives": want "files", "django" or "none", got "dots"`},
		{"bad script", "{\"a/b\": {\"script\": \"go\"}}", `FILE:1: key "a/b": field "script": want "python" or "common", got "go"`},
		{"empty test_cmd", "{\"a/b\": {\"test_cmd\": \"\"}}", `FILE:1: key "a/b": field "test_cmd": empty`},
		{"truncated", "{\n\"a/b\": {\"test_cmd\": \"x\"\n", `FILE:2: invalid JSON: unexpected end of JSON input`},
		{"top level list", "[]", `FILE:1: want a JSON object, got array`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := writeTemp(t, t.TempDir(), "ov.json", tc.content)
			_, err := LoadOverrides(path)
			require.ErrorIs(t, err, ErrBadFile)
			assert.Equal(t, strings.ReplaceAll(tc.msg, "FILE", path), err.Error())
		})
	}
}

func TestImageMap(t *testing.T) {
	path := writeTemp(t, t.TempDir(), "images.json", "{\n  \"a/b\": \"img/ab:1\",\n  \"a/b:2.0\": \"img/ab:2\"\n}")
	im, err := LoadImageMap(path)
	require.NoError(t, err)
	assert.Equal(t, 2, im.Len())
	for _, tc := range []struct{ repo, version, want string }{
		{"a/b", "2.0", "img/ab:2"},
		{"a/b", "1.0", "img/ab:1"},
		{"a/b", "", "img/ab:1"},
	} {
		got, ok := im.Lookup(tc.repo, tc.version)
		assert.True(t, ok)
		assert.Equal(t, tc.want, got)
	}
	_, ok := im.Lookup("c/d", "1")
	assert.False(t, ok)
	_, ok = ImageMap{}.Lookup("a/b", "1")
	assert.False(t, ok)

	type testCase struct{ name, content, msg string }
	for _, tc := range []testCase{
		{"number", "{\n\"a/b\": 1}", `FILE:2: key "a/b": want an image name (string), got number`},
		{"space", "{\"a/b\": \"x y\"}", `FILE:1: key "a/b": want an image reference, got "x y"`},
		{"bad key", "{\"a\": \"x\"}", `FILE:1: key "a": want "owner/name" or "owner/name:version"`},
		{"invalid UTF-8", "{\"a/b\": \"\xff\"}", `FILE: not valid UTF-8`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := writeTemp(t, t.TempDir(), "images.json", tc.content)
			_, err := LoadImageMap(p)
			require.ErrorIs(t, err, ErrBadFile)
			assert.Equal(t, strings.ReplaceAll(tc.msg, "FILE", p), err.Error())
		})
	}
	_, err = NewImageMap(map[string]string{"a/b": ""})
	assert.ErrorIs(t, err, ErrBadFile)
}

func TestPatchCommands(t *testing.T) {
	v4, err := PatchCommands(harness.V4, "/tmp/patch.diff")
	require.NoError(t, err)
	assert.Equal(t, [][]string{
		{"git", "apply", "--verbose", "/tmp/patch.diff"},
		{"git", "apply", "--verbose", "--reject", "/tmp/patch.diff"},
		{"patch", "--batch", "--fuzz=5", "-p1", "-i", "/tmp/patch.diff"},
	}, v4)
	v5, err := PatchCommands(harness.V5, ContainerPatchPath)
	require.NoError(t, err)
	assert.Equal(t, [][]string{
		{"git", "apply", "--verbose", "/tmp/patch.diff"},
		{"git", "apply", "--verbose", "--3way", "/tmp/patch.diff"},
		{"git", "apply", "--verbose", "--reject", "/tmp/patch.diff"},
		{"patch", "--batch", "--forward", "--fuzz=5", "-p1", "-i", "/tmp/patch.diff"},
	}, v5)
	assert.Equal(t, [][]string{{"git", "checkout", "--", "."}, {"git", "clean", "-fd"}}, ResetCommands())
	assert.Equal(t, []string{"git", "apply", "--check", "--reverse", "/p"}, ReverseCheckCommand("/p"))
	_, err = PatchCommands("v3", "/p")
	assert.Error(t, err)
}
