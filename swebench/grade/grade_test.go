package grade_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/swebench/grade"
	"github.com/swebox/swebox/swebench/harness"
	"github.com/swebox/swebox/swebench/logparse"
)

func results(success, failure []string) grade.Results {
	if success == nil {
		success = []string{}
	}
	if failure == nil {
		failure = []string{}
	}
	return grade.Results{Success: success, Failure: failure}
}

func TestGradeTests(t *testing.T) {
	sm := logparse.StatusMap{
		"pass": logparse.PASSED, "xfail": logparse.XFAIL, "fail": logparse.FAILED, "error": logparse.ERROR,
		"skip": logparse.SKIPPED, "odd": logparse.Status("ERROR:"),
		"t.py::p[a-b]": logparse.PASSED, "t.py::p[a-c]": logparse.XFAIL,
		"t.py::q[x-1]": logparse.FAILED, "t.py::q[x-2]": logparse.SKIPPED,
		"t.py::r[m-1]": logparse.PASSED, "t.py::r[m-2]": logparse.FAILED,
		"t.py::s[k-1]": logparse.SKIPPED,
	}
	type testCase struct {
		name     string
		rules    harness.Rules
		failOnly bool
		f2p, p2p []string
		wantF2P  grade.Results
		wantP2P  grade.Results
		want     grade.Resolution
	}
	cases := []testCase{
		{name: "passed and xfail succeed, missing fails", rules: harness.V4,
			f2p: []string{"pass", "xfail", "missing"}, p2p: []string{"pass"},
			wantF2P: results([]string{"pass", "xfail"}, []string{"missing"}), wantP2P: results([]string{"pass"}, nil),
			want: grade.ResolvedPartial},
		{name: "failed and error fail", rules: harness.V4,
			f2p: []string{"fail", "error"}, p2p: []string{"fail"},
			wantF2P: results(nil, []string{"fail", "error"}), wantP2P: results(nil, []string{"fail"}), want: grade.ResolvedNo},
		{name: "v4 skipped is in neither list", rules: harness.V4,
			f2p: []string{"skip"}, p2p: []string{"skip", "pass"},
			wantF2P: results(nil, nil), wantP2P: results([]string{"pass"}, nil), want: grade.ResolvedFull},
		{name: "v5 skipped fail-to-pass fails, pass-to-pass is maintained", rules: harness.V5,
			f2p: []string{"skip"}, p2p: []string{"skip", "pass"},
			wantF2P: results(nil, []string{"skip"}), wantP2P: results([]string{"skip", "pass"}, nil), want: grade.ResolvedNo},
		{name: "unknown status is in neither list", rules: harness.V5,
			f2p: []string{"odd", "pass"}, p2p: []string{"odd"},
			wantF2P: results([]string{"pass"}, nil), wantP2P: results(nil, nil), want: grade.ResolvedFull},
		{name: "empty categories count as one", rules: harness.V5,
			wantF2P: results(nil, nil), wantP2P: results(nil, nil), want: grade.ResolvedFull},
		{name: "partial needs every pass-to-pass", rules: harness.V5,
			f2p: []string{"pass", "fail"}, p2p: []string{"fail"},
			wantF2P: results([]string{"pass"}, []string{"fail"}), wantP2P: results(nil, []string{"fail"}), want: grade.ResolvedNo},
		{name: "fail-only: only FAILED fails, missing succeeds", rules: harness.V4, failOnly: true,
			f2p: []string{"fail", "error", "missing", "skip"}, p2p: []string{"pass", "fail"},
			wantF2P: results([]string{"error", "missing", "skip"}, []string{"fail"}), wantP2P: results([]string{"pass"}, []string{"fail"}),
			want: grade.ResolvedNo},
		{name: "fail-only all missing resolves (#474)", rules: harness.V5, failOnly: true,
			f2p: []string{"a", "b"}, p2p: []string{"c"},
			wantF2P: results([]string{"a", "b"}, nil), wantP2P: results([]string{"c"}, nil), want: grade.ResolvedFull},
		{name: "v4 truncated id is missing", rules: harness.V4,
			f2p: []string{"t.py::p[a"}, wantF2P: results(nil, []string{"t.py::p[a"}), wantP2P: results(nil, nil), want: grade.ResolvedNo},
		{name: "v5 truncated id matches agreeing passes", rules: harness.V5,
			f2p: []string{"t.py::p[a"}, wantF2P: results([]string{"t.py::p[a"}, nil), wantP2P: results(nil, nil), want: grade.ResolvedFull},
		{name: "v5 truncated id with disagreeing matches is missing", rules: harness.V5,
			f2p: []string{"t.py::r[m"}, p2p: []string{"t.py::r[m"},
			wantF2P: results(nil, []string{"t.py::r[m"}), wantP2P: results(nil, []string{"t.py::r[m"}), want: grade.ResolvedNo},
		{name: "v5 skipped sibling does not mask a failure", rules: harness.V5,
			p2p: []string{"t.py::q[x"}, wantF2P: results(nil, nil), wantP2P: results(nil, []string{"t.py::q[x"}), want: grade.ResolvedNo},
		{name: "v5 all-skipped truncated pass-to-pass is maintained", rules: harness.V5,
			p2p: []string{"t.py::s[k"}, wantF2P: results(nil, nil), wantP2P: results([]string{"t.py::s[k"}, nil), want: grade.ResolvedFull},
		{name: "v5 balanced brackets never prefix-match", rules: harness.V5,
			f2p: []string{"t.py::p[a-b"[:9] + "]"}, wantF2P: results(nil, []string{"t.py::p[a]"}), wantP2P: results(nil, nil), want: grade.ResolvedNo},
		{name: "order of the dataset is kept", rules: harness.V5,
			f2p: []string{"xfail", "pass"}, wantF2P: results([]string{"xfail", "pass"}, nil), wantP2P: results(nil, nil), want: grade.ResolvedFull},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ts := grade.GradeTests(sm, tc.f2p, tc.p2p, tc.failOnly, tc.rules)
			assert.Equal(t, tc.wantF2P, ts.FailToPass, "FAIL_TO_PASS")
			assert.Equal(t, tc.wantP2P, ts.PassToPass, "PASS_TO_PASS")
			assert.Equal(t, results(nil, nil), ts.FailToFail)
			assert.Equal(t, results(nil, nil), ts.PassToFail)
			assert.Equal(t, tc.want, ts.Resolution())
		})
	}
}

