package swebench

import (
	"fmt"

	"github.com/swebox/swebox/swebench/dataset"
	"github.com/swebox/swebox/swebench/family"
	"github.com/swebox/swebox/swebench/grade"
	"github.com/swebox/swebox/swebench/harness"
	"github.com/swebox/swebox/swebench/logparse"
	"github.com/swebox/swebox/swebench/spec"
	"github.com/swebox/swebox/swebench/strict"
)

// GradeRequest is one test log to grade for one dataset row.
type GradeRequest struct {
	// Instance is the dataset row the log belongs to: its repository and
	// version choose the parser (next 1.27 runs Cypress, other versions
	// Karma, for example), its FAIL_TO_PASS and PASS_TO_PASS lists are
	// graded.
	Instance dataset.Instance
	// Log is test_output.txt as written, undecoded: under v4 rules bytes
	// that are not UTF-8 are an error, under v5 they become U+FFFD, as the
	// official releases decode them.
	Log []byte
	// Rules selects the official release reproduced. Default harness.V5.
	Rules harness.Rules
	// Overrides adjusts the parsers of custom repositories (see package
	// spec); optional.
	Overrides *spec.Overrides
	// Family names the row's task family (see Config.Family). Default: the
	// family that claims the row; a row none claims is graded by the
	// official tables' rules.
	Family string
	// PatchIsNone is a prediction whose model_patch is null: the report
	// says so and grades nothing. Default false.
	PatchIsNone bool
	// Fresh says the log was just written by this module's own eval script,
	// which always prints the start and end markers: a log without them is
	// unusable, as in an official run. Otherwise (the default: a log read
	// from disk or handed over, as the official rewrite mode reads them) a
	// log without any marker, as harness 2.x wrote them, is graded whole.
	Fresh bool
	// GradingMode is GradingOfficial (the default) or GradingStrict: a log
	// alone is then judged by strict grading's log rules (package strict),
	// the evaluator's own runs by all of them.
	GradingMode GradingMode

	// evidence is what a strict run of the evaluator left beside the log.
	evidence *strict.Evidence
}

// GradeLog grades one test log for a dataset row as the official harness
// does: the row's test spec (parser, eval type) under req.Rules, the log
// decoded as the release decodes it, then [grade.Grade]. The evaluator, the
// eval command's grade verb and the MCP server's grading tool all grade
// through it.
//
// An unusable log is not an error (see [grade.Grade]); the error is
// non-nil when the row has no test spec, the log cannot be decoded, or the
// parser raises.
func GradeLog(req GradeRequest) (grade.InstanceReport, error) {
	rules := req.Rules.OrDefault()
	if !req.GradingMode.Valid() {
		return grade.InstanceReport{}, &ConfigError{Field: "GradingMode", Value: string(req.GradingMode), Reason: fmt.Sprintf("want %s or %s", GradingOfficial, GradingStrict)}
	}
	if !rules.Valid() {
		return grade.InstanceReport{}, &ConfigError{Field: "Rules", Value: string(req.Rules), Reason: fmt.Sprintf("want %s or %s", harness.V4, harness.V5)}
	}
	opts := []spec.Option{spec.WithRules(rules)}
	if req.Overrides != nil {
		opts = append(opts, spec.WithOverrides(req.Overrides))
	}
	fam, _, err := family.Resolve(req.Instance, family.Hint{Family: req.Family})
	if err != nil {
		return grade.InstanceReport{}, &ConfigError{Field: "Family", Value: req.Family, Reason: err.Error(), Err: err}
	}
	var ts spec.TestSpec
	if fam != nil {
		ts, err = fam.TestSpec(req.Instance, opts...)
	} else {
		ts, err = spec.For(req.Instance, opts...)
	}
	if err != nil {
		return grade.InstanceReport{}, fmt.Errorf("test spec: %w", err)
	}
	return gradeWithSpec(req, ts)
}

// gradeWithSpec is GradeLog with the test spec already known (the
// evaluator builds each instance's once, for its image and script too).
func gradeWithSpec(req GradeRequest, ts spec.TestSpec) (grade.InstanceReport, error) {
	rules := req.Rules.OrDefault()
	if ts.Rules != "" {
		rules = ts.Rules // the family's harness grades as this release does
	}
	text, err := grade.DecodeOutput(req.Log, rules)
	if err != nil {
		return grade.InstanceReport{}, fmt.Errorf("decode test output: %w", err)
	}
	inst := req.Instance
	if ts.FailToPass != nil || ts.PassToPass != nil {
		inst.FailToPass, inst.PassToPass = ts.FailToPass, ts.PassToPass
	}
	report, err := grade.Grade(grade.Input{
		InstanceID: inst.InstanceID, Log: text, Parser: ts.Parser, Repo: inst.Repo, Version: inst.Version,
		FailToPass: inst.FailToPass, PassToPass: inst.PassToPass,
		FailOnly: ts.EvalType == dataset.EvalTypeFailOnly,
		Rules:    rules, Grading: ts.Grading, PatchIsNone: req.PatchIsNone, Regrade: !req.Fresh,
		Extra: inst.Extra,
	})
	if err != nil {
		return grade.InstanceReport{}, fmt.Errorf("grade: %w", err)
	}
	if req.GradingMode == GradingStrict && !req.PatchIsNone {
		name := ts.Parser
		if name == "" {
			name = harness.ParserForInstance(inst.Repo, inst.InstanceID)
		}
		parse, _ := logparse.Bind(name, logparse.Target{InstanceID: inst.InstanceID, Version: inst.Version})
		strict.Judge(strict.Input{
			Report: &report, Log: text, Parser: parse, Rules: rules,
			FailToPass: inst.FailToPass, PassToPass: inst.PassToPass,
			FailOnly: ts.EvalType == dataset.EvalTypeFailOnly, Evidence: req.evidence,
		})
	}
	return report, nil
}
