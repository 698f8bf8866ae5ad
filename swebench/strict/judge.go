package strict

import (
	"fmt"
	"strings"

	"github.com/swebox/swebox/swebench/grade"
	"github.com/swebox/swebox/swebench/harness"
	"github.com/swebox/swebox/swebench/logparse"
)

// Channels a strict verdict rests on, as report.json names them.
const (
	// ChannelRunner: the runner's own signed report ([Evidence]), checked
	// against the log.
	ChannelRunner = "runner-report"
	// ChannelLog: the log alone (a test command other than pytest, or a
	// regraded log), with the log rules.
	ChannelLog = "log"
)

// Input is one graded instance to judge.
type Input struct {
	// Report is the official report of the log; Judge changes its
	// Resolved and adds its strict note.
	Report *grade.InstanceReport
	// Log is the decoded test output.
	Log string
	// Parser is the row's log parser, bound.
	Parser     logparse.Parser
	Rules      harness.Rules
	FailToPass []string
	PassToPass []string
	FailOnly   bool
	// Evidence is what the strict run left; nil for a log graded on its
	// own (rewrite mode, the grade verb, an official log).
	Evidence *Evidence
}

// Judge applies the strict rules to an official report: the instance is
// resolved only when the official rules resolve it and no rule refuses it.
// Every finding is written to the report's strict note, refusals first.
// Strict grading never resolves what the official rules do not.
func Judge(in Input) {
	rep := in.Report
	var fs []Finding
	channel := ChannelLog
	if ev := in.Evidence; ev != nil {
		fs = append(fs, ev.Findings...)
		if ev.Channel {
			channel = ChannelRunner
			fs = append(fs, channelFindings(in, ev)...)
		}
	}
	if rep.TestsStatus != nil {
		fs = append(fs, logFindings(in)...)
	}
	sortFindings(fs)
	note := &grade.StrictNote{Channel: channel, OfficialResolved: rep.Resolved, Findings: []string{}}
	for _, f := range fs {
		note.Findings = append(note.Findings, f.String())
		if f.Action == Refused {
			rep.Resolved = false
		}
	}
	rep.Notes.Strict = note
}

// channelFindings compares the runner's report with the log.
func channelFindings(in Input, ev *Evidence) []Finding {
	var fs []Finding
	refuse := func(rule, format string, a ...any) {
		fs = append(fs, Finding{Rule: rule, Action: Refused, Detail: fmt.Sprintf(format, a...)})
	}
	if ev.Unsigned > 0 {
		refuse(RuleChannel, "%d record(s) of the runner's report carry no valid signature: written by something other than the plugin", ev.Unsigned)
	}
	switch {
	case !ev.Ran:
		refuse(RuleChannel, "the runner's report is missing: pytest never loaded the plugin")
		return fs
	case !ev.Ended:
		refuse(RuleChannel, "the runner's report has no closing record: the test process ended before pytest finished its session")
	case ev.ExitCode != nil && *ev.ExitCode != ev.EndExit:
		refuse(RuleExitStatus, "the test process exited %d, but pytest ended its session with %d", *ev.ExitCode, ev.EndExit)
	}
	// The runner's outcomes, named as the row's parser names them: the
	// summary lines pytest -rA prints, parsed by that parser.
	var b strings.Builder
	for _, t := range ev.Tests {
		fmt.Fprintf(&b, "%s %s\n", t.Status, t.ID)
	}
	sm, err := in.Parser(b.String(), in.Rules)
	if err != nil {
		refuse(RuleChannel, "the runner's report could not be read by the log parser: %v", err)
		return fs
	}
	runner := grade.GradeTests(sm, in.FailToPass, in.PassToPass, in.FailOnly, in.Rules)
	if ts := in.Report.TestsStatus; ts != nil {
		for _, c := range []struct {
			name      string
			log, mine grade.Results
		}{{"FAIL_TO_PASS", ts.FailToPass, runner.FailToPass}, {"PASS_TO_PASS", ts.PassToPass, runner.PassToPass}} {
			failed := map[string]bool{}
			for _, n := range c.mine.Failure {
				failed[n] = true
			}
			for _, n := range c.log.Success {
				if failed[n] {
					st, ok := grade.StatusOf(sm, n, in.Rules)
					if !ok {
						st = "missing"
					}
					refuse(RuleAgreement, "%s test %s passed according to the log, but the runner reported it %s", c.name, n, st)
				}
			}
		}
	}
	if runner.Resolution() != grade.ResolvedFull && in.Report.Resolved && len(fs) == 0 {
		refuse(RuleAgreement, "the runner's report does not resolve the instance")
	}
	return fs
}

// logFindings are the rules a log alone allows: the harness's markers
// once each and in order, no graded test reported both passing and not,
// and (under v4 too) the recorded exit status not contradicting a log
// without failures.
func logFindings(in Input) []Finding {
	var fs []Finding
	refuse := func(rule, format string, a ...any) {
		fs = append(fs, Finding{Rule: rule, Action: Refused, Detail: fmt.Sprintf(format, a...)})
	}
	text := strings.ReplaceAll(strings.ReplaceAll(in.Log, "\r\n", "\n"), "\r", "\n")
	starts, ends := markerLines(text, harness.StartTestOutput), markerLines(text, harness.EndTestOutput)
	switch {
	case len(starts) > 1 || len(ends) > 1:
		refuse(RuleMarkers, "the log holds %d start and %d end markers; the eval script prints one of each, so the tests printed the others", len(starts), len(ends))
	case len(starts) == 1 && len(ends) == 1 && ends[0] < starts[0]:
		refuse(RuleMarkers, "the end marker comes before the start marker")
	}
	graded := map[string]bool{}
	for _, n := range append(append([]string{}, in.FailToPass...), in.PassToPass...) {
		graded[n] = true
	}
	if in.Report.Resolved && in.Parser != nil {
		chunk := text
		if len(starts) > 0 && len(ends) > 0 && ends[len(ends)-1] > starts[0] {
			chunk = strings.Join(strings.Split(text, "\n")[starts[0]:ends[len(ends)-1]], "\n")
		}
		pass, fail := map[string]bool{}, map[string]bool{}
		for _, line := range strings.Split(chunk, "\n") {
			m, err := in.Parser(line, in.Rules)
			if err != nil {
				continue
			}
			for k, s := range m {
				if !graded[k] {
					continue
				}
				if s == logparse.PASSED || s == logparse.XFAIL {
					pass[k] = true
				} else if s == logparse.FAILED || s == logparse.ERROR {
					fail[k] = true
				}
			}
		}
		for _, n := range append(append([]string{}, in.FailToPass...), in.PassToPass...) {
			if pass[n] && fail[n] {
				refuse(RuleConflicting, "the log reports %s both passing and failing; the official parser keeps the last line", n)
			}
		}
	}
	if ec := in.Report.Evaluation.ExitCode; ec != nil && *ec != 0 && in.Report.Resolved && !in.FailOnly {
		anyFail := false
		for _, s := range in.Report.StatusMap {
			if s == logparse.FAILED || s == logparse.ERROR {
				anyFail = true
				break
			}
		}
		if !anyFail {
			refuse(RuleExitStatus, "the test command exited %d, yet the log shows no failed test", *ec)
		}
	}
	return fs
}

// markerLines returns the indexes of the lines holding marker.
func markerLines(text, marker string) []int {
	var out []int
	for i, line := range strings.Split(text, "\n") {
		if strings.Contains(line, marker) {
			out = append(out, i)
		}
	}
	return out
}
