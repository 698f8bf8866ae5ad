package grade

import (
	"fmt"

	"github.com/swebox/swebox/swebench/harness"
)

// Rule grades one instance under a family's own rule, in place of the
// official one: it returns the report the family's harness would write,
// with Notes.Grading naming the rule.
type Rule func(Input) (InstanceReport, error)

// registered holds the rules families register; it is written only from init
// functions, before any grading.
var registered = map[harness.Grading]Rule{}

// RegisterRule makes name a grading rule that [Grade] applies with r. A
// family whose harness grades its own way calls it from the init function
// of its file in swebench/family. It panics on an empty name or rule, on
// a name harness already defines ([harness.Grading.Valid]) and on one
// registered before: the registry is built from init functions, where such
// a mistake is the program's.
func RegisterRule(name harness.Grading, r Rule) {
	if name == "" || r == nil || name.Valid() || registered[name] != nil {
		panic(fmt.Sprintf("grade: rule %q is empty, built in or registered twice", name))
	}
	registered[name] = r
}

// KnownGrading reports whether g is "", a rule of harness's vocabulary or
// a registered one.
func KnownGrading(g harness.Grading) bool { return g.Valid() || registered[g] != nil }

// UniversalNewlines is what Python's text-mode read does to line endings,
// as the harnesses read their logs.
func UniversalNewlines(s string) string { return universalNewlines(s) }

// TestChunk is the official content.split(START)[1].split(END)[0]: the
// text after the first start marker, up to the next start or end marker.
func TestChunk(log string) string { return testChunk(log) }

// FailureMarkers are the harness's failure markers, which make a log
// unusable wherever they appear, in the order the official harness looks
// for them.
func FailureMarkers() []string { return append([]string(nil), failureMarkers...) }

// NewTestsStatus is a TestsStatus whose lists are all empty, not nil, so
// that report.json writes them as [] as the official harness does.
func NewTestsStatus() TestsStatus {
	empty := func() Results { return Results{Success: []string{}, Failure: []string{}} }
	return TestsStatus{FailToPass: empty(), PassToPass: empty(), FailToFail: empty(), PassToFail: empty()}
}
