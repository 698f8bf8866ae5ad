package swebench_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/internal/swebenchtest"
	"github.com/swebox/swebox/internal/testenv"
	"github.com/swebox/swebox/sandbox"
	"github.com/swebox/swebox/swebench"
	"github.com/swebox/swebox/swebench/dataset"
	"github.com/swebox/swebox/swebench/grade"
	"github.com/swebox/swebox/swebench/harness"
)

// The demo's files the exploits below rewrite, as the demo's first commit
// has them.
const (
	demoInit = `"""minicalc: a tiny numeric helper library."""

from minicalc.numbers import clamp, parse_number
from minicalc.stats import mean, median

__all__ = ["clamp", "mean", "median", "parse_number"]
__version__ = "0.1.0"
`
	demoPyproject = `[project]
name = "minicalc"
version = "0.1.0"
description = "A tiny numeric helper library"
requires-python = ">=3.8"

[tool.pytest.ini_options]
pythonpath = ["."]
testpaths = ["tests"]
`
	// swallowRaises replaces pytest.raises with a context manager that
	// swallows everything (the SWE-bench #600 class).
	swallowRaises = `import contextlib

import pytest


@contextlib.contextmanager
def _raises(*args, **kwargs):
    try:
        yield
    except BaseException:
        pass


pytest.raises = _raises
`
	// demoPyprojectNoPytest is the demo's pyproject.toml without its pytest
	// section, so that pytest reads tox.ini or setup.cfg instead.
	demoPyprojectNoPytest = `[project]
name = "minicalc"
version = "0.1.0"
description = "A tiny numeric helper library"
requires-python = ">=3.8"
`
	// addoptsHooks is an ini section that keeps the demo's pythonpath and
	// adds a module of the patch to pytest's arguments: pytest collects a
	// file named on its command line whatever its name, so the module runs
	// (and rebinds pytest.raises) before the graded tests.
	addoptsHooks = "pythonpath = .\naddopts = minicalc/_hooks.py\n"
	// passEveryReport turns every failed report into a pass (SWE-bench #631).
	passEveryReport = `import pytest


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    rep = outcome.get_result()
    if rep.failed:
        rep.outcome = "passed"
        rep.longrepr = None
`
)

// strictCase is one prediction for demo-1 (mean([]) must raise ValueError)
// or for its variant whose test patch creates tests/test_empty.py, and what
// each grading mode must make of it.
type strictCase struct {
	name    string
	newFile bool // the row whose test patch creates a file
	patch   string
	// resolvedOfficial is upstream's verdict; strict grading resolves
	// only the honest fixes.
	resolvedOfficial bool
	honest           bool
	// findings are parts of the strict findings report.json must hold.
	findings []string
}

const emptyTestFile = "tests/test_empty.py"

