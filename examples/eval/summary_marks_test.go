package main

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/swebox/swebox/sandbox"
	"github.com/swebox/swebox/swebench"
)

// The summary marks a verdict that flipped between repeated runs, and an
// image pull a registry's rate limit refused until swebox gave up.
func TestSummaryMarks(t *testing.T) {
	limited := &swebench.PullRetryError{Image: "img", Attempts: 5, Waited: 450 * time.Second,
		Err: &sandbox.ImageError{Image: "img", PullErr: sandbox.ErrRateLimited}}
	res := &swebench.Result{
		Instances: []swebench.InstanceResult{
			{InstanceID: "a__b-1", Status: swebench.StatusResolved, Outcome: swebench.OutcomeResolved,
				Repeats: &swebench.Repeats{Outcomes: []swebench.Outcome{"resolved", "unresolved", "resolved"}, VerdictFlipped: true}},
			{InstanceID: "a__b-2", Status: swebench.StatusUnresolved, Outcome: swebench.OutcomeUnresolved,
				Repeats: &swebench.Repeats{Outcomes: []swebench.Outcome{"unresolved", "unresolved", "unresolved"}, FlakyTests: make([]swebench.FlakyTest, 3)}},
			{InstanceID: "a__b-3", Status: swebench.StatusError, Outcome: swebench.OutcomeImagePullFailed, Err: limited, Error: limited.Error()},
		},
		FlakyPath: "logs/run_evaluation/r/m/flaky.json",
	}
	var buf bytes.Buffer
	writeSummary(&buf, res, nil, "logs")
	out := buf.String()
	assert.Contains(t, out, "a__b-1    resolved           0/0  0/0  0s    FLAKY VERDICT: resolved, unresolved, resolved\n")
	assert.Contains(t, out, "a__b-2    unresolved         0/0  0/0  0s    3 flaky tests\n")
	assert.Contains(t, out, "a__b-3    image_pull_failed  -    -    0s    registry rate limit: 5 pulls refused over 7m30s; a rerun retries it\n")
	assert.Contains(t, out, "repeats: 1 verdicts flipped, 3 tests changed status in 2 instances; the totals above are the first run's\n")
	assert.Contains(t, out, "flaky:      logs/run_evaluation/r/m/flaky.json\n")
}
