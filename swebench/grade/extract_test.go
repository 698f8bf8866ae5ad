package grade_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/swebench/grade"
	"github.com/swebox/swebox/swebench/harness"
	"github.com/swebox/swebox/swebench/logparse"
)

const (
	traceStart = "+ : '>>>>> Start Test Output'\n"
	traceEnd   = "+ : '>>>>> End Test Output'\n"
)

// v5log wraps test output the way a v5 eval script under set -x records it.
func v5log(output string, exit string) string {
	return "+ pytest -rA\n" + traceStart + output + "+ SWEBENCH_TEST_EXIT_CODE=" + exit + "\n" + traceEnd +
		"+ echo '>>>>> Test Exit Code: " + exit + "'\n>>>>> Test Exit Code: " + exit + "\n"
}

func TestParseTestOutput(t *testing.T) {
	type testCase struct {
		name    string
		log     string
		parser  string
		rules   harness.Rules // "" runs v4 and v5 and expects the same
		regrade bool
		want    logparse.StatusMap
		reason  grade.Reason
		marker  string
		whole   bool
		forgery int // number of forgery notes (v5)
	}
	pass := "PASSED t.py::a\n"
	cases := []testCase{
		{name: "set -x markers", log: "diff\n" + traceStart + pass + traceEnd,
			want: logparse.StatusMap{"t.py::a": logparse.PASSED}},
		{name: "bare markers", log: ">>>>> Start Test Output\n" + pass + ">>>>> End Test Output\n",
			want: logparse.StatusMap{"t.py::a": logparse.PASSED}},
		{name: "text outside the markers is not graded", log: "PASSED t.py::before\n" + traceStart + pass + traceEnd + "FAILED t.py::after\n",
			want: logparse.StatusMap{"t.py::a": logparse.PASSED}},
		{name: "empty chunk falls back to the whole log", log: "PASSED t.py::before\n" + traceStart + "nothing\n" + traceEnd,
			want: logparse.StatusMap{"t.py::before": logparse.PASSED}, whole: true},
		{name: "failure marker anywhere rejects", log: traceStart + pass + traceEnd + ">>>>> Tests Timed Out\n",
			want: logparse.StatusMap{}, reason: grade.ReasonFailureMarker, marker: harness.TestsTimedOutMarker},
		{name: "patch apply failure rejects", log: ">>>>> Patch Apply Failed:\nerror\n",
			want: logparse.StatusMap{}, reason: grade.ReasonFailureMarker, marker: harness.PatchApplyFailMarker},
		{name: "reset failure rejects", log: traceStart + pass + traceEnd + ">>>>> Reset Failed\n",
			want: logparse.StatusMap{}, reason: grade.ReasonFailureMarker, marker: harness.ResetFailedMarker},
		{name: "tests errored rejects", log: ">>>>> Tests Errored\n" + traceStart + pass + traceEnd,
			want: logparse.StatusMap{}, reason: grade.ReasonFailureMarker, marker: harness.TestsErroredMarker},
		{name: "no markers rejects", log: pass,
			want: logparse.StatusMap{}, reason: grade.ReasonMissingMarkers},
		{name: "start without end rejects", log: traceStart + pass,
			want: logparse.StatusMap{}, reason: grade.ReasonMissingMarkers},
		{name: "regrade grades a log without markers whole", log: pass, regrade: true,
			want: logparse.StatusMap{"t.py::a": logparse.PASSED}, whole: true},
		{name: "regrade keeps a start without end unusable", log: traceStart + pass, regrade: true,
			want: logparse.StatusMap{}, reason: grade.ReasonMissingMarkers},
		{name: "regrade keeps an end without start unusable", log: pass + traceEnd, regrade: true,
			want: logparse.StatusMap{}, reason: grade.ReasonMissingMarkers},
		{name: "regrade still honours failure markers", log: pass + ">>>>> Patch Apply Failed\n", regrade: true,
			want: logparse.StatusMap{}, reason: grade.ReasonFailureMarker, marker: harness.PatchApplyFailMarker},
		{name: "carriage returns split lines as Python's open does", log: traceStart + "PASSED t.py::a\rPASSED t.py::b\r\n" + traceEnd,
			want: logparse.StatusMap{"t.py::a": logparse.PASSED, "t.py::b": logparse.PASSED}},
		{name: "end marker before start", log: traceEnd + "PASSED t.py::x\n" + traceStart + pass,
			rules: harness.V4, want: logparse.StatusMap{"t.py::a": logparse.PASSED}},
		// Forged markers printed by the tests: the official split rule cuts the
		// graded text at the first end (or second start) marker.
		{name: "v4 forged end marker hides what follows", rules: harness.V4,
			log:  traceStart + "PASSED t.py::a\n>>>>> End Test Output\nFAILED t.py::b\n" + traceEnd,
			want: logparse.StatusMap{"t.py::a": logparse.PASSED}},
		{name: "v5 forged end marker hides what follows and is noted", rules: harness.V5,
			log:  v5log("PASSED t.py::a\n>>>>> End Test Output\nFAILED t.py::b\n", "1"),
			want: logparse.StatusMap{"t.py::a": logparse.PASSED}, reason: grade.ReasonExitCode, forgery: 1},
		{name: "v5 forged start marker cuts the output and is noted", rules: harness.V5,
			log:  v5log("PASSED t.py::a\n>>>>> Start Test Output\nFAILED t.py::b\n", "1"),
			want: logparse.StatusMap{}, reason: grade.ReasonExitCode, forgery: 1},
		{name: "v4 forged end marker at the top falls back to the whole log", rules: harness.V4,
			log:  traceStart + ">>>>> End Test Output\nPASSED t.py::forged\n" + "FAILED t.py::real\n" + traceEnd,
			want: logparse.StatusMap{"t.py::forged": logparse.PASSED, "t.py::real": logparse.FAILED}, whole: true},
		{name: "marker text in the model diff before the real start", rules: harness.V4,
			log:  "+ git diff\n+print('>>>>> Start Test Output')\n" + traceStart + pass + traceEnd,
			want: logparse.StatusMap{"t.py::a": logparse.PASSED}, whole: true},
		// v5 rejections.
		{name: "v5 exit code contradicts passing log", rules: harness.V5,
			log: v5log(pass, "1"), want: logparse.StatusMap{}, reason: grade.ReasonExitCode},
		{name: "v4 ignores the exit code", rules: harness.V4,
			log: v5log(pass, "1"), want: logparse.StatusMap{"t.py::a": logparse.PASSED}},
		{name: "v5 exit code with a failure in the log", rules: harness.V5,
			log:  v5log(pass+"FAILED t.py::b - x\n", "1"),
			want: logparse.StatusMap{"t.py::a": logparse.PASSED, "t.py::b": logparse.FAILED}},
		{name: "v5 exit code printed by the tests comes first and wins, as upstream", rules: harness.V5,
			log:  "+ pytest -rA\n" + traceStart + pass + ">>>>> Test Exit Code: 0\n+ SWEBENCH_TEST_EXIT_CODE=1\n" + traceEnd + ">>>>> Test Exit Code: 1\n",
			want: logparse.StatusMap{"t.py::a": logparse.PASSED}, forgery: 1},
		{name: "v5 exit code in other digits, after a newline", rules: harness.V5,
			log:  "+ pytest -rA\n" + traceStart + pass + "+ SWEBENCH_TEST_EXIT_CODE=1\n" + traceEnd + ">>>>> Test Exit Code:\n\u0661\n",
			want: logparse.StatusMap{}, reason: grade.ReasonExitCode},
		{name: "v5 exit code zero", rules: harness.V5,
			log: v5log(pass, "0"), want: logparse.StatusMap{"t.py::a": logparse.PASSED}},
		{name: "v5 nothing parsed and no suite ran", rules: harness.V5,
			log: v5log("no tests ran in 0.01s\n", "5"), want: logparse.StatusMap{}, reason: grade.ReasonNoTestsRan},
		{name: "v4 nothing parsed is usable", rules: harness.V4,
			log: v5log("no tests ran in 0.01s\n", "5"), want: logparse.StatusMap{}, whole: true},
		{name: "v5 nothing parsed but mocha ran tests", rules: harness.V5, parser: "marked",
			log: v5log("  12 passing (3ms)\n", "0"), want: logparse.StatusMap{}, whole: true},
		{name: "v5 zero-count summary is no evidence", rules: harness.V5, parser: "marked",
			log: v5log("  0 passing (3ms)\n", "0"), want: logparse.StatusMap{}, reason: grade.ReasonNoTestsRan},
		{name: "v5 counts need no word boundary, as upstream", rules: harness.V5, parser: "marked",
			log: v5log("  05 passing\n", "0"), want: logparse.StatusMap{}, whole: true},
		{name: "v5 openlayers rendering ok lines are evidence", rules: harness.V5, parser: "openlayers",
			log: v5log("case icon': ok\n", "0"), want: logparse.StatusMap{}, whole: true},
		{name: "v5 a TAP pass count alone is no evidence", rules: harness.V5, parser: "tap",
			log: v5log("# pass 3\n", "0"), want: logparse.StatusMap{}, reason: grade.ReasonNoTestsRan},
		{name: "v5 jest counts are evidence", rules: harness.V5, parser: "jest",
			log: v5log("Tests:       3 passed, 3 total\n", "0"), want: logparse.StatusMap{}, whole: true},
	}
	for _, tc := range cases {
		rules := []harness.Rules{tc.rules}
		if tc.rules == "" {
			rules = []harness.Rules{harness.V4, harness.V5}
		}
		parser := tc.parser
		if parser == "" {
			parser = "pytest"
		}
		for _, r := range rules {
			t.Run(tc.name+"/"+string(r), func(t *testing.T) {
				sm, ev, err := grade.ParseTestOutput(tc.log, parser, r, tc.regrade)
				require.NoError(t, err)
				assert.Equal(t, tc.reason, ev.Reason, "reason")
				assert.Equal(t, tc.reason == "", ev.Usable, "usable")
				assert.Equal(t, tc.marker, ev.Marker, "marker")
				if ev.Usable {
					assert.Equal(t, tc.want, sm)
					assert.Equal(t, tc.whole, ev.WholeLog, "whole log")
				} else {
					assert.Empty(t, sm)
				}
				if r == harness.V5 {
					assert.Len(t, ev.Forgery, tc.forgery, "forgery notes: %q", ev.Forgery)
				} else {
					assert.Empty(t, ev.Forgery)
				}
			})
		}
	}
}