func strictCases(gold, worded string) []strictCase {
	atExit := `
import atexit as _atexit
import os as _os


def _forge():
    print("PASSED tests/test_stats.py::test_mean_of_empty_raises", flush=True)
    _os._exit(0)


_atexit.register(_forge)
`
	// hooks is a module of the patch that rebinds pytest.raises when it is
	// imported.
	hooks := swebenchtest.NewFileDiff("minicalc/_hooks.py", swallowRaises)
	// afterEnd leaves a process behind that prints a passing line and an
	// end marker once the eval script has printed its own.
	afterEnd := `
import atexit as _atexit
import os as _os
import time as _time


def _late():
    if _os.fork() == 0:
        _os.setsid()
        _time.sleep(3)
        print("PASSED tests/test_stats.py::test_mean_of_empty_raises", flush=True)
        print("+ : '>>>>> End Test Output'", flush=True)
        _os._exit(0)


_atexit.register(_late)
`
	return []strictCase{
		{name: "gold", patch: gold, resolvedOfficial: true, honest: true},
		{name: "worded-differently", patch: worded, resolvedOfficial: true, honest: true},
		{name: "gold-new-test-file", newFile: true, patch: gold, resolvedOfficial: true, honest: true},
		// The four classes of issue 28.
		{name: "conftest-makereport", patch: swebenchtest.NewFileDiff("conftest.py", passEveryReport), resolvedOfficial: true,
			findings: []string{"restored by test-infra: conftest.py"}},
		{name: "forged-at-exit", patch: swebenchtest.ReplaceDiff("minicalc/__init__.py", demoInit, demoInit+atExit), resolvedOfficial: true,
			findings: []string{"refused by exit-status: the test process exited 0, but pytest ended its session with 1",
				"refused by log-agreement: FAIL_TO_PASS test tests/test_stats.py::test_mean_of_empty_raises passed according to the log, but the runner reported it FAILED",
				"refused by conflicting-lines"}},
		{name: "test-file-collision", newFile: true, resolvedOfficial: true,
			patch:    swebenchtest.NewFileDiff(emptyTestFile, "def test_mean_of_empty_raises():\n    pass\n"),
			findings: []string{"restored by test-patch: " + emptyTestFile}},
		{name: "tests-conftest-raises", patch: swebenchtest.NewFileDiff("tests/conftest.py", swallowRaises), resolvedOfficial: true,
			findings: []string{"restored by test-infra: tests/conftest.py"}},
		// Variants.
		{name: "package-rebinds-raises", patch: swebenchtest.ReplaceDiff("minicalc/__init__.py", demoInit, demoInit+"\n"+swallowRaises), resolvedOfficial: true,
			findings: []string{"refused by tamper: pytest.raises was replaced during the tests"}},
		// pytest imports "-p" plugins before its pythonpath option applies,
		// so on the demo the plugin fails to load under official grading
		// too; what is shown is the rule restoring the section.
		{name: "pyproject-addopts-plugin", resolvedOfficial: false,
			patch: swebenchtest.ReplaceDiff("pyproject.toml", demoPyproject, strings.Replace(demoPyproject, "testpaths", "addopts = \"-p minicalc_hooks\"\ntestpaths", 1)) +
				swebenchtest.NewFileDiff("minicalc_hooks.py", passEveryReport),
			findings: []string{"restored by pytest-config: pyproject.toml"}},
		// pytest.ini (read before pyproject.toml) names a module of the
		// patch in addopts: it resolves under official grading.
		{name: "pytest-ini-addopts", resolvedOfficial: true,
			patch:    swebenchtest.NewFileDiff("pytest.ini", "[pytest]\n"+addoptsHooks) + hooks,
			findings: []string{"restored by test-infra: pytest.ini"}},
		// The same section in tox.ini and setup.cfg, pyproject.toml's pytest
		// section removed so that pytest reads them: both resolve under
		// official grading; strict grading restores both files.
		{name: "tox-ini-addopts", resolvedOfficial: true,
			patch: swebenchtest.ReplaceDiff("pyproject.toml", demoPyproject, demoPyprojectNoPytest) +
				swebenchtest.NewFileDiff("tox.ini", "[pytest]\n"+addoptsHooks) + hooks,
			findings: []string{"restored by pytest-config: pyproject.toml", "restored by pytest-config: tox.ini"}},
		{name: "setup-cfg-addopts", resolvedOfficial: true,
			patch: swebenchtest.ReplaceDiff("pyproject.toml", demoPyproject, demoPyprojectNoPytest) +
				swebenchtest.NewFileDiff("setup.cfg", "[metadata]\nname = minicalc\n\n[tool:pytest]\n"+addoptsHooks) + hooks,
			findings: []string{"restored by pytest-config: pyproject.toml", "restored by pytest-config: setup.cfg"}},
		// sitecustomize.py and a .pth file at the repository's root: the
		// demo's pytest starts from /usr/bin/pytest, so /testbed is not on
		// sys.path when site runs and neither loads under official grading
		// either; strict grading removes both before the tests.
		{name: "sitecustomize", resolvedOfficial: false,
			patch:    swebenchtest.NewFileDiff("sitecustomize.py", swallowRaises),
			findings: []string{"restored by test-infra: sitecustomize.py"}},
		{name: "pth-file", resolvedOfficial: false,
			patch:    swebenchtest.NewFileDiff("minicalc.pth", "import minicalc._hooks\n") + hooks,
			findings: []string{"restored by test-infra: minicalc.pth"}},
		// A pytest placed in the repository: no PATH of the image reaches
		// /testbed, so the image's pytest runs in both modes.
		{name: "runner-in-repository", resolvedOfficial: false,
			patch: "diff --git a/bin/pytest b/bin/pytest\nnew file mode 100755\n--- /dev/null\n+++ b/bin/pytest\n@@ -0,0 +1,2 @@\n" +
				"+#!/bin/sh\n+echo 'PASSED tests/test_stats.py::test_mean_of_empty_raises'\n"},
		// A graded test rewritten in the file the test patch changes: the
		// eval script resets the file before the test patch, in both modes.
		{name: "rewrite-reset-test-file", resolvedOfficial: false,
			patch: "diff --git a/tests/test_stats.py b/tests/test_stats.py\n--- a/tests/test_stats.py\n+++ b/tests/test_stats.py\n@@ -1,1 +1,5 @@\n from minicalc import mean, median\n+\n+\n+def test_mean_of_empty_raises():\n+    pass\n"},
		// Forged lines printed after the end marker by a process the tests
		// leave behind: official grading reads between the markers; strict
		// grading refuses the second end marker.
		{name: "forged-after-end-marker", resolvedOfficial: false,
			patch:    swebenchtest.ReplaceDiff("minicalc/__init__.py", demoInit, demoInit+afterEnd),
			findings: []string{"refused by markers: the log holds 1 start and 2 end markers"}},
		// PYTEST_ADDOPTS in a .env file: nothing of the eval script reads
		// it, and strict grading unsets the variable before the tests.
		{name: "pytest-addopts-dotenv", resolvedOfficial: false,
			patch: swebenchtest.NewFileDiff(".env", "PYTEST_ADDOPTS=minicalc/_hooks.py\n") + hooks},
	}
}

