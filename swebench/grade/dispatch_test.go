package grade_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/swebench/grade"
	"github.com/swebox/swebox/swebench/harness"
	"github.com/swebox/swebox/swebench/logparse"
)

// TestGradeDispatchingParsers grades instances whose official parser
// chooses another by instance id or version: the choice follows the
// instance, and an instance the official parser does not know gets no
// report when its log is parsed, but a report when the log is rejected
// before any parsing (a failure marker), as upstream.
func TestGradeDispatchingParsers(t *testing.T) {
	wrap := func(body string) string {
		return "+ : '>>>>> Start Test Output'\n" + body + "+ : '>>>>> End Test Output'\n"
	}
	cypress := wrap("  Running:  button.cy.tsx                                   (1 of 1)\n\n\n  Button\n    ✓ renders (12ms)\n    1) clicks\n\n\n  1 passing (1s)\n  1 failing\n")
	karma := wrap(" xvfb-run karma start\nStarting browser Chrome\n  Button\n    ✓ renders\n    ✗ clicks\nTOTAL: 1 FAILED, 1 SUCCESS\n")
	type testCase struct {
		name, parser, id, version, log string
		f2p                            []string
		resolved, raises, usable       bool
	}
	for _, tc := range []testCase{
		{name: "next 1.27 reads cypress", parser: "parse_log_next", id: "alibaba-fusion__next-4512", version: "1.27",
			log: cypress, f2p: []string{"Button: renders"}, resolved: true, usable: true},
		{name: "next 1.26 reads karma", parser: "parse_log_next", id: "alibaba-fusion__next-4000", version: "1.26",
			log: karma, f2p: []string{"Button - renders"}, resolved: true, usable: true},
		{name: "next 1.26 does not read cypress", parser: "next", id: "alibaba-fusion__next-4000", version: "1.26",
			log: cypress, f2p: []string{"Button: renders"}, usable: true},
		{name: "unknown immutable-js instance raises", parser: "immutable_js", id: "immutable-js__immutable-js-1",
			log: wrap("  ✓ renders (3 ms)\n"), raises: true},
		{name: "unknown immutable-js instance with a failure marker is reported", parser: "immutable_js",
			id: "immutable-js__immutable-js-1", log: ">>>>> Patch Apply Failed\n"},
		{name: "immutable-js 2006 reads jest", parser: "immutable_js", id: "immutable-js__immutable-js-2006",
			log: wrap("  ✓ renders (3 ms)\n"), f2p: []string{"renders"}, resolved: true, usable: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, rules := range []harness.Rules{harness.V4, harness.V5} {
				rep, err := grade.Grade(grade.Input{
					InstanceID: tc.id, Version: tc.version, Parser: tc.parser, Log: tc.log,
					FailToPass: tc.f2p, Rules: rules,
				})
				if tc.raises {
					require.ErrorIs(t, err, logparse.ErrParserRaised)
					continue
				}
				require.NoError(t, err)
				assert.Equal(t, tc.usable, rep.PatchSuccessfullyApplied, "%s", rules)
				assert.Equal(t, tc.resolved, rep.Resolved, "%s", rules)
			}
		})
	}
}

// TestGradeClassifiesUnusableLogs: 5.0.2 writes infra_failure_reason into
// report.json for a log it cannot grade, with infra_failure true only for
// environment reasons; v4.1.0 has neither key.
func TestGradeClassifiesUnusableLogs(t *testing.T) {
	type testCase struct {
		name, log, reason string
		infra             bool
	}
	for _, tc := range []testCase{
		{"environment", "Error: Failed to launch the browser process\n", grade.BrowserLaunchFailed, true},
		{"ambiguous", "+ : '>>>>> Start Test Output'\nModuleNotFoundError: No module named 'x'\n", grade.MissingModule, false},
		{"unknown", "nothing recognisable\n", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep, err := grade.Grade(grade.Input{InstanceID: "a__b-1", Parser: "pytest", Log: tc.log, Rules: harness.V5})
			require.NoError(t, err)
			assert.False(t, rep.PatchSuccessfullyApplied)
			assert.Equal(t, tc.reason, rep.InfraFailureReason)
			assert.Equal(t, tc.infra, rep.InfraFailure)
			body := string(rep.Encode())
			assert.Contains(t, body, `"infra_failure": `)
			if tc.reason != "" {
				assert.Contains(t, body, `"infra_failure_reason": "`+tc.reason+`"`)
			}
			v4, err := grade.Grade(grade.Input{InstanceID: "a__b-1", Parser: "pytest", Log: tc.log, Rules: harness.V4})
			require.NoError(t, err)
			assert.NotContains(t, string(v4.Encode()), "infra_failure")
		})
	}
}

// TestGradeTruncatedIDsInRecordOrder: 5.0.2 resolves a truncated id whose
// siblings all failed to pass by the first sibling in dict order, the order
// the parser recorded them. pytest -rA lists SKIPPED before FAILED, so a
// skipped sibling makes the PASS_TO_PASS test maintained (#663); listed
// the other way round it fails.
func TestGradeTruncatedIDsInRecordOrder(t *testing.T) {
	wrap := func(body string) string {
		return "+ : '>>>>> Start Test Output'\n" + body + "+ : '>>>>> End Test Output'\n"
	}
	type testCase struct {
		name, log string
		resolved  bool
	}
	for _, tc := range []testCase{
		{"skipped recorded first is maintained", wrap("PASSED t.py::test_f\nSKIPPED t.py::test_x[a-1]\nFAILED t.py::test_x[a-2] - boom\n"), true},
		{"failed recorded first fails", wrap("PASSED t.py::test_f\nFAILED t.py::test_x[a-2] - boom\nSKIPPED t.py::test_x[a-1]\n"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep, err := grade.Grade(grade.Input{
				InstanceID: "a__b-1", Parser: "pytest", Log: tc.log, Rules: harness.V5,
				FailToPass: []string{"t.py::test_f"}, PassToPass: []string{"t.py::test_x[a"},
			})
			require.NoError(t, err)
			assert.Equal(t, tc.resolved, rep.Resolved)
		})
	}
}
