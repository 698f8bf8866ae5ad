package swebench

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/swebox/swebox/swebench/logparse"
)

func TestCompareRuns(t *testing.T) {
	const p, f = logparse.PASSED, logparse.FAILED
	type testCase struct {
		name        string
		outcomes    []Outcome
		statuses    []logparse.StatusMap
		wantVerdict bool
		wantTests   []FlakyTest
	}
	for _, tc := range []testCase{
		{
			name:     "stable",
			outcomes: []Outcome{OutcomeResolved, OutcomeResolved, OutcomeResolved},
			statuses: []logparse.StatusMap{{"a": p, "b": f}, {"a": p, "b": f}, {"a": p, "b": f}},
		},
		{
			name:        "a test and the verdict flip",
			outcomes:    []Outcome{OutcomeResolved, OutcomeUnresolved, OutcomeResolved},
			statuses:    []logparse.StatusMap{{"a": p, "b": p}, {"a": p, "b": f}, {"a": p, "b": p}},
			wantVerdict: true,
			wantTests:   []FlakyTest{{Test: "b", Statuses: []string{"PASSED", "FAILED", "PASSED"}}},
		},
		{
			name:      "a test flips while the verdict stays",
			outcomes:  []Outcome{OutcomeUnresolved, OutcomeUnresolved},
			statuses:  []logparse.StatusMap{{"z": f, "c": p}, {"z": p, "c": p}},
			wantTests: []FlakyTest{{Test: "z", Statuses: []string{"FAILED", "PASSED"}}},
		},
		{
			name:      "a test missing from one log is absent there",
			outcomes:  []Outcome{OutcomeResolved, OutcomeResolved},
			statuses:  []logparse.StatusMap{{"a": p, "b": p}, {"a": p}},
			wantTests: []FlakyTest{{Test: "b", Statuses: []string{"PASSED", Absent}}},
		},
		{
			name:      "a run without a log is left out of the comparison",
			outcomes:  []Outcome{OutcomeResolved, OutcomeTimedOut, OutcomeResolved},
			statuses:  []logparse.StatusMap{{"a": p}, nil, {"a": p}},
			wantTests: nil,
		},
		{
			name:        "out of memory counts as unresolved",
			outcomes:    []Outcome{OutcomeOutOfMemory, OutcomeResolved},
			statuses:    []logparse.StatusMap{nil, nil},
			wantVerdict: true,
		},
		{
			name:     "a single log compares nothing",
			outcomes: []Outcome{OutcomeResolved, OutcomePatchFailed},
			statuses: []logparse.StatusMap{{"a": p}, nil},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := compareRuns(tc.outcomes, tc.statuses)
			assert.Equal(t, tc.outcomes, r.Outcomes)
			assert.Equal(t, tc.wantVerdict, r.VerdictFlipped)
			assert.Equal(t, tc.wantTests, r.FlakyTests)
			assert.Equal(t, tc.wantVerdict || len(tc.wantTests) > 0, r.Flipped())
		})
	}
}