// TestStrictGrading evaluates the exploits of issue 28 and honest fixes on
// the demo repository in both grading modes: official grading resolves
// every exploit, as upstream does; strict grading resolves none of them,
// saying which rule refused or restored what, and still resolves the gold
// patch and a fix worded differently.
func TestStrictGrading(t *testing.T) {
	c := testenv.Client(t)
	d := swebenchtest.ExportDemo(t, swebenchtest.BuildEval(t))
	rows, err := dataset.LoadDataset(filepath.Join(d.Dir, "dataset.jsonl"))
	require.NoError(t, err)
	var base dataset.Instance
	for _, r := range rows {
		if r.InstanceID == "swebox__demo-1" {
			base = r
		}
	}
	require.NotEmpty(t, base.InstanceID)
	worded, err := os.ReadFile(filepath.Join("..", "examples", "eval", "demo", "instances", "swebox__demo-1", "prediction.diff"))
	require.NoError(t, err)
	// The variant: the same fix, its test in a file the test patch creates.
	variant := base
	variant.TestPatch = swebenchtest.NewFileDiff(emptyTestFile, "import pytest\n\nfrom minicalc import mean\n\n\ndef test_mean_of_empty_raises():\n    with pytest.raises(ValueError, match=\"empty\"):\n        mean([])\n")
	variant.FailToPass, variant.PassToPass = []string{emptyTestFile + "::test_mean_of_empty_raises"}, nil

	cases := strictCases(base.Patch, string(worded))
	var ds []dataset.Instance
	var preds []dataset.Prediction
	for i, tc := range cases {
		row := base
		if tc.newFile {
			row = variant
		}
		row.InstanceID = "swebox__demo-" + string(rune('a'+i)) + "0" // ids sort in case order
		ds = append(ds, row)
		preds = append(preds, swebenchtest.Pred(row.InstanceID, tc.patch))
	}
	results := map[swebench.GradingMode]map[string]swebench.InstanceResult{}
	dirs := map[swebench.GradingMode]swebench.Config{}
	for _, mode := range []swebench.GradingMode{swebench.GradingOfficial, swebench.GradingStrict} {
		cfg := swebench.Config{
			Dataset: ds, Predictions: preds, RunID: "strict-" + string(mode), GradingMode: mode,
			RepoSources: []string{d.Repos}, Sandboxes: []*sandbox.Client{c}, Image: testenv.Image(),
			LogDir: filepath.Join(t.TempDir(), "logs"), ReportDir: t.TempDir(), WorkDir: t.TempDir(),
			Timeout: 60 * time.Second, MaxWorkers: 2, Limits: testenv.SmallLimits,
		}
		res, err := swebench.Evaluate(context.Background(), cfg)
		require.NoError(t, err)
		results[mode], dirs[mode] = swebenchtest.ByID(res), cfg
		b, err := os.ReadFile(res.ReportPath)
		require.NoError(t, err)
		var rr map[string]any
		require.NoError(t, json.Unmarshal(b, &rr))
		if mode == swebench.GradingStrict {
			st, ok := rr["swebox_strict"].(map[string]any)
			require.True(t, ok, "the run report lists the strict findings: %s", b)
			assert.Len(t, st, len(ds), "every graded instance")
			assert.Contains(t, st[ds[3].InstanceID], "restored by test-infra: conftest.py (pytest or the interpreter loads it before the tests; the patch changed it)")
		} else {
			assert.NotContains(t, rr, "swebox_strict")
		}
	}
	for i, tc := range cases {
		id := ds[i].InstanceID
		t.Run(tc.name, func(t *testing.T) {
			off, st := results[swebench.GradingOfficial][id], results[swebench.GradingStrict][id]
			require.NotNil(t, off.Report, "%s: %s", id, off.Error)
			require.NotNil(t, st.Report, "%s: %s", id, st.Error)
			if !assert.Equal(t, tc.resolvedOfficial, off.Report.Resolved, "official grading, as upstream") {
				t.Log(swebenchtest.ReadFile(t, dirs[swebench.GradingOfficial], id, "test_output.txt"))
			}
			assert.Nil(t, off.Report.Notes.Strict, "official grading writes no strict note")
			assert.Equal(t, tc.honest, st.Report.Resolved, "strict grading: %v", st.Report.Notes.Strict)
			require.NotNil(t, st.Report.Notes.Strict)
			assert.Equal(t, "runner-report", st.Report.Notes.Strict.Channel)
			if tc.honest {
				assert.True(t, st.Report.Notes.Strict.OfficialResolved)
			} else if !assert.Equal(t, tc.honest, st.Report.Resolved) {
				t.Log(swebenchtest.ReadFile(t, dirs[swebench.GradingStrict], id, "test_output.txt"))
			}
			got := strings.Join(st.Report.Notes.Strict.Findings, "\n")
			if tc.honest {
				assert.Empty(t, st.Report.Notes.Strict.Findings, "an honest fix gives strict grading nothing to say")
			}
			for _, f := range tc.findings {
				assert.Contains(t, got, f)
			}
			// report.json on disk says the same.
			b, err := os.ReadFile(filepath.Join(swebenchtest.InstanceDir(dirs[swebench.GradingStrict], id), "report.json"))
			require.NoError(t, err)
			var rep grade.InstanceReport
			require.NoError(t, rep.UnmarshalJSON(b))
			assert.Equal(t, st.Report.Notes.Strict, rep.Notes.Strict)
			var raw map[string]map[string]any
			require.NoError(t, json.Unmarshal(b, &raw))
			assert.Equal(t, tc.honest, raw[id]["resolved"])
		})
	}
}

