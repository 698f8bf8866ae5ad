package logparse

import (
	"errors"

	"sort"
	"strconv"
	"strings"

	"github.com/swebox/swebox/swebench/harness"
)

// Status is a test outcome as the official parsers record it. The five
// constants are the official TestStatus values. A line-based parser stores
// the raw status token of the line it read, so a map can hold other values
// too (for example "ERROR:" from a usage error line); grading treats those
// as neither passed nor failed, exactly as the official code does.
type Status string

// The official TestStatus values. There is no XPASS: an XPASS line is not
// recorded and the test counts as missing.
const (
	PASSED  Status = "PASSED"
	FAILED  Status = "FAILED"
	SKIPPED Status = "SKIPPED"
	ERROR   Status = "ERROR"
	XFAIL   Status = "XFAIL"
)

// statusOrder is TestStatus in its declaration order, which is the order the
// official parsers test line prefixes in.
var statusOrder = []Status{FAILED, PASSED, SKIPPED, ERROR, XFAIL}

// StatusMap maps a test name to its status. Like the official dict, a later
// line overwrites an earlier one.
type StatusMap map[string]Status

// Parser turns the test output of one instance into a status map. It
// returns an error only where the official parser raises (see
// [ErrParserRaised]); such an instance has no report in the official harness.
type Parser func(log string, rules harness.Rules) (StatusMap, error)

// ErrParserRaised marks a log on which the official parser raises an
// exception (IndexError, or ParseError on malformed XML), which makes the
// official harness drop the instance as an error instead of grading it.
var ErrParserRaised = errors.New("official parser raises an exception")

var registry = map[string]Parser{
	// Python (swebench/harness/log_parsers/python.py)
	harness.ParserPytest:        parsePytest,
	harness.ParserPytestOptions: parsePytestOptions,
	harness.ParserPytestV2:      parsePytestV2,
	harness.ParserDjango:        parseDjango,
	harness.ParserSympy:         parseSympy,
	harness.ParserSeaborn:       parseSeaborn,
	harness.ParserMatplotlib:    parseMatplotlib,
	// Go, Rust, Java
	harness.ParserGotest:       parseGotest,
	harness.ParserCargo:        parseCargo,
	harness.ParserMaven:        parseMaven,
	harness.ParserAnt:          parseAnt,
	harness.ParserGradleCustom: parseGradleCustom,
	// JavaScript
	harness.ParserJest:     parseJest,
	harness.ParserJestJSON: parseJestJSON,
	harness.ParserVitest:   parseVitest,
	harness.ParserKarma:    parseKarma,
	harness.ParserTap:      parseTap,
	harness.ParserMarked:   parseMarked,
	harness.ParserChartJS:  parseChartJS,
	harness.ParserReactPDF: parseReactPDF,
	harness.ParserCalypso:  parseCalypso,
	harness.ParserP5js:     parseP5js,
	// JavaScript repositories added in 5.0.2 (javascript_v5.go)
	harness.ParserHighlightjs:     parseHighlightjs,
	harness.ParserPrismjs:         parsePrismjs,
	harness.ParserEslint:          parseEslint,
	harness.ParserBpmnJS:          parseBpmnJS,
	harness.ParserOpenlayers:      parseOpenlayers,
	harness.ParserEmotion:         parseEmotion,
	harness.ParserGrommet:         parseGrommet,
	harness.ParserNextV1:          parseNextV1,
	harness.ParserNextV2:          parseNextV2,
	harness.ParserCypress:         parseCypress,
	harness.ParserCarbon:          parseCarbon,
	harness.ParserLighthouseMocha: parseLighthouseMocha,
	harness.ParserQuartoCli:       parseQuartoCli,
	harness.ParserPlotlyJS:        parsePlotlyJS,
	// C and C++
	harness.ParserRedis:       parseRedis,
	harness.ParserJq:          parseJq,
	harness.ParserDoctest:     parseDoctest,
	harness.ParserMicropython: parseMicropython,
	harness.ParserGoogletest:  parseGoogletest,
	// PHP
	harness.ParserPhpunit: parsePhpunit,
	// Ruby
	harness.ParserMinitest:             parseMinitest,
	harness.ParserCucumber:             parseCucumber,
	harness.ParserRubyUnit:             parseRubyUnit,
	harness.ParserRspecTransformedJSON: parseRspecTransformedJSON,
}

// aliases are the official per-repository names (parse_log_astropy =
// parse_log_pytest_v2, ...), accepted by [Lookup].
var aliases = map[string]string{
	"astroid":     harness.ParserPytest,
	"flask":       harness.ParserPytest,
	"marshmallow": harness.ParserPytest,
	"pvlib":       harness.ParserPytest,
	"pyvista":     harness.ParserPytest,
	"sqlfluff":    harness.ParserPytest,
	"xarray":      harness.ParserPytest,
	"pydicom":     harness.ParserPytestOptions,
	"requests":    harness.ParserPytestOptions,
	"pylint":      harness.ParserPytestOptions,
	"astropy":     harness.ParserPytestV2,
	"scikit":      harness.ParserPytestV2,
	"sphinx":      harness.ParserPytestV2,
}

// Lookup returns the parser registered under name. The official function
// names are accepted too: "parse_log_pytest_v2" and the per-repository
// aliases such as "parse_log_astropy". A dispatching parser (immutable_js,
// jekyll, next, lighthouse) looked up this way has no instance to choose
// by; see [Bind].
func Lookup(name string) (Parser, bool) { return Bind(name, Target{}) }

// Canonical returns the registered name behind name ("parse_log_astropy"
// and "astropy" are "pytest_v2"), and whether there is one.
func Canonical(name string) (string, bool) {
	name = strings.TrimPrefix(name, "parse_log_")
	if name == "parse_"+harness.ParserPlotlyJS {
		name = harness.ParserPlotlyJS // the official name lacks "log_"
	}
	if canonical, ok := aliases[name]; ok {
		name = canonical
	}
	_, ok := registry[name]
	if !ok {
		ok = dispatchers[name]
	}
	return name, ok
}

// Names returns the canonical parser names, sorted.
func Names() []string {
	names := make([]string, 0, len(registry)+len(dispatchers))
	for name := range registry {
		names = append(names, name)
	}
	for name := range dispatchers {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

// Parse runs the parser registered under name.
func Parse(name, log string, rules harness.Rules) (StatusMap, error) {
	p, ok := Lookup(name)
	if !ok {
		return nil, &UnknownParserError{Name: name}
	}
	return p(log, rules)
}

// UnknownParserError reports a parser name that is not registered.
type UnknownParserError struct{ Name string }

func (e *UnknownParserError) Error() string { return "unknown log parser " + strconv.Quote(e.Name) }
