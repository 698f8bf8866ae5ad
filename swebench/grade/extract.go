package grade

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"unicode"

	"github.com/swebox/swebox/swebench/harness"
	"github.com/swebox/swebox/swebench/logparse"
)

// ErrUnknownRules is a rule set other than v4 and v5.
var ErrUnknownRules = errors.New("unknown grading rules")

// failureMarkers reject a log wherever they appear, in this order.
var failureMarkers = []string{harness.PatchApplyFailMarker, harness.ResetFailedMarker, harness.TestsErroredMarker, harness.TestsTimedOutMarker}

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
func ParseTestOutput(log, parser string, rules harness.Rules, regrade bool) (logparse.StatusMap, Evaluation, error) {
	parse, ok := logparse.Lookup(parser)
	if !ok {
		return nil, Evaluation{}, &logparse.UnknownParserError{Name: parser}
	}
	return parseTestOutput(log, parse, rules, regrade)
}

// parseTestOutput is ParseTestOutput with the parser already bound (see
// [logparse.Bind]).
func parseTestOutput(log string, parse logparse.Parser, rules harness.Rules, regrade bool) (logparse.StatusMap, Evaluation, error) {
	rules = rules.OrDefault()
	if !rules.Valid() {
		return nil, Evaluation{}, fmt.Errorf("%w: %q", ErrUnknownRules, rules)
	}
	log = universalNewlines(log)
	var ev Evaluation
	if rules == harness.V5 {
		ev.ExitCode, ev.Forgery = exitCode(log)
	}
	for _, marker := range failureMarkers {
		if strings.Contains(log, marker) {
			ev.Reason, ev.Marker = ReasonFailureMarker, marker
			return logparse.StatusMap{}, ev, nil
		}
	}
	hasStart, hasEnd := strings.Contains(log, harness.StartTestOutput), strings.Contains(log, harness.EndTestOutput)
	var sm logparse.StatusMap
	var err error
	switch {
	case hasStart && hasEnd:
		if rules == harness.V5 {
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
	if rules == harness.V5 {
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
	_, rest, _ := strings.Cut(log, harness.StartTestOutput)
	rest, _, _ = strings.Cut(rest, harness.StartTestOutput)
	rest, _, _ = strings.Cut(rest, harness.EndTestOutput)
	return rest
}

// markerForgery describes marker occurrences an honest eval script does
// not produce: it prints each marker once, start before end.
func markerForgery(log string) []string {
	var notes []string
	if n := strings.Count(log, harness.StartTestOutput); n > 1 {
		notes = append(notes, fmt.Sprintf("start marker appears %d times; the graded output ends at the second", n))
	}
	if n := strings.Count(log, harness.EndTestOutput); n > 1 {
		notes = append(notes, fmt.Sprintf("end marker appears %d times; the graded output ends at the first after the start", n))
	}
	if strings.Index(log, harness.EndTestOutput) < strings.Index(log, harness.StartTestOutput) {
		notes = append(notes, "an end marker precedes the start marker")
	}
	return notes
}

// Python's \s and \d, which 5.0.2's patterns use.
const (
	pySpace = `[\t-\r\x1c-\x20\x{85}\x{a0}\x{1680}\x{2000}-\x{200a}\x{2028}\x{2029}\x{202f}\x{205f}\x{3000}]`
	pyDigit = `\p{Nd}`
	pyWord  = `[\p{L}\p{N}_]`
)

// exitCodeLine is 5.0.2's TEST_EXIT_CODE_RE.
var exitCodeLine = regexp.MustCompile(regexp.QuoteMeta(harness.ExitCodeMarker) + `:` + pySpace + `*(-?` + pyDigit + `+)`)

// exitCode is 5.0.2's parse_test_exit_code: the first recorded exit code
// (re.search). The eval script echoes the real one after the end marker
// (under set -x its traced echo carries the same value), so a line the
// tests print comes first and wins, as upstream; a later value that
// disagrees is reported as forged.
func exitCode(log string) (*int, []string) {
	all := exitCodeLine.FindAllStringSubmatch(log, -1)
	if len(all) == 0 {
		return nil, nil
	}
	first, ok := parsePyInt(all[0][1])
	if !ok {
		return nil, []string{"unreadable exit code " + strconv.Quote(all[0][1])}
	}
	var notes []string
	for _, g := range all[1:] {
		if v, ok := parsePyInt(g[1]); !ok || v != first {
			notes = append(notes, fmt.Sprintf("exit code line %q disagrees with the first recorded exit code %d, which grading uses", g[0], first))
		}
	}
	return &first, notes
}

// parsePyInt is Python's int() of an optional "-" and decimal digits of any
// script (each Unicode digit run counts from its own zero).
func parsePyInt(s string) (int, bool) {
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	v := 0
	for _, r := range s {
		zero := r
		for unicode.Is(unicode.Nd, zero-1) {
			zero--
		}
		d := int(r-zero) % 10
		if v > (math.MaxInt-d)/10 {
			return 0, false
		}
		v = v*10 + d
	}
	if neg {
		v = -v
	}
	return v, s != ""
}

func anyFailure(sm logparse.StatusMap) bool {
	for _, s := range sm {
		if s == logparse.FAILED || s == logparse.ERROR {
			return true
		}
	}
	return false
}

// suiteRan is 5.0.2's SUITE_RAN, evidence in runners' own summaries that
// at least one test ran: Karma, Mocha, Jest, TAP and Jasmine counts, each
// required to be non-zero, and the "': ok" lines of OpenLayers' rendering
// tests.
var suiteRan = regexp.MustCompile(`(?m)` + strings.Join([]string{
	`Executed [1-9]` + pyDigit + `* of ` + pyDigit + `+`,
	`TOTAL: [1-9]` + pyDigit + `* (?:SUCCESS|FAILED)`,
	`[1-9]` + pyDigit + `* passing`,
	`Tests:` + pySpace + `+[1-9]` + pyDigit + `*`,
	`Test Suites:` + pySpace + `+(?:` + pyDigit + `+ ` + pyWord + `+, )*[1-9]` + pyDigit + `* total`,
	`^# tests [1-9]` + pyDigit + `*`,
	`[1-9]` + pyDigit + `* specs?, ` + pyDigit + `+ failures?`,
	`': ok$`,
}, "|"))
