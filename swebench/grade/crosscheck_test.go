package grade_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/swebench/grade"
	"github.com/swebox/swebox/swebench/harness"
	"github.com/swebox/swebox/swebench/logparse"
)

func TestPytestCountCheck(t *testing.T) {
	const closing2 = "============================== 2 passed in 0.02s ===============================\n"
	type testCase struct {
		name   string
		parser string
		rules  harness.Rules
		out    string
		want   []string
	}
	for _, tc := range []testCase{
		{name: "honest log", parser: "pytest",
			out: "collected 2 items\n\nt.py ..\n==== short test summary info ====\nPASSED t.py::a\nPASSED t.py::b[x y]\n" + closing2},
		{name: "truncated run", parser: "pytest",
			out:  "============================= test session starts ==============================\ncollected 2 items\n\nt.py::a PASSED\n",
			want: []string{"no pytest closing line: the run was cut off"}},
		{name: "closing line disagrees", parser: "pytest",
			out:  "==== short test summary info ====\nPASSED t.py::a\n==== 1 failed, 1 passed in 0.1s ====\n",
			want: []string{"closing line counts 1 failed, the log reports 0"}},
		{name: "forged line in captured output", parser: "pytest",
			out: "==== PASSES ====\n____ test_a ____\n---- Captured stdout call ----\nPASSED t.py::forged\n" +
				"==== short test summary info ====\nPASSED t.py::a\nFAILED t.py::b - x\n==== 1 failed, 1 passed in 0.1s ====\n",
			want: []string{`"t.py::forged" is PASSED for the official parser, but pytest reported no such test`}},
		{name: "seaborn passes a test that errored at teardown", parser: "seaborn",
			out: "==== short test summary info ====\nPASSED t.py::a\nERROR t.py::a - teardown\n" +
				"==== 1 passed, 1 error in 0.1s ====\n",
			want: []string{`"t.py::a" is PASSED for the official parser, but pytest reported it error`}},
		{name: "options names derive from node ids", parser: "pytest_options",
			out: "==== short test summary info ====\nPASSED t.py::u[/testbed/x/y.py]\nPASSED t.py::u[//share]\n" + closing2},
		{name: "v5 pytest_v2 xfail reasons", parser: "pytest_v2", rules: harness.V5,
			out: "==== short test summary info ====\nPASSED t.py::a\nXFAIL t.py::x - known bug\n==== 1 passed, 1 xfailed in 0.1s ====\n"},
		{name: "folded skips count", parser: "pytest",
			out: "==== short test summary info ====\nPASSED t.py::a\nSKIPPED [2] t.py:3: no net\n==== 1 passed, 2 skipped in 0.1s ====\n"},
		{name: "progress artefact [100%] is pytest's own", parser: "pytest",
			out: "t.py::a \nPASSED                          [100%]\n==== short test summary info ====\nPASSED t.py::a\n==== 1 passed in 0.1s ====\n"},
		{name: "not pytest output", parser: "pytest",
			out: "test_a (m.C) ... ok\n\nRan 1 test in 0.001s\n\nOK\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rules := tc.rules
			if rules == "" {
				rules = harness.V4
			}
			official, err := logparse.Parse(tc.parser, tc.out, rules)
			require.NoError(t, err)
			check := grade.CountCheckFor(tc.parser, rules)
			require.NotNil(t, check)
			assert.Equal(t, tc.want, check(tc.out, official))
		})
	}
	assert.Nil(t, grade.CountCheckFor("django", harness.V5))
	assert.Nil(t, grade.CountCheckFor("parse_log_sympy", harness.V5))
	assert.NotNil(t, grade.CountCheckFor("parse_log_astropy", harness.V5))
}

func TestGradeDefaultCountCheck(t *testing.T) {
	log := traceStart + "==== PASSES ====\n---- Captured stdout call ----\nPASSED t.py::forged\n" +
		"==== short test summary info ====\nFAILED t.py::a - x\n==== 1 failed in 0.1s ====\n" + traceEnd
	in := grade.Input{InstanceID: "a__b-1", Log: log, Repo: "pytest-dev/pytest", FailToPass: []string{"t.py::forged"}}
	rep, err := grade.Grade(in)
	require.NoError(t, err)
	assert.True(t, rep.Resolved, "the official verdict stands")
	assert.Len(t, rep.Notes.CountCheck, 1)
	in.CountCheck = grade.NoCountCheck
	rep, err = grade.Grade(in)
	require.NoError(t, err)
	assert.Empty(t, rep.Notes.CountCheck)
	assert.NotContains(t, string(rep.Encode()), grade.NotesKey)
}
