package grade

import (
	"fmt"
	"sort"
	"strings"

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

// failOnlyRepos are FAIL_ONLY_REPOS: repositories whose parsers list only
// failing tests, graded fail-only.
var failOnlyRepos = map[string]logparse.Rules{
	"chartjs/Chart.js":      logparse.V4,
	"processing/p5.js":      logparse.V4,
	"markedjs/marked":       logparse.V4,
	"bpmn-io/bpmn-js":       logparse.V5,
	"openlayers/openlayers": logparse.V5,
	"eslint/eslint":         logparse.V5,
}

// FailOnly reports whether repo is graded fail-only under rules (its
// FAIL_ONLY_REPOS; v5 datasets may also say eval_type "fail_only").
func FailOnly(repo string, rules logparse.Rules) bool {
	since, ok := failOnlyRepos[repo]
	return ok && (since == logparse.V4 || effectiveRules(rules) == logparse.V5)
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
func GradeTests(sm logparse.StatusMap, failToPass, passToPass []string, failOnly bool, rules logparse.Rules) TestsStatus {
	rules = effectiveRules(rules)
	ts := TestsStatus{
		FailToPass: Results{Success: []string{}, Failure: []string{}},
		PassToPass: Results{Success: []string{}, Failure: []string{}},
		FailToFail: Results{Success: []string{}, Failure: []string{}},
		PassToFail: Results{Success: []string{}, Failure: []string{}},
	}
	grade := func(name string, maintain bool, into *Results) {
		status, found := StatusOf(sm, name, rules)
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
		case passed || (rules == logparse.V5 && maintain && skipped):
			into.Success = append(into.Success, name)
		case failed || (rules == logparse.V5 && skipped):
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
// Which status stands for an agreeing non-pass group is not fixed by the
// official rule (it takes the first match in dict order); here a FAILED or
// ERROR member wins over SKIPPED, so a skipped sibling cannot mask a failed
// one (#663). For the passing group the result is PASSED.
func StatusOf(sm logparse.StatusMap, name string, rules logparse.Rules) (logparse.Status, bool) {
	if s, ok := sm[name]; ok {
		return s, true
	}
	if effectiveRules(rules) != logparse.V5 || strings.Count(name, "[") <= strings.Count(name, "]") {
		return "", false
	}
	var pass, nonPass []logparse.Status
	for k, s := range sm {
		if !strings.HasPrefix(k, name) {
			continue
		}
		if s == logparse.PASSED || s == logparse.XFAIL {
			pass = append(pass, s)
		} else {
			nonPass = append(nonPass, s)
		}
	}
	switch {
	case len(pass) > 0 && len(nonPass) > 0, len(pass)+len(nonPass) == 0:
		return "", false
	case len(pass) > 0:
		return logparse.PASSED, true
	}
	sort.Slice(nonPass, func(i, j int) bool { return nonPassRank(nonPass[i]) < nonPassRank(nonPass[j]) })
	return nonPass[0], true
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
	// official parser of Repo ([logparse.ForInstance]).
	Parser string
	// Repo is "owner/name"; it picks the parser when Parser is empty.
	Repo       string
	FailToPass []string
	PassToPass []string
	// FailOnly grades fail-only (see [FailOnly] and the dataset's eval_type).
	FailOnly bool
	// Rules selects the official release reproduced; empty means v5.
	Rules logparse.Rules
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
}

// Grade grades one instance as the official get_eval_report does and
// returns its report.json.
//
// An unusable log is not an error: the report says
// patch_successfully_applied false and carries no tests_status. The error
// is non-nil where the official harness writes no report.json at all (the
// official parser raises) or the parser is unknown.
func Grade(in Input) (InstanceReport, error) {
	rules := effectiveRules(in.Rules)
	if !rules.Valid() {
		return InstanceReport{}, fmt.Errorf("grade %s: %w: %q", in.InstanceID, ErrUnknownRules, rules)
	}
	rep := InstanceReport{InstanceID: in.InstanceID, Rules: rules}
	if rules == logparse.V5 && in.InfraFailureReason != "" {
		rep.InfraFailure, rep.InfraFailureReason = true, in.InfraFailureReason
	}
	if in.PatchIsNone {
		rep.PatchIsNone = true
		return rep, nil
	}
	rep.PatchExists = true
	parser := in.Parser
	if parser == "" {
		parser = logparse.ForInstance(in.Repo, in.InstanceID)
	}
	sm, ev, err := ParseTestOutput(in.Log, parser, rules, in.Regrade)
	if err != nil {
		return rep, fmt.Errorf("grade %s: %w", in.InstanceID, err)
	}
	rep.Evaluation, rep.StatusMap = ev, sm
	rep.Notes.Forgery = ev.Forgery
	if !ev.Usable {
		return rep, nil
	}
	rep.PatchSuccessfullyApplied = true
	ts := GradeTests(sm, in.FailToPass, in.PassToPass, in.FailOnly, rules)
	rep.TestsStatus = &ts
	rep.Resolved = ts.Resolution() == ResolvedFull
	check := in.CountCheck
	if check == nil {
		check = CountCheckFor(parser, rules)
	}
	if check != nil {
		text := universalNewlines(in.Log)
		if !ev.WholeLog && strings.Contains(text, StartMarker) {
			text = testChunk(text)
		}
		rep.Notes.CountCheck = check(text, sm)
	}
	return rep, nil
}
