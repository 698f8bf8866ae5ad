package grade

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/swebox/swebox/pytestparse"
	"github.com/swebox/swebox/swebench/harness"
	"github.com/swebox/swebox/swebench/logparse"
)

// CountCheck cross-checks the outcomes of one test run, counted two ways:
// it receives the graded test output (the text between the markers, or
// the whole log when that was graded) and the official status map, and
// returns one human-readable line per disagreement, or nil when the counts
// agree or cannot be compared. The lines go to [Notes.CountCheck].
//
// The official parsers see only what their text rules catch; the runner's
// own closing line ("=== 3 failed, 10 passed in 1.2s ===") counts
// everything that ran. When the two disagree the grade may rest on a
// partial or forged log, which the report then says.
type CountCheck func(testOutput string, official logparse.StatusMap) []string

// NoCountCheck disables the cross-check in [Input.CountCheck].
var NoCountCheck CountCheck = func(string, logparse.StatusMap) []string { return nil }

// maxCountNotes caps the notes of one report.
const maxCountNotes = 20

// pytestParsers are the official parsers that read pytest output.
var pytestParsers = map[string]bool{
	harness.ParserPytest: true, harness.ParserPytestOptions: true, harness.ParserPytestV2: true,
	harness.ParserMatplotlib: true, harness.ParserSeaborn: true,
}

// CountCheckFor returns the cross-check used by default for a parser:
// [PytestCountCheck] for the pytest-based parsers, nil for the others.
func CountCheckFor(parser string, rules harness.Rules) CountCheck {
	if name, ok := logparse.Canonical(parser); ok && pytestParsers[name] {
		return PytestCountCheck(name, rules)
	}
	return nil
}

// PytestCountCheck cross-checks pytest output with package pytestparse,
// which reads every record of the log with full node ids:
//
//   - per outcome, the tests pytest reported against the counts of its
//     closing line (a missing closing line means the run was cut off);
//   - every test the official parser counts as passing (PASSED, XFAIL)
//     against pytest's own verdict: one pytest never reported (a line
//     forged in captured output, say) or reported failed is noted.
//
// Official names are derived from the node ids by the official parser
// itself, so truncation at whitespace and the options rewriting apply.
func PytestCountCheck(parser string, rules harness.Rules) CountCheck {
	return func(out string, official logparse.StatusMap) []string {
		r := pytestparse.ParseString(out)
		if r.Sessions == 0 && !r.Summary.Seen && len(r.Tests) == 0 {
			return nil // not pytest output
		}
		var notes []string
		if !r.Summary.Seen {
			notes = append(notes, "no pytest closing line: the run was cut off")
		} else {
			notes = append(notes, closingLineNotes(r)...)
		}
		notes = append(notes, verdictNotes(r, official, parser, rules)...)
		if len(notes) > maxCountNotes {
			notes = append(notes[:maxCountNotes], fmt.Sprintf("... and %d more", len(notes)-maxCountNotes))
		}
		return notes
	}
}

// closingLineNotes compares pytest's closing counts with the reports found.
// Skips of a plain -rA run appear only folded by location ("SKIPPED [2]
// file:line"), so those groups count too.
func closingLineNotes(r *pytestparse.Report) []string {
	reported := map[pytestparse.Outcome]int{}
	for _, t := range r.Tests {
		if progressArtefact.MatchString(t.ID) {
			continue
		}
		for _, o := range t.Reported.Outcomes() {
			reported[o]++
		}
	}
	folded := 0
	for _, g := range r.SkipGroups {
		folded += g.Count
	}
	reported[pytestparse.Skipped] = max(reported[pytestparse.Skipped], folded)
	var notes []string
	for _, o := range pytestparse.Outcomes() {
		if want := r.Summary.Count(o); reported[o] != want {
			notes = append(notes, fmt.Sprintf("closing line counts %d %s, the log reports %d", want, o, reported[o]))
		}
	}
	return notes
}

// verdictNotes lists official passes that pytest contradicts.
func verdictNotes(r *pytestparse.Report, official logparse.StatusMap, parser string, rules harness.Rules) []string {
	byName := map[string][]pytestparse.Outcome{}
	for _, t := range r.Tests {
		name := officialName(t.ID, parser, rules)
		byName[name] = append(byName[name], t.Outcome)
	}
	names := make([]string, 0, len(official))
	for name, status := range official {
		if status == logparse.PASSED || status == logparse.XFAIL {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	var notes []string
	for _, name := range names {
		outcomes, ok := byName[name]
		if !ok {
			// v5 pytest_v2 keys "id - reason" for XFAIL lines.
			if id, _, cut := strings.Cut(name, " - "); cut {
				outcomes, ok = byName[id]
			}
		}
		if !ok {
			if !progressArtefact.MatchString(name) {
				notes = append(notes, fmt.Sprintf("%q is %s for the official parser, but pytest reported no such test", name, official[name]))
			}
			continue
		}
		for _, o := range outcomes {
			if o == pytestparse.Failed || o == pytestparse.Error {
				notes = append(notes, fmt.Sprintf("%q is %s for the official parser, but pytest reported it %s", name, official[name], o))
				break
			}
		}
	}
	return notes
}

// progressArtefact is a wrapped progress indicator ("PASSED    [100%]" on
// a line of its own, when a test wrote to the terminal): pytestparse reads
// it as a record, pytest's closing line does not count it.
var progressArtefact = regexp.MustCompile(`^\s*\[\s*[0-9]+%\]$`)

// officialName is the name the official parser gives a node id: the key it
// records for the summary line "PASSED <id>".
func officialName(id, parser string, rules harness.Rules) string {
	m, err := logparse.Parse(parser, "PASSED "+id+"\n", rules)
	if err != nil || len(m) != 1 {
		return id
	}
	for name := range m {
		return name
	}
	return id
}
