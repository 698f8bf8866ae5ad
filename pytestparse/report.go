package pytestparse

// Test is one test (one pytest node id) and its verdict.
//
// When a test is reported more than once, the verdict is the most severe
// outcome it was reported with, in this order:
//
//	failed > error > xpassed > passed > xfailed > skipped
//
// so a pass followed by an error at teardown is an error, a failure followed
// by an error at teardown stays a failure, and a verbose line and a summary
// line that agree are one report. For the same outcome a summary line beats a
// verbose line: it sets Line and Source, and its message replaces the verbose
// line's skip or xfail reason. Reported keeps every outcome seen, which is how
// pytest's closing line counts them (see [Report.ReportedCounts]).
type Test struct {
	// ID is the full node id as pytest printed it, for example
	// "tests/test_x.py::TestY::test_z[a - b]". Non-ASCII parameter ids appear
	// escaped ("caf\xe9"), as pytest prints them.
	ID string `json:"id"`
	// Outcome is the verdict; see the precedence rule above.
	Outcome Outcome `json:"outcome"`
	// Message is the text after the node id on the record that gave the
	// verdict: the exception line of a FAILED or ERROR summary line, or the
	// reason of a skip, xfail or xpass. pytest trims it to the terminal width
	// unless it runs on CI.
	Message string `json:"message,omitempty"`
	// Line is the 1-based line number of the record that gave the verdict.
	Line int `json:"line"`
	// Source is the kind of that record.
	Source Source `json:"source"`
	// Reported is every outcome the test was reported with. An error next to
	// another outcome is an error at teardown; an error alone is an error at
	// setup or, for ids in [Report.CollectionErrors], at collection.
	Reported OutcomeSet `json:"reported"`
	// Reruns counts the RERUN reports of pytest-rerunfailures.
	Reruns int `json:"reruns,omitempty"`
}

// Summary holds the counts of pytest's closing line, for example
// "==== 3 failed, 10 passed, 1 warning, 2 errors in 2.31s ====".
type Summary struct {
	Passed     int `json:"passed"`
	Failed     int `json:"failed"`
	Errors     int `json:"errors"`
	Skipped    int `json:"skipped"`
	XFailed    int `json:"xfailed"`
	XPassed    int `json:"xpassed"`
	Warnings   int `json:"warnings"`
	Deselected int `json:"deselected"`
	Rerun      int `json:"rerun"`
	// Other holds counts under names this package does not know, such as
	// "tests collected" (--collect-only) or a plugin's "subtests passed".
	Other map[string]int `json:"other,omitempty"`
	// Duration is the time as printed: "2.31s", "75.20s (0:01:15)" or,
	// before pytest 5.4, "2.31 seconds".
	Duration string `json:"duration,omitempty"`
	// Seen reports whether a closing line was found. Without one the run was
	// cut off (or produced no pytest output) and every count is zero.
	Seen bool `json:"seen"`
	// Line is the line number of the closing line.
	Line int `json:"line,omitempty"`
}

// Count returns the closing line's count for an outcome.
func (s Summary) Count(o Outcome) int {
	switch o {
	case Passed:
		return s.Passed
	case Failed:
		return s.Failed
	case Error:
		return s.Errors
	case Skipped:
		return s.Skipped
	case XFailed:
		return s.XFailed
	case XPassed:
		return s.XPassed
	}
	return 0
}

// Counts returns the closing line's count of every outcome, zeros included.
func (s Summary) Counts() map[Outcome]int {
	m := make(map[Outcome]int, numOutcomes)
	for _, o := range Outcomes() {
		m[o] = s.Count(o)
	}
	return m
}

// Total returns the number of test reports the closing line counts.
func (s Summary) Total() int {
	return s.Passed + s.Failed + s.Errors + s.Skipped + s.XFailed + s.XPassed
}

// SkipGroup is one line of pytest's folded skip summary,
// "SKIPPED [2] tests/test_x.py:12: no network": pytest prints skips by
// location and reason, not by node id, so these cannot be matched to tests.
type SkipGroup struct {
	Count    int    `json:"count"`
	Location string `json:"location"`
	Reason   string `json:"reason,omitempty"`
	Line     int    `json:"line"`
}

// Report is what a pytest log says.
type Report struct {
	// Tests holds one record per node id, in the order ids were first seen.
	Tests []Test `json:"tests"`
	// Summary is the last closing line outside captured output.
	Summary Summary `json:"summary"`
	// CollectionErrors lists the paths (or node ids) pytest failed to
	// collect. Each also appears in Tests with the outcome error, as the
	// closing line counts it among the errors.
	CollectionErrors []string `json:"collection_errors,omitempty"`
	// SkipGroups holds the folded "SKIPPED [N] path:line: reason" lines.
	SkipGroups []SkipGroup `json:"skip_groups,omitempty"`
	// Unfinished lists node ids that started but reported no outcome: the
	// test that was running when the log was cut off, or ones a crashed
	// xdist worker never finished.
	Unfinished []string `json:"unfinished,omitempty"`
	// Interrupted reports a "!!! ... !!!" line: a collection error, -x,
	// KeyboardInterrupt or pytest.exit. InterruptReason is its text.
	Interrupted     bool   `json:"interrupted,omitempty"`
	InterruptReason string `json:"interrupt_reason,omitempty"`
	// Sessions counts "test session starts" lines (several pytest runs can
	// share a log). Collected is the last "collected N items" count.
	Sessions  int `json:"sessions"`
	Collected int `json:"collected,omitempty"`
	// Lines is the number of lines read.
	Lines int `json:"lines"`
	// Unparsed keeps the first lines that matched no known form (each cut
	// to a few KiB); UnparsedDropped counts the ones not kept.
	Unparsed        []string `json:"unparsed,omitempty"`
	UnparsedDropped int      `json:"unparsed_dropped,omitempty"`
}

// Counts returns the number of tests per verdict, zeros included. The counts
// add up to len(r.Tests).
func (r *Report) Counts() map[Outcome]int {
	m := make(map[Outcome]int, numOutcomes)
	for _, o := range Outcomes() {
		m[o] = 0
	}
	for i := range r.Tests {
		m[r.Tests[i].Outcome]++
	}
	return m
}

// ReportedCounts counts every outcome each test was reported with, which is
// how pytest's closing line counts: a test that passed and then errored at
// teardown adds one to passed and one to errors.
func (r *Report) ReportedCounts() map[Outcome]int {
	m := make(map[Outcome]int, numOutcomes)
	for _, o := range Outcomes() {
		m[o] = 0
	}
	for i := range r.Tests {
		for _, o := range Outcomes() {
			if r.Tests[i].Reported.Has(o) {
				m[o]++
			}
		}
	}
	return m
}

// Test returns the record of a node id.
func (r *Report) Test(id string) (Test, bool) {
	for i := range r.Tests {
		if r.Tests[i].ID == id {
			return r.Tests[i], true
		}
	}
	return Test{}, false
}

// Outcomes returns the verdict of every test by node id.
func (r *Report) Outcomes() map[string]Outcome {
	m := make(map[string]Outcome, len(r.Tests))
	for i := range r.Tests {
		m[r.Tests[i].ID] = r.Tests[i].Outcome
	}
	return m
}
