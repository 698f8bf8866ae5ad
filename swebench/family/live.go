package family

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/swebox/swebox/swebench/dataset"
	"github.com/swebox/swebox/swebench/grade"
	"github.com/swebox/swebox/swebench/harness"
	"github.com/swebox/swebox/swebench/logparse"
	"github.com/swebox/swebox/swebench/spec"
)

// SWE-bench-Live (Linux): rows carry their own commands (test_cmds,
// rebuild_cmds, print_cmds), log parser and image (docker_image, else
// starryzhang/sweb.eval.x86_64.<id> named as the official images), and
// are graded by Live's rule (GradingLive). Its harness is
// microsoft/SWE-bench-Live's evaluation/evaluation.py with RepoLaunch
// (launch/, microsoft/RepoLaunch at 7735b1e) as its runtime.
func init() {
	grade.RegisterRule(GradingLive, gradeLive)
	Register(&Family{
		Name:    "swe-bench-live",
		Aliases: []string{"live"},
		Title:   "SWE-bench-Live",
		Datasets: []Dataset{
			{ID: "SWE-bench-Live/SWE-bench-Live", Splits: []string{"full", "lite", "verified"}},
			{ID: "SWE-bench-Live/MultiLang"},
		},
		Upstream:  Upstream{Repository: "microsoft/SWE-bench-Live", Commit: "70ec57e852e3f2d195790fe71f553e272c691833"},
		Namespace: "starryzhang",
		Claim: func(inst dataset.Instance) Claim {
			if _, ok := inst.Extra["test_cmds"]; ok {
				return ClaimRow
			}
			return ClaimNone
		},
		Spec:    liveSpec,
		Grading: GradingLive,
	})
}

// ErrParserScript is a row whose log parser is a Python program (Live's
// RepoLaunch parsers, which its harness exec()s on the host): swebox does
// not run a row's Python on the host, and running it in a sandbox is not
// built yet.
var ErrParserScript = errors.New("the row's log parser is a Python program")

// liveSpec is Live's evaluate_instance as an eval script: the test patch
// applied as RepoLaunch applies patches, the rebuild commands, the test
// commands, then the print commands' output between the markers (what
// Live parses). Without print commands the test commands go to
// run_test.sh, run with their output in testlog.out, which is printed, as
// Live does for its Python rows. The commands run with -u and pipefail
// off, as in Live's interactive shell.
func liveSpec(inst dataset.Instance, opts ...spec.Option) (spec.TestSpec, error) {
	var cmds [3][]string
	for i, field := range []string{"test_cmds", "rebuild_cmds", "print_cmds"} {
		list, err := liveList(inst.Extra[field])
		if err != nil {
			return spec.TestSpec{}, fmt.Errorf("spec for %s: field %s: %w", inst.InstanceID, field, err)
		}
		cmds[i] = list
	}
	test, rebuild, print := strings.Join(cmds[0], " ; "), strings.Join(cmds[1], " ; "), strings.Join(cmds[2], " ; ")
	parser := inst.LogParser
	if parser == "" {
		// evaluation.py: instance.get("log_parser", instance.get("parser", ""))
		var p string
		if raw, ok := inst.Extra["parser"]; ok && json.Unmarshal(raw, &p) == nil {
			parser = p
		}
	}
	if strings.ToLower(strings.TrimSpace(parser)) != harness.ParserPytest {
		return spec.TestSpec{}, fmt.Errorf("spec for %s: %w", inst.InstanceID, ErrParserScript)
	}
	lines := []string{
		"set +u +o pipefail",
		"cd " + harness.RepoDir,
		"git apply --reject --whitespace=nowarn - <<'" + spec.HeredocDelimiter + "'\n" + inst.TestPatch + "\n" + spec.HeredocDelimiter,
	}
	if strings.TrimSpace(rebuild) != "" {
		lines = append(lines, rebuild)
	}
	if strings.TrimSpace(print) == "" {
		lines = append(lines, "cat > run_test.sh <<'CC_PROMPT'\n"+test+"\nCC_PROMPT", "bash run_test.sh > testlog.out 2>&1")
		print = "cat testlog.out"
	} else {
		lines = append(lines, test)
	}
	lines = append(lines,
		"{ set +x; } 2>/dev/null",
		"echo '"+harness.StartTestOutput+"'",
		print,
		"echo '"+harness.EndTestOutput+"'",
	)
	row := inst
	row.EvalScript = strings.Join(lines, "\n")
	row.LogParser = harness.ParserPytest
	row.EvalType = dataset.EvalTypePassAndFail
	if img, ok := inst.Extra["docker_image"]; ok {
		var s string
		if json.Unmarshal(img, &s) == nil {
			row.Image = s
		}
	}
	ts, err := spec.For(row, opts...)
	if err != nil {
		return ts, err
	}
	ts.Grading = GradingLive
	return ts, nil
}

// liveList reads a list of strings, or a string holding one (the Hub's
// Parquet form), or nothing.
func liveList(raw json.RawMessage) ([]string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var list []string
	if err := json.Unmarshal(raw, &list); err == nil {
		return list, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("want a list of strings, got %s", dataset.JSONKind(raw))
	}
	if err := json.Unmarshal([]byte(s), &list); err != nil {
		return nil, fmt.Errorf("want a list of strings, got a string that holds none")
	}
	return list, nil
}

// GradingLive is SWE-bench-Live's rule (evaluation/evaluation.py,
// run_instance, at 70ec57e): every FAIL_TO_PASS test passes and no
// FAIL_TO_PASS or PASS_TO_PASS test fails; a PASS_TO_PASS test that is
// missing or skipped counts neither way. Its parser reads the test output
// between the markers (its copy of the v4 pytest parser, no whole-log
// retry).
const GradingLive harness.Grading = "swe-bench-live"

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
func LiveTests(status map[string]string, failToPass, passToPass []string) (grade.TestsStatus, bool) {
	ts := grade.NewTestsStatus()
	sort := func(names []string, into *grade.Results) {
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
func gradeLive(in grade.Input) (grade.InstanceReport, error) {
	rep, done := grade.StartReport(in, in.Rules.OrDefault(), GradingLive)
	if done {
		return rep, nil
	}
	parse, ok := logparse.Bind(in.Parser, logparse.Target{InstanceID: in.InstanceID, Version: in.Version})
	if !ok {
		return rep, fmt.Errorf("grade %s: %w", in.InstanceID, &logparse.UnknownParserError{Name: in.Parser})
	}
	text := grade.UniversalNewlines(in.Log)
	if !strings.Contains(text, harness.StartTestOutput) || !strings.Contains(text, harness.EndTestOutput) {
		rep.Evaluation.Reason = grade.ReasonMissingMarkers
		return rep, nil
	}
	for _, marker := range grade.FailureMarkers() {
		if strings.Contains(text, marker) {
			rep.Evaluation.Reason, rep.Evaluation.Marker = grade.ReasonFailureMarker, marker
			return rep, nil
		}
	}
	sm, err := parse(grade.TestChunk(text), harness.V4)
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
