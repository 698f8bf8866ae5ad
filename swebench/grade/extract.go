package grade

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/swebox/swebox/swebench/logparse"
)

// Markers the eval script and the harness write into test_output.txt
// (swebench/harness/constants). Under the script's `set -x` the start and
// end markers appear as "+ : '>>>>> Start Test Output'".
const (
	StartMarker          = ">>>>> Start Test Output"
	EndMarker            = ">>>>> End Test Output"
	ExitCodeMarker       = ">>>>> Test Exit Code"
	PatchApplyFailMarker = ">>>>> Patch Apply Failed"
	ResetFailedMarker    = ">>>>> Reset Failed"
	TestsErroredMarker   = ">>>>> Tests Errored"
	TestsTimedOutMarker  = ">>>>> Tests Timed Out"
)

// ErrUnknownRules is a rule set other than v4 and v5.
var ErrUnknownRules = errors.New("unknown grading rules")

// failureMarkers reject a log wherever they appear, in this order.
var failureMarkers = []string{PatchApplyFailMarker, ResetFailedMarker, TestsErroredMarker, TestsTimedOutMarker}

// Reason says why a log is unusable: the official get_logs_eval returns
// ({}, False) and report.json says patch_successfully_applied false.
type Reason string

const (
	// ReasonFailureMarker: the log holds one of the harness's failure
	// markers ([Evaluation.Marker] says which), anywhere in the file.
	ReasonFailureMarker Reason = "failure_marker"
	// ReasonMissingMarkers: the start or the end marker is missing.
	ReasonMissingMarkers Reason = "missing_markers"
	// ReasonNoTestsRan (v5): nothing parsed and no runner summary shows a
	// test that ran.
	ReasonNoTestsRan Reason = "no_tests_ran"
	// ReasonExitCode (v5): the test command exited non-zero, yet the log
	// names tests and none of them failed: PASSED lines forged by the code
	// under test (#620).
	ReasonExitCode Reason = "exit_code_contradicts_log"
)

// Evaluation describes how a log was read.
type Evaluation struct {
	// Usable is the official "patch_successfully_applied": the log passed
	// every check and its tests were graded.
	Usable bool
	// Reason is why the log is unusable; empty when it is usable.
	Reason Reason
	// Marker is the failure marker found, for ReasonFailureMarker.
	Marker string
	// WholeLog is set when the status map comes from the whole file: the
	// text between the markers parsed to nothing (the official fallback),
	// or a log without any marker was regraded.
	WholeLog bool
	// ExitCode is the test command's exit code recorded by a v5 eval
	// script (">>>>> Test Exit Code: N", the last such line), or nil.
	ExitCode *int
	// Forgery lists (v5 only) signs that the tests printed the harness's
	// own markers: more than one start or end marker, an end marker before
	// the start, exit-code lines that disagree. They never change the
	// verdict, which stays the official one; they are reported.
	Forgery []string
}

// ParseTestOutput reads test_output.txt as the official get_logs_eval does
// and parses it with the named parser ([logparse.Lookup]).
//
// The text is taken as Python's text-mode open() returns it ("\r\n" and
// "\r" become "\n"). A log holding a failure marker anywhere, or missing
// the start or the end marker, is unusable. Otherwise the parser reads the
// text after the first start marker, up to the next start or end marker
// (Python's content.split(START)[1].split(END)[0]); when that yields nothing,
// the whole file is parsed instead. A start or end marker printed by the
// tests themselves therefore cuts the parsed text short, exactly as in the
// official code; under v5 such forgeries are listed in
// [Evaluation.Forgery].
//
// v5 adds two rejections: an empty map with no sign that any test ran, and
// a non-zero recorded exit code with a non-empty map holding no FAILED or
// ERROR.
//
// With regrade (rewrite mode over logs of older harnesses, which wrote no
// markers) a log with neither marker is parsed whole; one with a start
// marker but no end marker stays unusable.
//
// The error is non-nil only for an unknown parser or where the official
// parser raises ([logparse.ErrParserRaised]): the official harness then
// writes no report at all.
func ParseTestOutput(log, parser string, rules logparse.Rules, regrade bool) (logparse.StatusMap, Evaluation, error) {
	rules = effectiveRules(rules)
	if !rules.Valid() {
		return nil, Evaluation{}, fmt.Errorf("%w: %q", ErrUnknownRules, rules)
	}
	parse, ok := logparse.Lookup(parser)
	if !ok {
		return nil, Evaluation{}, &logparse.UnknownParserError{Name: parser}
	}
	log = universalNewlines(log)
	var ev Evaluation
	if rules == logparse.V5 {
		ev.ExitCode, ev.Forgery = exitCode(log)
	}
	for _, marker := range failureMarkers {
		if strings.Contains(log, marker) {
			ev.Reason, ev.Marker = ReasonFailureMarker, marker
			return logparse.StatusMap{}, ev, nil
		}
	}
	hasStart, hasEnd := strings.Contains(log, StartMarker), strings.Contains(log, EndMarker)
	var sm logparse.StatusMap
	var err error
	switch {
	case hasStart && hasEnd:
		if rules == logparse.V5 {
			ev.Forgery = append(markerForgery(log), ev.Forgery...)
		}
		if sm, err = parse(testChunk(log), rules); err != nil {
			return nil, ev, fmt.Errorf("parse test output: %w", err)
		}
		if len(sm) == 0 {
			ev.WholeLog = true
			if sm, err = parse(log, rules); err != nil {
				return nil, ev, fmt.Errorf("parse whole log: %w", err)
			}
		}
	case regrade && !hasStart && !hasEnd:
		ev.WholeLog = true
		if sm, err = parse(log, rules); err != nil {
			return nil, ev, fmt.Errorf("parse whole log: %w", err)
		}
	default:
		ev.Reason = ReasonMissingMarkers
		return logparse.StatusMap{}, ev, nil
	}
	if rules == logparse.V5 {
		if len(sm) == 0 && !suiteRan.MatchString(log) {
			ev.Reason = ReasonNoTestsRan
			return logparse.StatusMap{}, ev, nil
		}
		if ev.ExitCode != nil && *ev.ExitCode != 0 && len(sm) > 0 && !anyFailure(sm) {
			ev.Reason = ReasonExitCode
			return logparse.StatusMap{}, ev, nil
		}
	}
	ev.Usable = true
	return sm, ev, nil
}

