package task

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/swebox/swebox/swebench"
)

// Feedback is what a submission tells of the hidden tests (see
// Config.Feedback). An agent that reads the names of the failing tests or
// their output learns the test; for training that may be wanted, for an
// evaluation it is a leak.
type Feedback int

const (
	// FeedbackVerdict keeps the verdict and the counts: the outcome, the
	// status, how many FAIL_TO_PASS and PASS_TO_PASS tests pass of how
	// many, the error of an outcome that is not a verdict. Test names,
	// report.json, the test output and the logs are dropped.
	FeedbackVerdict Feedback = iota
	// FeedbackFull keeps everything the evaluator wrote: report.json with
	// each test's name and result, and the test output.
	FeedbackFull
)

func (f Feedback) String() string {
	switch f {
	case FeedbackVerdict:
		return "verdict"
	case FeedbackFull:
		return "full"
	}
	return fmt.Sprintf("Feedback(%d)", int(f))
}

// ErrSubmissionLimit: the environment has had Config.MaxSubmissions
// submissions; Env.Submit grades no more of them.
var ErrSubmissionLimit = errors.New("submission limit reached")

// submitCount counts an environment's submissions. A place is taken before
// the patch is graded, so that concurrent submissions cannot all pass the
// limit, and given back when grading fails for the infrastructure, which
// tells the agent nothing.
type submitCount struct {
	mu sync.Mutex
	n  int
}

// take takes a place among max submissions (0: no limit).
func (c *submitCount) take(max int) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if max > 0 && c.n >= max {
		return fmt.Errorf("submit: %w: %d of %d", ErrSubmissionLimit, c.n, max)
	}
	c.n++
	return nil
}

func (c *submitCount) giveBack() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n--
}

// Submissions is how many submissions the environment has had (graded or
// being graded); Reset does not reset it.
func (e *Env) Submissions() int {
	e.submits.mu.Lock()
	defer e.submits.mu.Unlock()
	return e.submits.n
}

// submit is Env.Submit: the Diff graded under the tasks' policy.
func (e *Env) submit(ctx context.Context, progress func(swebench.Event)) (*Submission, error) {
	patch, err := e.Diff(ctx)
	if err != nil {
		return nil, err
	}
	if err := e.submits.take(e.t.cfg.MaxSubmissions); err != nil {
		return nil, err
	}
	sub, err := e.t.Grade(ctx, e.Instance.InstanceID, patch, progress)
	if err != nil {
		e.submits.giveBack()
	}
	if sub != nil && e.t.cfg.Feedback != FeedbackFull {
		err = errors.Join(err, sub.verdictOnly())
	}
	return sub, err
}

// verdictOnly drops what a submission tells of the tests beyond the
// verdict and the counts, and removes its logs, which nothing then points
// to.
func (s *Submission) verdictOnly() error {
	r := &s.Result
	*r = swebench.InstanceResult{
		InstanceID: r.InstanceID, Status: r.Status, Outcome: r.Outcome,
		FailToPass: r.FailToPass, PassToPass: r.PassToPass,
		Error: r.Error, Err: r.Err, Warning: r.Warning, Retries: r.Retries,
		OOMKills: r.OOMKills, PatchCommand: r.PatchCommand,
		// How the model patch applied tells nothing of the tests; the
		// log's tail (LogTail) is test output and is dropped.
		PatchAttempts: r.PatchAttempts,
		Duration:      r.Duration, TestDuration: r.TestDuration,
	}
	s.Report, s.ReportJSON, s.TestOutput = nil, nil, ""
	return s.Discard()
}
