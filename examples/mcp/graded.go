package main

import (
	"github.com/swebox/swebox/swebench"
	"github.com/swebox/swebox/swebench/grade"
)

// gradedPatch is what the server tells of a graded patch: one shape for
// swebench_evaluate and swebench_task_submit, both made by newGradedPatch
// from the evaluator's result, which carries what the logs said (the
// patch attempts, the test output's tail) so that no log is read here.
type gradedPatch struct {
	InstanceID   string         `json:"instance_id"`
	Resolved     bool           `json:"resolved"`
	Status       string         `json:"status" jsonschema:"resolved (every FAIL_TO_PASS and PASS_TO_PASS test passes), unresolved, error (the patch did not apply, or the tests could not run: see outcome and error), empty_patch"`
	Outcome      string         `json:"outcome" jsonschema:"what became of the evaluation: resolved, unresolved, patch_failed (see patch_output), timed_out, out_of_memory, empty_patch, or a reason of the machine (image_missing, engine_lost, cancelled, error)"`
	FailToPass   testResults    `json:"fail_to_pass" jsonschema:"tests that must go from failing to passing: how many pass of how many"`
	PassToPass   testResults    `json:"pass_to_pass" jsonschema:"tests that passed before and must still pass: how many do"`
	Error        string         `json:"error,omitempty"`
	PatchCommand string         `json:"patch_command,omitempty" jsonschema:"the command that applied the patch"`
	PatchOutput  string         `json:"patch_output,omitempty" jsonschema:"when the patch does not apply: each patch command tried, its exit status and what it printed"`
	Report       map[string]any `json:"report,omitempty" jsonschema:"the official report.json of the instance, per-test results under tests_status, when the server tells test names (--test_feedback)"`
	LogTail      string         `json:"log_tail,omitempty" jsonschema:"the end of the test output, when the server tells it (--test_feedback)"`
	DurationMS   int64          `json:"duration_ms"`
}

// newGradedPatch is what the server tells of r: the verdict, the counts
// and what the patch commands said; with feedback the test names,
// report.json (rep, else r.Report) and the test output's tail too.
func newGradedPatch(r swebench.InstanceResult, rep *grade.InstanceReport, feedback bool) (gradedPatch, error) {
	g := gradedPatch{
		InstanceID: r.InstanceID, Resolved: r.Status == swebench.StatusResolved,
		Status: string(r.Status), Outcome: string(r.Outcome), Error: r.Error,
		FailToPass:   testResults{Passed: r.FailToPass.Passed, Total: r.FailToPass.Total},
		PassToPass:   testResults{Passed: r.PassToPass.Passed, Total: r.PassToPass.Total},
		PatchCommand: r.PatchCommand, DurationMS: r.Duration.Milliseconds(),
	}
	if r.Outcome == swebench.OutcomePatchFailed {
		g.PatchOutput = tail(patchOutput(r.PatchAttempts), logTailBytes)
		if g.PatchOutput != "" {
			g.Error = "the patch does not apply: patch_output has each command's output"
		}
	}
	if !feedback {
		return g, nil
	}
	if rep == nil {
		rep = r.Report
	}
	if rep != nil {
		if ts := rep.TestsStatus; ts != nil {
			f, p := ts.FailToPass, ts.PassToPass
			g.FailToPass.Success, g.FailToPass.Failure = nonNil(f.Success), nonNil(f.Failure)
			g.PassToPass.Success, g.PassToPass.Failure = nonNil(p.Success), nonNil(p.Failure)
		}
		var err error
		if g.Report, err = reportBody(*rep); err != nil {
			return gradedPatch{}, err
		}
	}
	g.LogTail = r.LogTail
	return g, nil
}
