package swebench

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/swebox/swebox/sandbox"
	"github.com/swebox/swebox/swebench/dataset"
	"github.com/swebox/swebox/swebench/grade"
	"github.com/swebox/swebox/swebench/spec"
)

// The parts of an instance's run that follow its family's procedure
// (spec.TestSpec.Run) where it differs from the official harness's.

// applyPatches applies what the procedure has the evaluator apply from the
// staging directory: the row's test patch first when its harness does so
// (its attempts go to run_instance.log, not to res.PatchAttempts, which
// are the model patch's), then the model patch; nothing when the eval
// script applies it (spec.Procedure.ScriptAppliesPatch).
func (e *evaluator) applyPatches(ctx context.Context, sb *sandbox.Sandbox, ilog *instanceLog, res *InstanceResult, run spec.Procedure, staging string) (string, error) {
	if run.ScriptAppliesPatch {
		ilog.printf("The eval script applies the patch staged at %s/patch.diff, as the family's harness does", staging)
		return "", nil
	}
	if run.TestPatchFirst {
		ilog.printf("Applying the test patch before the model patch, as the family's harness does")
		var scratch InstanceResult
		if _, err := e.applyPatch(ctx, sb, ilog, &scratch, run, staging+"/test.diff"); err != nil {
			return "", fmt.Errorf("test patch: %w", err)
		}
	}
	return e.applyPatch(ctx, sb, ilog, res, run, staging+"/patch.diff")
}

// gradeUnapplied records a patch that did not apply as the family's
// harness records it (spec.Procedure.PatchFailureGraded): a report.json
// that says so, not resolved, with no test results.
func (e *evaluator) gradeUnapplied(inst dataset.Instance, ts spec.TestSpec, dir string, res *InstanceResult, ilog *instanceLog) error {
	rules := e.rules
	if ts.Rules != "" {
		rules = ts.Rules
	}
	report := grade.InstanceReport{InstanceID: inst.InstanceID, PatchExists: true, Rules: rules,
		Notes: grade.Notes{Grading: ts.Grading}}
	if err := writeFileAtomic(filepath.Join(dir, "report.json"), report.Encode()); err != nil {
		return err
	}
	fillFromInstanceReport(res, report)
	ilog.printf("report.json written: resolved=false (a patch did not apply; the family's harness grades that as unresolved)")
	return nil
}

// appendTo closes c, the log of one stream written to path, and copies
// what it kept to out followed by trailer; path is removed.
func (c *cappedFile) appendTo(path string, out io.Writer, trailer string) error {
	if err := c.Close(); err != nil {
		return fmt.Errorf("write the script's standard output: %w", err)
	}
	defer os.Remove(path)
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("read the script's standard output: %w", err)
	}
	defer f.Close()
	if _, err := io.Copy(out, f); err != nil {
		return fmt.Errorf("copy the script's standard output: %w", err)
	}
	_, err = io.WriteString(out, trailer)
	return err
}
