package task

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/swebox/swebox/internal/fsutil"
	"github.com/swebox/swebox/swebench"
	"github.com/swebox/swebox/swebench/dataset"
	"github.com/swebox/swebox/swebench/grade"
)

// Submission is the verdict on one patch.
type Submission struct {
	// Patch is the model patch that was graded.
	Patch string
	// Result is the evaluator's result for the instance: Outcome, Status,
	// the FAIL_TO_PASS / PASS_TO_PASS counts, Err, LogDir. An empty patch
	// is not run (Outcome empty_patch), as in the evaluator.
	Result swebench.InstanceResult
	// Report is report.json, nil when the evaluator wrote none (empty
	// patch, patch failed, timed out, error); ReportJSON its bytes.
	Report     *grade.InstanceReport
	ReportJSON []byte
	// TestOutput is the path of test_output.txt, "" when there is none.
	TestOutput string

	// runDir and runReport are what the evaluator wrote for this
	// submission alone: its run's log directory and run report.
	runDir, runReport string
}

// Discard removes the logs the submission's run wrote (its directory under
// Config.Dir/logs/run_evaluation and its run report); Result.LogDir and
// TestOutput then name nothing. Env.Submit discards them itself under
// FeedbackVerdict. Safe to call twice.
func (s *Submission) Discard() error {
	var errs []error
	if s.runDir != "" {
		errs = append(errs, fsutil.RemoveAll(s.runDir))
	}
	if s.runReport != "" {
		if err := os.Remove(s.runReport); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	s.runDir, s.runReport = "", ""
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("discard the logs of a submission: %w", err)
	}
	return nil
}

// Grade grades patch as the model patch of task id exactly as
// swebench.Evaluate grades a prediction with that patch, because it is
// swebench.Evaluate: a run of that one prediction with the tasks' evaluator
// configuration (a fresh sandbox from the instance's image, the official
// eval script, parser and rules), writing report.json and the other
// official files under Config.Dir/logs/run_evaluation/<run>/swebox-task/<id>.
// progress, when set, receives the run's events. Grade applies no
// feedback policy (Env.Submit does): the Submission has everything. Its
// logs stay until [Submission.Discard] or until Tasks.Close removes the
// directory New made; under a Config.Dir of the caller's they are the
// caller's to remove.
func (t *Tasks) Grade(ctx context.Context, id, patch string, progress func(swebench.Event)) (*Submission, error) {
	inst, ok := t.rows[id]
	if !ok {
		return nil, fmt.Errorf("grade: %w: %q", ErrUnknownTask, id)
	}
	cfg := t.cfg.Eval
	cfg.Dataset = []dataset.Instance{inst}
	cfg.InstanceIDs = nil
	cfg.Predictions = []dataset.Prediction{{InstanceID: id, ModelNameOrPath: ModelName, ModelPatch: &patch}}
	cfg.RunID = "submit-" + randomHex(8)
	cfg.Progress = progress
	cfg.Repeat = 1
	sub := &Submission{Patch: patch,
		runDir:    filepath.Join(cfg.LogDir, "run_evaluation", cfg.RunID),
		runReport: filepath.Join(cfg.ReportDir, grade.RunReportFileName(ModelName, cfg.RunID)),
	}
	res, err := swebench.Evaluate(ctx, cfg)
	if err != nil && res == nil {
		// No Submission for the caller to discard: what the run wrote
		// goes now.
		return nil, errors.Join(fmt.Errorf("grade %s: %w", id, err), sub.Discard())
	}
	for _, r := range res.Instances {
		if r.InstanceID == id {
			sub.Result = r
		}
	}
	if sub.Result.InstanceID == "" {
		// Not run: the evaluator's outcome for it (empty patch, cancelled).
		sub.Result = swebench.InstanceResult{InstanceID: id, Outcome: res.Outcomes[id]}
		if sub.Result.Outcome == swebench.OutcomeEmptyPatch {
			sub.Result.Status = swebench.StatusEmptyPatch
		}
	}
	if dir := sub.Result.LogDir; dir != "" {
		if b, rerr := os.ReadFile(filepath.Join(dir, "report.json")); rerr == nil {
			var rep grade.InstanceReport
			if uerr := rep.UnmarshalJSON(b); uerr != nil {
				return sub, fmt.Errorf("grade %s: read report.json: %w", id, uerr)
			}
			sub.Report, sub.ReportJSON = &rep, b
		}
		if p := filepath.Join(dir, "test_output.txt"); fileExists(p) {
			sub.TestOutput = p
		}
	}
	if err != nil {
		return sub, fmt.Errorf("grade %s: %w", id, err)
	}
	return sub, nil
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil || !errors.Is(err, os.ErrNotExist)
}
