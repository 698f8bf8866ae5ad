package grade

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/swebox/swebox/swebench/harness"
	"github.com/swebox/swebox/swebench/logparse"
)

// Results is one category of the official tests_status: the expected tests
// that succeeded and those that failed, in the order the dataset lists them.
type Results struct {
	Success []string
	Failure []string
}

// TestsStatus is the official tests_status of report.json. FAIL_TO_FAIL and
// PASS_TO_FAIL are always empty, as the official harness grades with
// calculate_to_fail=False.
type TestsStatus struct {
	FailToPass Results
	PassToPass Results
	FailToFail Results
	PassToFail Results
}

// Resolution is the official ResolvedStatus. It is never written to disk;
// report.json only says whether it is [ResolvedFull].
type Resolution string

// The official ResolvedStatus values.
const (
	ResolvedFull    Resolution = "RESOLVED_FULL"
	ResolvedPartial Resolution = "RESOLVED_PARTIAL"
	ResolvedNo      Resolution = "RESOLVED_NO"
)

// Resolution applies the official rule: with f2p and p2p each the share of
// successes (1 when the category is empty), FULL when both are 1, PARTIAL
// when 0 < f2p < 1 and p2p is 1, NO otherwise.
func (ts TestsStatus) Resolution() Resolution {
	f2pAll, f2pNone := ratio(ts.FailToPass)
	p2pAll, _ := ratio(ts.PassToPass)
	switch {
	case f2pAll && p2pAll:
		return ResolvedFull
	case !f2pNone && p2pAll:
		return ResolvedPartial
	}
	return ResolvedNo
}

// ratio reports whether success/(success+failure) is 1 (an empty category
// counts as 1) and whether it is 0.
func ratio(r Results) (all, none bool) {
	if len(r.Success)+len(r.Failure) == 0 {
		return true, false
	}
	return len(r.Failure) == 0, len(r.Success) == 0
}

// GradeTests is the official get_eval_tests_report: every FAIL_TO_PASS and
// PASS_TO_PASS test looked up in the status map and sorted into success or
// failure.
//
// Pass-and-fail mode: a test passed when its status is PASSED or XFAIL,
// failed when it is missing, FAILED or ERROR. Under v4 any other status
// (SKIPPED) puts the test in neither list, so an all-skipped FAIL_TO_PASS
// set resolves. Under v5 a SKIPPED FAIL_TO_PASS test fails and a SKIPPED
// PASS_TO_PASS test is maintained (success).
//
// Fail-only mode: failure only when the status is exactly FAILED; anything
// else, missing included, is success (#474).
//
// v5 also looks up truncated parametrized ids (#290): an expected name with
// more "[" than "]" that is absent from the map matches the names it
// prefixes, provided they all agree on pass versus non-pass; see
// [StatusOf].
func GradeTests(sm logparse.StatusMap, failToPass, passToPass []string, failOnly bool, rules harness.Rules) TestsStatus {
	return gradeTests(sm, failToPass, passToPass, failOnly, rules, nil)
}

// gradeTests is GradeTests with first, when known, choosing among the
// names a truncated id prefixes the one the official parser recorded
// first (see [StatusOf]).
func gradeTests(sm logparse.StatusMap, failToPass, passToPass []string, failOnly bool, rules harness.Rules, first func([]string) string) TestsStatus {
	rules = rules.OrDefault()
	ts := NewTestsStatus()
	grade := func(name string, maintain bool, into *Results) {
		status, found := statusOf(sm, name, rules, first)
		passed := found && (status == logparse.PASSED || status == logparse.XFAIL)
		failed := !found || status == logparse.FAILED || status == logparse.ERROR
		skipped := found && status == logparse.SKIPPED
		switch {
		case failOnly:
			if found && status == logparse.FAILED {
				into.Failure = append(into.Failure, name)
			} else {
				into.Success = append(into.Success, name)
			}
		case passed || (rules == harness.V5 && maintain && skipped):
			into.Success = append(into.Success, name)
		case failed || (rules == harness.V5 && skipped):
			into.Failure = append(into.Failure, name)
		}
	}
	for _, name := range failToPass {
		grade(name, false, &ts.FailToPass)
	}
	for _, name := range passToPass {
		grade(name, true, &ts.PassToPass)
	}
	return ts
}