func TestResolution(t *testing.T) {
	type testCase struct {
		name                   string
		f2pS, f2pF, p2pS, p2pF int
		want                   grade.Resolution
	}
	n := func(k int) []string { return make([]string, k) }
	for _, tc := range []testCase{
		{"all good", 2, 0, 3, 0, grade.ResolvedFull},
		{"no tests at all", 0, 0, 0, 0, grade.ResolvedFull},
		{"some f2p", 1, 1, 3, 0, grade.ResolvedPartial},
		{"no f2p", 0, 2, 3, 0, grade.ResolvedNo},
		{"p2p regression", 2, 0, 3, 1, grade.ResolvedNo},
		{"some f2p and p2p regression", 1, 1, 0, 1, grade.ResolvedNo},
		{"only p2p", 0, 0, 1, 0, grade.ResolvedFull},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts := grade.TestsStatus{FailToPass: grade.Results{Success: n(tc.f2pS), Failure: n(tc.f2pF)},
				PassToPass: grade.Results{Success: n(tc.p2pS), Failure: n(tc.p2pF)}}
			assert.Equal(t, tc.want, ts.Resolution())
		})
	}
}

func TestFailOnly(t *testing.T) {
	type testCase struct {
		repo   string
		v4, v5 bool
	}
	for _, tc := range []testCase{
		{"chartjs/Chart.js", true, true},
		{"processing/p5.js", true, true},
		{"markedjs/marked", true, true},
		{"bpmn-io/bpmn-js", false, true},
		{"openlayers/openlayers", false, true},
		{"eslint/eslint", false, true},
		{"django/django", false, false},
	} {
		t.Run(tc.repo, func(t *testing.T) {
			assert.Equal(t, tc.v4, harness.FailOnly(tc.repo, harness.V4))
			assert.Equal(t, tc.v5, harness.FailOnly(tc.repo, harness.V5))
			assert.Equal(t, tc.v5, harness.FailOnly(tc.repo, ""), "v5 is the default")
		})
	}
}

