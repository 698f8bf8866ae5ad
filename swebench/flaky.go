package swebench

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"

	"github.com/swebox/swebox/swebench/dataset"
	"github.com/swebox/swebox/swebench/logparse"
)

// With Config.Repeat N > 1 each instance is evaluated N times. The first
// run is the official one: it writes the instance directory's files
// (report.json, test_output.txt, run_instance.log) and so the run report,
// which therefore describe one run, byte for byte as without repeats. Run
// k (2..N) writes the same files under <instance dir>/swebox_repeat/<k>/,
// which the official tools do not read. Each run resumes on its own: a
// rerun with the same run id evaluates only the runs that have no verdict
// yet (by the rules of Config.RetryFailures), so an interrupted repeat run
// completes rather than starts over.

// repeatDir is the directory of run k (1-based) of an instance.
func repeatDir(dir string, k int) string {
	if k <= 1 {
		return dir
	}
	return filepath.Join(dir, "swebox_repeat", strconv.Itoa(k))
}

// FlakyFile is the name of the flakiness report a repeat run writes in its
// log directory, <log_dir>/run_evaluation/<run_id>/<model>/.
const FlakyFile = "flaky.json"

// Absent is the status of a test in a run whose log does not mention it.
const Absent = "ABSENT"

// FlakyReport lists what changed between the runs of a repeat run: the
// instances where a test's status or the verdict differed.
type FlakyReport struct {
	// Repeat is Config.Repeat.
	Repeat int `json:"repeat"`
	// Instances are those with a flip, sorted by id.
	Instances []FlakyInstance `json:"instances"`
}

// FlakyInstance is one instance whose runs disagree.
type FlakyInstance struct {
	InstanceID string `json:"instance_id"`
	// Outcomes holds each run's outcome, run 1 first.
	Outcomes []Outcome `json:"outcomes"`
	// VerdictFlipped is set when some runs resolved the instance and others
	// left it unresolved.
	VerdictFlipped bool `json:"verdict_flipped"`
	// Tests are the tests whose status changed, sorted by name.
	Tests []FlakyTest `json:"tests"`
}

// FlakyTest is one test whose status changed between runs.
type FlakyTest struct {
	Test string `json:"test"`
	// Statuses holds the parsed status in each run that produced a test
	// log ("PASSED", "FAILED", ..., Absent), run 1 first; a run without a
	// log (an error, a timeout) is "".
	Statuses []string `json:"statuses"`
}

// Repeats is what the runs of one instance gave, with Config.Repeat > 1.
type Repeats struct {
	// Outcomes holds each run's outcome, run 1 (the official one) first.
	Outcomes []Outcome
	// VerdictFlipped: some runs resolved the instance, others did not.
	VerdictFlipped bool
	// FlakyTests are the tests whose status changed between runs.
	FlakyTests []FlakyTest
}

// Flipped reports whether anything changed between the runs.
func (r *Repeats) Flipped() bool {
	return r != nil && (r.VerdictFlipped || len(r.FlakyTests) > 0)
}

// compareRuns finds what changed between runs: outcomes holds each run's
// outcome and statuses each run's parsed test statuses (nil for a run
// without a test log).
func compareRuns(outcomes []Outcome, statuses []logparse.StatusMap) Repeats {
	r := Repeats{Outcomes: outcomes}
	var resolved, unresolved bool
	for _, o := range outcomes {
		switch o {
		case OutcomeResolved:
			resolved = true
		case OutcomeUnresolved, OutcomeOutOfMemory:
			unresolved = true
		}
	}
	r.VerdictFlipped = resolved && unresolved
	names := map[string]bool{}
	logs := 0
	for _, sm := range statuses {
		if sm == nil {
			continue
		}
		logs++
		for name := range sm {
			names[name] = true
		}
	}
	if logs < 2 {
		return r
	}
	for name := range names {
		seen := map[string]bool{}
		row := make([]string, len(statuses))
		for i, sm := range statuses {
			if sm == nil {
				continue
			}
			s, ok := sm[name]
			row[i] = string(s)
			if !ok {
				row[i] = Absent
			}
			seen[row[i]] = true
		}
		if len(seen) > 1 {
			r.FlakyTests = append(r.FlakyTests, FlakyTest{Test: name, Statuses: row})
		}
	}
	sort.Slice(r.FlakyTests, func(i, j int) bool { return r.FlakyTests[i].Test < r.FlakyTests[j].Test })
	return r
}

// repeatRuns evaluates runs 2..Config.Repeat of an instance whose run 1
// gave first, and compares them. It stops early when ctx ends or a run
// fails for reasons of the machine. start is called before a run that
// evaluates (rather than resumes).
func (e *evaluator) repeatRuns(attempt func(dir string) InstanceResult, inst dataset.Instance, pred dataset.Prediction, dir string, first InstanceResult) *Repeats {
	runs := []InstanceResult{first}
	for k := 2; k <= e.cfg.Repeat; k++ {
		if runs[len(runs)-1].Outcome.Infrastructure() {
			break
		}
		runs = append(runs, attempt(repeatDir(dir, k)))
	}
	outcomes := make([]Outcome, len(runs))
	statuses := make([]logparse.StatusMap, len(runs))
	for i, r := range runs {
		outcomes[i] = r.Outcome
		statuses[i] = e.statuses(inst, pred, repeatDir(dir, i+1))
	}
	rep := compareRuns(outcomes, statuses)
	return &rep
}

// statuses parses a run's test_output.txt; nil when it has none or the
// parser fails.
func (e *evaluator) statuses(inst dataset.Instance, pred dataset.Prediction, dir string) logparse.StatusMap {
	se := e.specs[inst.InstanceID]
	if se.err != nil {
		return nil
	}
	outPath := filepath.Join(dir, "test_output.txt")
	if _, err := os.Stat(outPath); err != nil {
		return nil
	}
	rep, err := e.grade(inst, se.ts, pred, outPath, true)
	if err != nil || !rep.Evaluation.Usable {
		return nil
	}
	return rep.StatusMap
}

// writeFlaky writes FlakyFile for the instances of results that flipped;
// it is written (with an empty list) whenever Config.Repeat > 1, so its
// presence says the run was repeated.
func (e *evaluator) writeFlaky(results []InstanceResult) (string, error) {
	rep := FlakyReport{Repeat: e.cfg.Repeat, Instances: []FlakyInstance{}}
	for _, r := range results {
		if !r.Repeats.Flipped() {
			continue
		}
		tests := r.Repeats.FlakyTests
		if tests == nil {
			tests = []FlakyTest{}
		}
		rep.Instances = append(rep.Instances, FlakyInstance{
			InstanceID: r.InstanceID, Outcomes: r.Repeats.Outcomes,
			VerdictFlipped: r.Repeats.VerdictFlipped, Tests: tests,
		})
	}
	sort.Slice(rep.Instances, func(i, j int) bool { return rep.Instances[i].InstanceID < rep.Instances[j].InstanceID })
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(e.runDir, 0o755); err != nil {
		return "", fmt.Errorf("write %s: %w", FlakyFile, err)
	}
	path := filepath.Join(e.runDir, FlakyFile)
	if err := writeFileAtomic(path, append(b, '\n')); err != nil {
		return "", fmt.Errorf("write %s: %w", FlakyFile, err)
	}
	return path, nil
}