// StatusOf returns the status of the expected test name. Under v5, a name
// with more "[" than "]" (a parametrized id the dataset stored truncated)
// that is not in the map falls back to the names it prefixes, when every
// one of them agrees on pass (PASSED, XFAIL) versus non-pass; if they
// disagree the test counts as missing.
//
// The official rule then takes the first match in dict order, the order
// the parser recorded the names in, which a map does not keep: [Grade]
// recovers it from the log and so agrees with 5.0.2 (where a SKIPPED
// sibling recorded before a FAILED one makes a PASS_TO_PASS test
// maintained, #663). StatusOf, without the log, lets a FAILED or ERROR
// member win over SKIPPED. For the passing group the result is PASSED.
func StatusOf(sm logparse.StatusMap, name string, rules harness.Rules) (logparse.Status, bool) {
	return statusOf(sm, name, rules, nil)
}

func statusOf(sm logparse.StatusMap, name string, rules harness.Rules, first func([]string) string) (logparse.Status, bool) {
	if s, ok := sm[name]; ok {
		return s, true
	}
	if rules.OrDefault() != harness.V5 || strings.Count(name, "[") <= strings.Count(name, "]") {
		return "", false
	}
	var pass, nonPass []string
	for k, s := range sm {
		if !strings.HasPrefix(k, name) {
			continue
		}
		if s == logparse.PASSED || s == logparse.XFAIL {
			pass = append(pass, k)
		} else {
			nonPass = append(nonPass, k)
		}
	}
	switch {
	case len(pass) > 0 && len(nonPass) > 0, len(pass)+len(nonPass) == 0:
		return "", false
	case len(pass) > 0:
		return logparse.PASSED, true
	}
	if first != nil {
		if k := first(nonPass); k != "" {
			return sm[k], true
		}
	}
	sort.Slice(nonPass, func(i, j int) bool { return nonPassRank(sm[nonPass[i]]) < nonPassRank(sm[nonPass[j]]) })
	return sm[nonPass[0]], true
}

// recordOrder returns which of some names the parser recorded first in
// text, for parsers that read each line on its own (every parser whose
// names carry pytest's "[...]" parameters): the name produced by the
// earliest line parsed alone. It gives "" when no line alone produces any
// of them. Lines are parsed only when first asked.
func recordOrder(text string, parse logparse.Parser, rules harness.Rules) func([]string) string {
	var firstLine map[string]int
	return func(names []string) string {
		if firstLine == nil {
			firstLine = map[string]int{}
			for i, line := range strings.Split(text, "\n") {
				m, err := parse(line, rules)
				if err != nil {
					continue
				}
				for k := range m {
					if _, seen := firstLine[k]; !seen {
						firstLine[k] = i
					}
				}
			}
		}
		best, bestLine := "", -1
		for _, n := range names {
			if i, ok := firstLine[n]; ok && (bestLine < 0 || i < bestLine) {
				best, bestLine = n, i
			}
		}
		return best
	}
}

func nonPassRank(s logparse.Status) string {
	switch s {
	case logparse.FAILED:
		return "0"
	case logparse.ERROR:
		return "1"
	case logparse.SKIPPED:
		return "2"
	}
	return "3" + string(s)
}

// Input is one instance to grade.
type Input struct {
	InstanceID string
	// Log is the content of test_output.txt.
	Log string
	// Parser names the log parser ([logparse.Lookup]); empty means the
	// official parser of Repo ([harness.ParserForInstance]).
	Parser string
	// Repo is "owner/name"; it picks the parser when Parser is empty.
	Repo string
	// Version is the row's version, which the official parsers next and
	// lighthouse choose by (InstanceID is what immutable_js and jekyll
	// choose by).
	Version    string
	FailToPass []string
	PassToPass []string
	// FailOnly grades fail-only (see [harness.FailOnly] and the dataset's eval_type).
	FailOnly bool
	// Rules selects the official release reproduced; empty means v5.
	Rules harness.Rules
	// Grading is the rule that decides resolved; empty means the official
	// one. Any other is a rule a family registered ([RegisterRule]), which
	// reads the log and grades as the family's harness does.
	Grading harness.Grading
	// PatchIsNone is a prediction whose model_patch is null: the official
	// report says so and grades nothing.
	PatchIsNone bool
	// Regrade grades a log without any marker whole (rewrite mode over logs
	// of older harnesses).
	Regrade bool
	// InfraFailureReason (v5) marks a run that failed for infrastructure
	// reasons: report.json says infra_failure true with this reason.
	InfraFailureReason string
	// CountCheck cross-checks the parsed outcomes against the runner's own
	// counts; disagreements become report notes. Nil means the default for
	// the parser ([CountCheckFor]: pytest output is checked); [NoCountCheck]
	// turns it off.
	CountCheck CountCheck
	// Extra holds the row's own fields (dataset.Instance.Extra), for a
	// registered rule that grades with more of the row than its test
	// lists (Multi-SWE-bench's run and test-patch results). Optional.
	Extra map[string]json.RawMessage
}