func TestGrade(t *testing.T) {
	log := v5log("PASSED t.py::a\nSKIPPED t.py::s\nFAILED t.py::b - x\n", "1")
	type testCase struct {
		name       string
		in         grade.Input
		applied    bool
		resolved   bool
		tests      bool
		infra      bool
		wantErr    bool
		failToPass grade.Results
	}
	for _, tc := range []testCase{
		{name: "v5 usable log", in: grade.Input{InstanceID: "x__y-1", Log: log, Repo: "pytest-dev/pytest",
			FailToPass: []string{"t.py::a", "t.py::s"}, PassToPass: []string{"t.py::b"}},
			applied: true, tests: true, failToPass: results([]string{"t.py::a"}, []string{"t.py::s"})},
		{name: "v4 skipped drops out and the p2p failure stays", in: grade.Input{InstanceID: "x__y-1", Log: log, Parser: "pytest",
			Rules: harness.V4, FailToPass: []string{"t.py::a", "t.py::s"}, PassToPass: []string{"t.py::b"}},
			applied: true, tests: true, failToPass: results([]string{"t.py::a"}, nil)},
		{name: "v4 all-skipped fail-to-pass resolves", in: grade.Input{InstanceID: "x__y-1", Log: log, Parser: "pytest",
			Rules: harness.V4, FailToPass: []string{"t.py::s"}, PassToPass: []string{"t.py::a"}},
			applied: true, tests: true, resolved: true, failToPass: results(nil, nil)},
		{name: "null patch", in: grade.Input{InstanceID: "x__y-1", Log: log, PatchIsNone: true}},
		{name: "unusable log", in: grade.Input{InstanceID: "x__y-1", Log: "no markers", Parser: "pytest"}},
		{name: "infra failure under v5", in: grade.Input{InstanceID: "x__y-1", Log: "", Parser: "pytest", InfraFailureReason: "container_unavailable"},
			infra: true},
		{name: "infra failure is not a v4 key", in: grade.Input{InstanceID: "x__y-1", Log: "", Parser: "pytest", Rules: harness.V4, InfraFailureReason: "container_unavailable"}},
		{name: "parser raises: no report", in: grade.Input{InstanceID: "x__y-1", Log: traceStart + "FAILED\n" + traceEnd, Repo: "mwaskom/seaborn", Rules: harness.V4},
			wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep, err := grade.Grade(tc.in)
			if tc.wantErr {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.in.InstanceID, rep.InstanceID)
			assert.Equal(t, tc.in.PatchIsNone, rep.PatchIsNone)
			assert.Equal(t, !tc.in.PatchIsNone, rep.PatchExists)
			assert.Equal(t, tc.applied, rep.PatchSuccessfullyApplied)
			assert.Equal(t, tc.resolved, rep.Resolved)
			assert.Equal(t, tc.infra, rep.InfraFailure)
			if !tc.tests {
				assert.Nil(t, rep.TestsStatus)
				return
			}
			require.NotNil(t, rep.TestsStatus)
			assert.Equal(t, tc.failToPass, rep.TestsStatus.FailToPass)
		})
	}
}

func TestGradeCountCheck(t *testing.T) {
	var seen string
	check := func(out string, sm logparse.StatusMap) []string {
		seen = out
		return []string{"closing line says 2 passed, the log names 1"}
	}
	rep, err := grade.Grade(grade.Input{InstanceID: "a__b-1", Log: "before\n" + traceStart + "PASSED t.py::a\n" + traceEnd, Parser: "pytest", CountCheck: check})
	require.NoError(t, err)
	assert.Equal(t, "'\nPASSED t.py::a\n+ : '", seen, "the check sees the graded text only")
	assert.Equal(t, []string{"closing line says 2 passed, the log names 1"}, rep.Notes.CountCheck)
	assert.Contains(t, string(rep.Encode()), `"count_check": [`)
}