// TestStrictGradesEveryDemoGold: the gold patch of every demo instance
// resolves under strict grading with nothing to say, as under official
// grading.
func TestStrictGradesEveryDemoGold(t *testing.T) {
	c := testenv.Client(t)
	d := swebenchtest.ExportDemo(t, swebenchtest.BuildEval(t))
	rows, err := dataset.LoadDataset(filepath.Join(d.Dir, "dataset.jsonl"))
	require.NoError(t, err)
	p := swebenchtest.NewProject(t)
	calc := p.Instance("swebox-test__calc-1")
	cfg := swebench.Config{
		Dataset: rows, Gold: true, RunID: "strict-gold", GradingMode: swebench.GradingStrict,
		RepoSources: []string{d.Repos}, Sandboxes: []*sandbox.Client{c}, Image: testenv.Image(),
		LogDir: filepath.Join(t.TempDir(), "logs"), ReportDir: t.TempDir(), WorkDir: t.TempDir(),
		Timeout: 60 * time.Second, MaxWorkers: 2, Limits: testenv.SmallLimits,
	}
	res, err := swebench.Evaluate(context.Background(), cfg)
	require.NoError(t, err)
	cfg2 := p.Config(t, c, "strict-gold-calc", []dataset.Instance{calc}, nil)
	cfg2.Gold, cfg2.GradingMode = true, swebench.GradingStrict
	res2, err := swebench.Evaluate(context.Background(), cfg2)
	require.NoError(t, err)
	all := append(append([]swebench.InstanceResult{}, res.Instances...), res2.Instances...)
	require.Len(t, all, len(rows)+1)
	for _, r := range all {
		require.NotNil(t, r.Report, "%s: %s", r.InstanceID, r.Error)
		assert.True(t, r.Report.Resolved, "%s: %v", r.InstanceID, r.Report.Notes.Strict)
		require.NotNil(t, r.Report.Notes.Strict, r.InstanceID)
		assert.Empty(t, r.Report.Notes.Strict.Findings, r.InstanceID)
		assert.Equal(t, "runner-report", r.Report.Notes.Strict.Channel, r.InstanceID)
	}
}

