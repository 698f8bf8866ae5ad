package grade

import (
	"encoding/json"
	"strings"

	"github.com/swebox/swebox/swebench/harness"
	"github.com/swebox/swebox/swebench/logparse"
)

// ReasonNoOutputJSON (SWE-bench Pro): the text between the markers is not
// the output.json that the instance's parser.py writes ({"tests": [...]}):
// the parser did not run or failed, and Pro's harness counts the instance
// unresolved.
const ReasonNoOutputJSON Reason = "no_output_json"

// ProOutput is the output.json of a SWE-bench Pro instance's parser.py.
type ProOutput struct {
	Tests []ProTest `json:"tests"`
}

// ProTest is one test of a [ProOutput]; Status is PASSED, FAILED, SKIPPED
// or ERROR.
type ProTest struct {
	Name   string `json:"name"`
	Status string `json:"status"`
}

// ProTests is swe_bench_pro_eval.py's rule (scaleapi/SWE-bench_Pro-os at
// ca10a60, main): passed is the set of names with a PASSED entry (a name
// listed twice passes if either entry passed), and the instance is
// resolved when fail_to_pass ∪ pass_to_pass ⊆ passed; empty lists
// resolve.
func ProTests(out ProOutput, failToPass, passToPass []string) (TestsStatus, bool) {
	passed := map[string]bool{}
	for _, t := range out.Tests {
		if t.Status == "PASSED" {
			passed[t.Name] = true
		}
	}
	ts := TestsStatus{
		FailToPass: Results{Success: []string{}, Failure: []string{}},
		PassToPass: Results{Success: []string{}, Failure: []string{}},
		FailToFail: Results{Success: []string{}, Failure: []string{}},
		PassToFail: Results{Success: []string{}, Failure: []string{}},
	}
	resolved := true
	for _, l := range []struct {
		names []string
		into  *Results
	}{{failToPass, &ts.FailToPass}, {passToPass, &ts.PassToPass}} {
		for _, n := range l.names {
			if passed[n] {
				l.into.Success = append(l.into.Success, n)
			} else {
				l.into.Failure = append(l.into.Failure, n)
				resolved = false
			}
		}
	}
	return ts, resolved
}

// gradePro is Grade under SWE-bench Pro's rule: the eval script prints the
// parser's output.json between the markers; anything else there (no
// markers, the parser failed, not JSON) is Pro's "output.json not found",
// unresolved.
func gradePro(in Input, rules harness.Rules) (InstanceReport, error) {
	rep := InstanceReport{InstanceID: in.InstanceID, Rules: rules, Notes: Notes{Grading: harness.GradingPro}}
	if in.PatchIsNone {
		rep.PatchIsNone = true
		return rep, nil
	}
	rep.PatchExists = true
	text := universalNewlines(in.Log)
	if !strings.Contains(text, harness.StartTestOutput) || !strings.Contains(text, harness.EndTestOutput) {
		rep.Evaluation.Reason = ReasonMissingMarkers
		return rep, nil
	}
	var out ProOutput
	dec := json.NewDecoder(strings.NewReader(testChunk(text)))
	if err := dec.Decode(&out); err != nil || out.Tests == nil {
		rep.Evaluation.Reason = ReasonNoOutputJSON
		return rep, nil
	}
	rep.Evaluation.Usable, rep.PatchSuccessfullyApplied = true, true
	rep.StatusMap = logparse.StatusMap{}
	for _, t := range out.Tests {
		if rep.StatusMap[t.Name] != logparse.PASSED {
			rep.StatusMap[t.Name] = logparse.Status(t.Status)
		}
	}
	ts, resolved := ProTests(out, in.FailToPass, in.PassToPass)
	rep.TestsStatus, rep.Resolved = &ts, resolved
	return rep, nil
}
