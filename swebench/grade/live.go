package grade

import (
	"fmt"
	"strings"

	"github.com/swebox/swebox/swebench/harness"
	"github.com/swebox/swebox/swebench/logparse"
)

// LiveStatus is the status SWE-bench-Live's default_pytest_parser gives a
// test (evaluation/evaluation.py at 70ec57e): "pass" for PASSED, "skip"
// for SKIPPED, "fail" for anything else (FAILED, ERROR and XFAIL).
func LiveStatus(s logparse.Status) string {
	switch s {
	case logparse.PASSED:
		return "pass"
	case logparse.SKIPPED:
		return "skip"
	}
	return "fail"
}

// LiveTests is SWE-bench-Live's run_instance rule (evaluation.py at
// 70ec57e): a test succeeds when its status holds "pass", fails when it
// holds "fail"; a missing or skipped test is in neither list. Resolved
// when no FAIL_TO_PASS or PASS_TO_PASS test fails and every FAIL_TO_PASS
// test succeeds (as a set, so a listed duplicate counts once). Upstream
// writes each list as a set in hash order; here they keep the dataset's
// order.
func LiveTests(status map[string]string, failToPass, passToPass []string) (TestsStatus, bool) {
	ts := TestsStatus{
		FailToPass: Results{Success: []string{}, Failure: []string{}},
		PassToPass: Results{Success: []string{}, Failure: []string{}},
		FailToFail: Results{Success: []string{}, Failure: []string{}},
		PassToFail: Results{Success: []string{}, Failure: []string{}},
	}
	sort := func(names []string, into *Results) {
		seen := map[string]bool{}
		for _, n := range names {
			s, ok := status[n]
			if !ok || seen[n] {
				continue
			}
			seen[n] = true
			if strings.Contains(strings.ToLower(s), "pass") {
				into.Success = append(into.Success, n)
			}
			if strings.Contains(strings.ToLower(s), "fail") {
				into.Failure = append(into.Failure, n)
			}
		}
	}
	sort(failToPass, &ts.FailToPass)
	sort(passToPass, &ts.PassToPass)
	all := map[string]bool{}
	for _, n := range ts.FailToPass.Success {
		all[n] = true
	}
	f2p := true
	for _, n := range failToPass {
		f2p = f2p && all[n]
	}
	return ts, f2p && len(ts.FailToPass.Failure) == 0 && len(ts.PassToPass.Failure) == 0
}

// gradeLive is Grade under SWE-bench-Live's rule: the parser reads the
// test output between the markers (the print command's output, which is
// what Live parses) with v4's pytest rules, its statuses become Live's
// and LiveTests decides.
func gradeLive(in Input, rules harness.Rules) (InstanceReport, error) {
	rep := InstanceReport{InstanceID: in.InstanceID, Rules: rules, Notes: Notes{Grading: harness.GradingLive}}
	if in.PatchIsNone {
		rep.PatchIsNone = true
		return rep, nil
	}
	rep.PatchExists = true
	parse, ok := logparse.Bind(in.Parser, logparse.Target{InstanceID: in.InstanceID, Version: in.Version})
	if !ok {
		return rep, fmt.Errorf("grade %s: %w", in.InstanceID, &logparse.UnknownParserError{Name: in.Parser})
	}
	text := universalNewlines(in.Log)
	if !strings.Contains(text, harness.StartTestOutput) || !strings.Contains(text, harness.EndTestOutput) {
		rep.Evaluation.Reason = ReasonMissingMarkers
		return rep, nil
	}
	for _, marker := range failureMarkers {
		if strings.Contains(text, marker) {
			rep.Evaluation.Reason, rep.Evaluation.Marker = ReasonFailureMarker, marker
			return rep, nil
		}
	}
	sm, err := parse(testChunk(text), harness.V4)
	if err != nil {
		return rep, fmt.Errorf("grade %s: parse test output: %w", in.InstanceID, err)
	}
	rep.Evaluation.Usable, rep.StatusMap = true, sm
	rep.PatchSuccessfullyApplied = true
	status := make(map[string]string, len(sm))
	for k, s := range sm {
		status[k] = LiveStatus(s)
	}
	ts, resolved := LiveTests(status, in.FailToPass, in.PassToPass)
	rep.TestsStatus, rep.Resolved = &ts, resolved
	return rep, nil
}