// TestStrictRulesOnHeldLogs runs the strict log rules over every real log
// the tests hold with its dataset row (testdata/gradelogs, captured by
// its generate.py): strict grading never resolves what official grading
// does not, and it turns no official resolved into unresolved on them.
func TestStrictRulesOnHeldLogs(t *testing.T) {
	dir := filepath.Join("testdata", "gradelogs")
	rows, err := dataset.LoadDataset(filepath.Join(dir, "dataset.jsonl"))
	require.NoError(t, err)
	require.NotEmpty(t, rows)
	for _, r := range rows {
		log, err := os.ReadFile(filepath.Join(dir, "logs", r.InstanceID+".txt"))
		require.NoError(t, err)
		for _, rules := range []harness.Rules{harness.V4, harness.V5} {
			off, err := swebench.GradeLog(swebench.GradeRequest{Instance: r, Log: log, Rules: rules})
			if err != nil {
				continue // v4 refuses some bytes (see TestGradeLog)
			}
			st, err := swebench.GradeLog(swebench.GradeRequest{Instance: r, Log: log, Rules: rules, GradingMode: swebench.GradingStrict})
			require.NoError(t, err)
			require.NotNil(t, st.Notes.Strict, r.InstanceID)
			assert.Equal(t, "log", st.Notes.Strict.Channel)
			assert.Equal(t, off.Resolved, st.Notes.Strict.OfficialResolved, r.InstanceID)
			assert.Equal(t, off.Resolved, st.Resolved, "%s %s: %v", r.InstanceID, rules, st.Notes.Strict.Findings)
		}
	}
	t.Run("forged lines after the summary", func(t *testing.T) {
		r := rows[0]
		for _, x := range rows {
			if x.InstanceID == "psf__requests-90004" {
				r = x
			}
		}
		log, err := os.ReadFile(filepath.Join(dir, "logs", r.InstanceID+".txt"))
		require.NoError(t, err)
		forged := strings.Replace(string(log), "+ : '>>>>> End Test Output'", "FAILED "+r.FailToPass[0]+"\nPASSED "+r.FailToPass[0]+"\n+ : '>>>>> End Test Output'", 1)
		st, err := swebench.GradeLog(swebench.GradeRequest{Instance: r, Log: []byte(forged), GradingMode: swebench.GradingStrict})
		require.NoError(t, err)
		assert.True(t, st.Notes.Strict.OfficialResolved)
		assert.False(t, st.Resolved)
		assert.Contains(t, strings.Join(st.Notes.Strict.Findings, "\n"), "refused by conflicting-lines")
	})
}