func effectiveRules(r logparse.Rules) logparse.Rules {
	if r == "" {
		return logparse.V5
	}
	return r
}

// universalNewlines is what Python's text-mode read does to line endings.
func universalNewlines(s string) string {
	if !strings.Contains(s, "\r") {
		return s
	}
	return strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\r", "\n")
}

// testChunk is content.split(START)[1].split(END)[0]: the text after the
// first start marker, up to the next start or end marker.
func testChunk(log string) string {
	_, rest, _ := strings.Cut(log, StartMarker)
	rest, _, _ = strings.Cut(rest, StartMarker)
	rest, _, _ = strings.Cut(rest, EndMarker)
	return rest
}

// markerForgery describes marker occurrences an honest eval script does
// not produce: it prints each marker once, start before end.
func markerForgery(log string) []string {
	var notes []string
	if n := strings.Count(log, StartMarker); n > 1 {
		notes = append(notes, fmt.Sprintf("start marker appears %d times; the graded output ends at the second", n))
	}
	if n := strings.Count(log, EndMarker); n > 1 {
		notes = append(notes, fmt.Sprintf("end marker appears %d times; the graded output ends at the first after the start", n))
	}
	if strings.Index(log, EndMarker) < strings.Index(log, StartMarker) {
		notes = append(notes, "an end marker precedes the start marker")
	}
	return notes
}

var exitCodeLine = regexp.MustCompile(regexp.QuoteMeta(ExitCodeMarker) + `:[ \t]*(-?[0-9]+)`)

// exitCode returns the last recorded exit code. The eval script echoes it
// after the end marker, so anything the tests print comes earlier; a
// disagreeing earlier value is reported as forged. (Under set -x the
// traced echo command carries the same value.)
func exitCode(log string) (*int, []string) {
	all := exitCodeLine.FindAllStringSubmatch(log, -1)
	if len(all) == 0 {
		return nil, nil
	}
	last, err := strconv.Atoi(all[len(all)-1][1])
	if err != nil {
		return nil, []string{"unreadable exit code " + strconv.Quote(all[len(all)-1][1])}
	}
	var notes []string
	for _, g := range all[:len(all)-1] {
		if v, err := strconv.Atoi(g[1]); err != nil || v != last {
			notes = append(notes, fmt.Sprintf("exit code line %q disagrees with the recorded exit code %d", g[0], last))
		}
	}
	return &last, notes
}

func anyFailure(sm logparse.StatusMap) bool {
	for _, s := range sm {
		if s == logparse.FAILED || s == logparse.ERROR {
			return true
		}
	}
	return false
}

// suiteRan is evidence, in runners' own summaries, that at least one test
// ran (v5's SUITE_RAN): Karma, Mocha, Jest, TAP and Jasmine counts, each
// required to be non-zero.
var suiteRan = regexp.MustCompile(`(?m)` + strings.Join([]string{
	`Executed [1-9][0-9]* of [0-9]+`,                          // karma progress
	`TOTAL: [1-9][0-9]* (?:SUCCESS|FAILED)`,                   // karma summary
	`(?:^|[^0-9])[1-9][0-9]* passing`,                         // mocha
	`Tests:[ \t]+[1-9]`,                                       // jest "Tests: 1 failed, 2 passed, 3 total"
	`Test Suites:[ \t]+(?:[0-9]+ [a-z]+, )*[1-9][0-9]* total`, // jest
	`^# tests [1-9][0-9]*`,                                    // TAP
	`^# pass +[1-9][0-9]*`,                                    // TAP (node:test, tape)
	`(?:^|[^0-9])[1-9][0-9]* specs?, [0-9]+ failures?`,        // jasmine
}, "|"))