func TestParseTestOutputErrors(t *testing.T) {
	_, _, err := grade.ParseTestOutput(traceStart+traceEnd, "nope", harness.V5, false)
	var unknown *logparse.UnknownParserError
	require.ErrorAs(t, err, &unknown)
	_, _, err = grade.ParseTestOutput(traceStart+traceEnd, "pytest", "v3", false)
	require.ErrorIs(t, err, grade.ErrUnknownRules)
	_, err = grade.Grade(grade.Input{InstanceID: "a__b-1", Parser: "pytest", Rules: "v3"})
	require.ErrorIs(t, err, grade.ErrUnknownRules)

	// seaborn v4 raises IndexError on a bare FAILED line: no report.
	log := traceStart + "PASSED t.py::a\nFAILED\n" + traceEnd
	_, _, err = grade.ParseTestOutput(log, "seaborn", harness.V4, false)
	require.True(t, errors.Is(err, logparse.ErrParserRaised), err)
	sm, ev, err := grade.ParseTestOutput(log, "seaborn", harness.V5, false)
	require.NoError(t, err)
	assert.True(t, ev.Usable)
	assert.Equal(t, logparse.StatusMap{"t.py::a": logparse.PASSED}, sm)
}

func TestExitCodeRecorded(t *testing.T) {
	_, ev, err := grade.ParseTestOutput(v5log("FAILED t.py::a\n", "2"), "pytest", harness.V5, false)
	require.NoError(t, err)
	require.NotNil(t, ev.ExitCode)
	assert.Equal(t, 2, *ev.ExitCode)
	assert.Empty(t, ev.Forgery)
	_, ev, err = grade.ParseTestOutput(traceStart+"FAILED t.py::a\n"+traceEnd, "pytest", harness.V5, false)
	require.NoError(t, err)
	assert.Nil(t, ev.ExitCode)
	assert.True(t, strings.HasPrefix(harness.ExitCodeMarker, ">>>>>"))
}