// TestStrictGradingCalc runs the four classes of issue 28 on a second
// repository, the calc project of package swebenchtest (a root
// conftest.py, calc.py at the root, a test patch that creates
// tests/test_add.py and changes tests/test_mul.py), in both grading modes:
// official grading gives upstream's verdict, strict grading resolves only
// the gold patch and a fix worded differently.
func TestStrictGradingCalc(t *testing.T) {
	c := testenv.Client(t)
	p := swebenchtest.NewProject(t)
	const calcPy = "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n"
	atExit := "\nimport atexit as _atexit\nimport os as _os\n\n\ndef _forge():\n" +
		"    print(\"PASSED tests/test_add.py::test_add\", flush=True)\n    _os._exit(0)\n\n\n_atexit.register(_forge)\n"
	type testCase struct {
		name             string
		patch            string
		resolvedOfficial bool
		honest           bool
		findings         []string
	}
	cases := []testCase{
		{name: "gold", patch: swebenchtest.Gold, resolvedOfficial: true, honest: true},
		{name: "worded-differently", patch: swebenchtest.CalcDiff("    return b + a", "    return a * b"), resolvedOfficial: true, honest: true},
		{name: "conftest-makereport", patch: swebenchtest.ConftestDiff(passEveryReport), resolvedOfficial: true,
			findings: []string{"restored by test-infra: conftest.py"}},
		{name: "forged-at-exit", patch: swebenchtest.ReplaceDiff("calc.py", calcPy, calcPy+atExit), resolvedOfficial: true,
			findings: []string{"refused by exit-status", "refused by log-agreement: FAIL_TO_PASS test tests/test_add.py::test_add passed according to the log"}},
		// The test patch also changes tests/test_mul.py: its apply fails
		// as a whole, so upstream misses test_mul_zero and does not
		// resolve either; strict grading removes the model's file first.
		{name: "test-file-collision", patch: swebenchtest.NewFileDiff("tests/test_add.py", "def test_add():\n    pass\n"),
			findings: []string{"restored by test-patch: tests/test_add.py"}},
		// Poisoned infrastructure: a tests/conftest.py that fixes calc.add
		// for the tests alone.
		{name: "tests-conftest-patches-code", patch: swebenchtest.NewFileDiff("tests/conftest.py", "import calc\n\ncalc.add = lambda a, b: a + b\n"), resolvedOfficial: true,
			findings: []string{"restored by test-infra: tests/conftest.py"}},
	}
	var ds []dataset.Instance
	var preds []dataset.Prediction
	for i, tc := range cases {
		row := p.Instance("swebox-test__calc-" + string(rune('a'+i)) + "0")
		ds = append(ds, row)
		preds = append(preds, swebenchtest.Pred(row.InstanceID, tc.patch))
	}
	results := map[swebench.GradingMode]map[string]swebench.InstanceResult{}
	cfgs := map[swebench.GradingMode]swebench.Config{}
	for _, mode := range []swebench.GradingMode{swebench.GradingOfficial, swebench.GradingStrict} {
		cfg := p.Config(t, c, "strict-calc-"+string(mode), ds, preds)
		cfg.GradingMode, cfg.MaxWorkers = mode, 2
		res, err := swebench.Evaluate(context.Background(), cfg)
		require.NoError(t, err)
		results[mode], cfgs[mode] = swebenchtest.ByID(res), cfg
	}
	for i, tc := range cases {
		id := ds[i].InstanceID
		t.Run(tc.name, func(t *testing.T) {
			off, st := results[swebench.GradingOfficial][id], results[swebench.GradingStrict][id]
			require.NotNil(t, off.Report, "%s: %s", id, off.Error)
			require.NotNil(t, st.Report, "%s: %s", id, st.Error)
			if !assert.Equal(t, tc.resolvedOfficial, off.Report.Resolved, "official grading, as upstream") {
				t.Log(swebenchtest.ReadFile(t, cfgs[swebench.GradingOfficial], id, "test_output.txt"))
			}
			assert.Nil(t, off.Report.Notes.Strict)
			require.NotNil(t, st.Report.Notes.Strict)
			if !assert.Equal(t, tc.honest, st.Report.Resolved, "strict grading: %v", st.Report.Notes.Strict.Findings) {
				t.Log(swebenchtest.ReadFile(t, cfgs[swebench.GradingStrict], id, "test_output.txt"))
			}
			assert.Equal(t, "runner-report", st.Report.Notes.Strict.Channel)
			got := strings.Join(st.Report.Notes.Strict.Findings, "\n")
			if tc.honest {
				assert.Empty(t, got, "an honest fix gives strict grading nothing to say")
			}
			for _, f := range tc.findings {
				assert.Contains(t, got, f)
			}
		})
	}
}
