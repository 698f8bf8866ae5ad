package pytestparse

import (
	"errors"
	"fmt"
	"strings"
)

// Outcome is the result pytest reported for a test. The zero value is not an
// outcome: it marks a test that started but never reported one.
type Outcome uint8

// The outcomes pytest reports, in the order [Outcomes] lists them.
const (
	Passed Outcome = iota + 1
	Failed
	Error
	Skipped
	XFailed
	XPassed
)

const numOutcomes = int(XPassed)

var outcomeNames = [...]string{
	Passed:  "passed",
	Failed:  "failed",
	Error:   "error",
	Skipped: "skipped",
	XFailed: "xfailed",
	XPassed: "xpassed",
}

// ErrUnknownOutcome is returned by [ParseOutcome] and [Outcome.UnmarshalText]
// for a name that is not one of the six outcomes.
var ErrUnknownOutcome = errors.New("unknown outcome")

// Outcomes returns the six outcomes in their canonical order: passed, failed,
// error, skipped, xfailed, xpassed.
func Outcomes() []Outcome {
	return []Outcome{Passed, Failed, Error, Skipped, XFailed, XPassed}
}

// Valid reports whether o is one of the six outcomes.
func (o Outcome) Valid() bool { return o >= Passed && o <= XPassed }

// String returns the lower-case name pytest uses in its closing line
// ("passed", "failed", "error", "skipped", "xfailed", "xpassed"), or
// "unknown" for the zero value.
func (o Outcome) String() string {
	if !o.Valid() {
		return "unknown"
	}
	return outcomeNames[o]
}

// MarshalText encodes o by its [Outcome.String] name.
func (o Outcome) MarshalText() ([]byte, error) {
	if !o.Valid() {
		return nil, fmt.Errorf("marshal outcome %d: %w", uint8(o), ErrUnknownOutcome)
	}
	return []byte(outcomeNames[o]), nil
}

// UnmarshalText decodes a name accepted by [ParseOutcome].
func (o *Outcome) UnmarshalText(b []byte) error {
	v, err := ParseOutcome(string(b))
	if err != nil {
		return err
	}
	*o = v
	return nil
}

// ParseOutcome maps a name to its outcome. It accepts the names of
// [Outcome.String] and pytest's status words in any case ("PASSED", "FAILED",
// "ERROR", "SKIPPED", "XFAIL", "XPASS", and the plural "errors").
func ParseOutcome(s string) (Outcome, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "passed":
		return Passed, nil
	case "failed":
		return Failed, nil
	case "error", "errors":
		return Error, nil
	case "skipped":
		return Skipped, nil
	case "xfailed", "xfail":
		return XFailed, nil
	case "xpassed", "xpass":
		return XPassed, nil
	}
	return 0, fmt.Errorf("parse outcome %q: %w", s, ErrUnknownOutcome)
}

// severity orders outcomes for the precedence rule of [Test]: when a test is
// reported with several outcomes, the most severe one is its verdict.
var severity = [...]uint8{
	Skipped: 1,
	XFailed: 2,
	Passed:  3,
	XPassed: 4,
	Error:   5,
	Failed:  6,
}

// OutcomeSet is a set of outcomes, used for every outcome a test was reported
// with (a pass followed by an error at teardown is {passed, error}).
type OutcomeSet uint8

// Has reports whether o is in the set.
func (s OutcomeSet) Has(o Outcome) bool { return o.Valid() && s&(1<<o) != 0 }

// With returns the set with o added.
func (s OutcomeSet) With(o Outcome) OutcomeSet {
	if !o.Valid() {
		return s
	}
	return s | 1<<o
}

// Len returns the number of outcomes in the set.
func (s OutcomeSet) Len() int {
	n := 0
	for _, o := range Outcomes() {
		if s.Has(o) {
			n++
		}
	}
	return n
}

// Outcomes lists the members of the set in canonical order.
func (s OutcomeSet) Outcomes() []Outcome {
	var out []Outcome
	for _, o := range Outcomes() {
		if s.Has(o) {
			out = append(out, o)
		}
	}
	return out
}

// String joins the member names with "+", as in "passed+error".
func (s OutcomeSet) String() string {
	names := make([]string, 0, 2)
	for _, o := range s.Outcomes() {
		names = append(names, o.String())
	}
	return strings.Join(names, "+")
}

// MarshalText encodes the set as its [OutcomeSet.String].
func (s OutcomeSet) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText decodes the form written by [OutcomeSet.MarshalText].
func (s *OutcomeSet) UnmarshalText(b []byte) error {
	var set OutcomeSet
	if len(b) > 0 {
		for _, name := range strings.Split(string(b), "+") {
			o, err := ParseOutcome(name)
			if err != nil {
				return err
			}
			set = set.With(o)
		}
	}
	*s = set
	return nil
}

// Source says which kind of line gave a test its verdict.
type Source uint8

// The kinds of lines a test record comes from.
const (
	// SourceVerbose: a -v progress line, "path::test PASSED [ 10%]", or a
	// bare status line that finishes a test whose output (-s) came first.
	SourceVerbose Source = iota + 1
	// SourceXdist: a pytest-xdist line, "[gw0] [ 50%] PASSED path::test".
	SourceXdist
	// SourceSummary: a short test summary line (-r), "FAILED path::test - msg".
	SourceSummary
	// SourceHeader: a section header, "____ ERROR collecting path ____".
	SourceHeader
)

var sourceNames = [...]string{
	SourceVerbose: "verbose",
	SourceXdist:   "xdist",
	SourceSummary: "summary",
	SourceHeader:  "header",
}

// String returns "verbose", "xdist", "summary" or "header" ("unknown" for
// anything else).
func (s Source) String() string {
	if s < SourceVerbose || s > SourceHeader {
		return "unknown"
	}
	return sourceNames[s]
}

// MarshalText encodes s by its [Source.String] name.
func (s Source) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText decodes a name written by [Source.MarshalText].
func (s *Source) UnmarshalText(b []byte) error {
	for i, name := range sourceNames {
		if i > 0 && name == string(b) {
			*s = Source(i)
			return nil
		}
	}
	return fmt.Errorf("parse source %q: unknown source", b)
}
