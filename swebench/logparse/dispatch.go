package logparse

import (
	"fmt"

	"github.com/swebox/swebox/swebench/harness"
)

// Target is what a dispatching parser reads from the official TestSpec:
// four official parsers pick another parser by instance or version.
type Target struct {
	// InstanceID picks immutable_js's and jekyll's parser.
	InstanceID string
	// Version picks next's and lighthouse's parser.
	Version string
}

// dispatchers are the official parsers that only choose another
// ([harness.ChosenParser]). The choice is made when the log is parsed, as
// upstream makes it: an instance the official function does not know
// raises then (ValueError), after the harness has already checked the
// log's markers.
var dispatchers = map[string]bool{
	harness.ParserImmutableJS: true,
	harness.ParserJekyll:      true,
	harness.ParserNext:        true,
	harness.ParserLighthouse:  true,
}

// Bind returns the parser registered under name with t bound: for the
// dispatching parsers (immutable_js, jekyll, next, lighthouse) the choice
// is made from t when the returned parser runs; any other parser ignores
// t. [Lookup] is Bind with an empty Target.
func Bind(name string, t Target) (Parser, bool) {
	name, ok := Canonical(name)
	if !ok {
		return nil, false
	}
	if dispatchers[name] {
		return func(log string, rules harness.Rules) (StatusMap, error) {
			chosen, ok := harness.ChosenParser(name, t.InstanceID, t.Version)
			if !ok {
				return nil, fmt.Errorf("parse_log_%s: instance id %q, version %q: %w", name, t.InstanceID, t.Version, ErrParserRaised)
			}
			if chosen == harness.ParserLighthouseJSON {
				return parseLighthouseJSON(log, rules)
			}
			return registry[chosen](log, rules)
		}, true
	}
	return registry[name], true
}

// ParseTarget runs the parser registered under name with t bound (see
// [Bind]).
func ParseTarget(name, log string, rules harness.Rules, t Target) (StatusMap, error) {
	p, ok := Bind(name, t)
	if !ok {
		return nil, &UnknownParserError{Name: name}
	}
	return p(log, rules)
}