// Grade grades one instance as the official get_eval_report does and
// returns its report.json.
//
// An unusable log is not an error: the report says
// patch_successfully_applied false and carries no tests_status. The error
// is non-nil where the official harness writes no report.json at all (the
// official parser raises) or the parser is unknown.
func Grade(in Input) (InstanceReport, error) {
	rules := in.Rules.OrDefault()
	if !rules.Valid() {
		return InstanceReport{}, fmt.Errorf("grade %s: %w: %q", in.InstanceID, ErrUnknownRules, rules)
	}
	if !KnownGrading(in.Grading) {
		return InstanceReport{}, fmt.Errorf("grade %s: %w: grading %q", in.InstanceID, ErrUnknownRules, in.Grading)
	}
	if rule := registered[in.Grading]; rule != nil {
		return rule(in)
	}
	rep := InstanceReport{InstanceID: in.InstanceID, Rules: rules}
	if rules == harness.V5 && in.InfraFailureReason != "" {
		rep.InfraFailure, rep.InfraFailureReason = true, in.InfraFailureReason
	}
	if in.PatchIsNone {
		rep.PatchIsNone = true
		return rep, nil
	}
	rep.PatchExists = true
	parser := in.Parser
	if parser == "" {
		parser = harness.ParserForInstance(in.Repo, in.InstanceID)
	}
	parse, ok := logparse.Bind(parser, logparse.Target{InstanceID: in.InstanceID, Version: in.Version})
	if !ok {
		return rep, fmt.Errorf("grade %s: %w", in.InstanceID, &logparse.UnknownParserError{Name: parser})
	}
	sm, ev, err := parseTestOutput(in.Log, parse, rules, in.Regrade)
	if err != nil {
		return rep, fmt.Errorf("grade %s: %w", in.InstanceID, err)
	}
	rep.Evaluation, rep.StatusMap = ev, sm
	rep.Notes.Forgery = ev.Forgery
	if !ev.Usable {
		// 5.0.2 classifies the test output of an unusable log: the reason is
		// reported, and infra_failure is true for environment reasons.
		if rules == harness.V5 && in.InfraFailureReason == "" {
			if reason := ClassifyFailure(in.Log); reason != "" {
				rep.InfraFailure, rep.InfraFailureReason = FailureTier(reason) == TierEnvironment, reason
			}
		}
		return rep, nil
	}
	rep.PatchSuccessfullyApplied = true
	text := universalNewlines(in.Log)
	if !ev.WholeLog && strings.Contains(text, harness.StartTestOutput) {
		text = testChunk(text)
	}
	ts := gradeTests(sm, in.FailToPass, in.PassToPass, in.FailOnly, rules, recordOrder(text, parse, rules))
	rep.TestsStatus = &ts
	rep.Resolved = ts.Resolution() == ResolvedFull
	check := in.CountCheck
	if check == nil {
		check = CountCheckFor(parser, rules)
	}
	if check != nil {
		rep.Notes.CountCheck = check(text, sm)
	}
	return rep, nil
}

// StartReport begins the report of a registered rule (see [RegisterRule])
// for in under rules, naming the rule g in its notes. done is true when
// the prediction has no patch: the report says so and there is nothing to
// grade; otherwise the report has PatchExists set and the rule goes on.
func StartReport(in Input, rules harness.Rules, g harness.Grading) (rep InstanceReport, done bool) {
	rep = InstanceReport{InstanceID: in.InstanceID, Rules: rules, Notes: Notes{Grading: g}}
	if in.PatchIsNone {
		rep.PatchIsNone = true
		return rep, true
	}
	rep.PatchExists = true
	return rep, false
}
