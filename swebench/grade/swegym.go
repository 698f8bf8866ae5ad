package grade

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/swebox/swebox/swebench/harness"
	"github.com/swebox/swebox/swebench/logparse"
)

// ParserPytestPydantic names SWE-Gym's fork's parse_log_pytest_pydantic,
// the one parser of SWE-Gym/SWE-Bench-Fork that the official harness does
// not have. Only [harness.GradingSWEGym] knows it.
const ParserPytestPydantic = "pytest_pydantic"

// sweGymResetFailed is a failure text of 2.0.13's get_logs_eval beside
// the official markers.
const sweGymResetFailed = "Failed to reset task environment"

// gradeSWEGym is Grade under SWE-Gym's rule (SWE-Gym/SWE-Bench-Fork at
// 242429c, SWE-bench 2.0.13): a log holding a failure marker anywhere, or
// not saying "applied patch" in any letter case (git apply -v's "Applied
// patch <file> cleanly." of the test patch), is unusable; otherwise the
// parser reads the whole log, everything after the last ">>>>> Applied
// Patch (pred)" when the log holds one, as v4's pytest parsers do; and
// the official rule grades.
func gradeSWEGym(in Input) (InstanceReport, error) {
	rep := InstanceReport{InstanceID: in.InstanceID, Rules: harness.V4, Notes: Notes{Grading: harness.GradingSWEGym}}
	if in.PatchIsNone {
		rep.PatchIsNone = true
		return rep, nil
	}
	rep.PatchExists = true
	parse := parseSWEGymPydantic
	if in.Parser != ParserPytestPydantic {
		p, ok := logparse.Bind(in.Parser, logparse.Target{InstanceID: in.InstanceID, Version: in.Version})
		if !ok {
			return rep, fmt.Errorf("grade %s: %w", in.InstanceID, &logparse.UnknownParserError{Name: in.Parser})
		}
		parse = func(log string) (logparse.StatusMap, error) { return p(log, harness.V4) }
	}
	text := universalNewlines(in.Log)
	for _, marker := range append(failureMarkers[:len(failureMarkers):len(failureMarkers)], sweGymResetFailed) {
		if strings.Contains(text, marker) {
			rep.Evaluation.Reason, rep.Evaluation.Marker = ReasonFailureMarker, marker
			return rep, nil
		}
	}
	// Python's str.lower and strings.ToLower differ only on characters
	// that cannot form "applied patch".
	if !strings.Contains(strings.ToLower(text), "applied patch") {
		rep.Evaluation.Reason = ReasonNoAppliedPatch
		return rep, nil
	}
	if i := strings.LastIndex(text, harness.AppliedPatchMarker+" (pred)"); i >= 0 {
		text = text[i+len(harness.AppliedPatchMarker+" (pred)"):]
	}
	sm, err := parse(text)
	if err != nil {
		return rep, fmt.Errorf("grade %s: parse test output: %w", in.InstanceID, err)
	}
	rep.Evaluation.Usable, rep.Evaluation.WholeLog, rep.StatusMap = true, true, sm
	rep.PatchSuccessfullyApplied = true
	ts := gradeTests(sm, in.FailToPass, in.PassToPass, false, harness.V4, nil)
	rep.TestsStatus = &ts
	rep.Resolved = ts.Resolution() == ResolvedFull
	return rep, nil
}

// ReasonNoAppliedPatch (SWE-Gym's rule): the log nowhere says "applied
// patch".
const ReasonNoAppliedPatch Reason = "no_applied_patch"

var (
	pydanticColour = regexp.MustCompile(`\[(\d+)m`)
	pydanticFailed = regexp.MustCompile(`FAILED\s*\[.*?\]`)
	pydanticStrip  = func() *strings.Replacer {
		var pairs []string
		for c := 1; c < 32; c++ {
			pairs = append(pairs, string(rune(c)), "")
		}
		return strings.NewReplacer(pairs...)
	}()
	pydanticStatuses = []logparse.Status{logparse.FAILED, logparse.PASSED, logparse.SKIPPED, logparse.ERROR, logparse.XFAIL}
)

// parseSWEGymPydantic is the fork's parse_log_pytest_pydantic: v4's
// pytest_v2 that also drops a "[...]" after FAILED, and, unlike it, does
// not skip a line of one word: Python raises IndexError there, and so
// does this ([logparse.ErrParserRaised]).
func parseSWEGymPydantic(log string) (logparse.StatusMap, error) {
	m := logparse.StatusMap{}
	has := func(line string, fn func(string, string) bool) bool {
		for _, s := range pydanticStatuses {
			if fn(line, string(s)) {
				return true
			}
		}
		return false
	}
	for _, line := range strings.Split(log, "\n") {
		line = pydanticColour.ReplaceAllString(line, "")
		line = pydanticStrip.Replace(line)
		line = pydanticFailed.ReplaceAllString(line, "FAILED")
		switch {
		case has(line, strings.HasPrefix):
			if strings.HasPrefix(line, string(logparse.FAILED)) {
				line = strings.ReplaceAll(line, " - ", " ")
			}
			tok := strings.Fields(line) // str.split(): the control characters are gone
			if len(tok) < 2 {
				return nil, fmt.Errorf("parse_log_pytest_pydantic: line %q has no test name: %w", line, logparse.ErrParserRaised)
			}
			m[tok[1]] = logparse.Status(tok[0])
		case has(line, strings.HasSuffix):
			tok := strings.Fields(line) // str.split(): the control characters are gone
			if len(tok) < 2 {
				return nil, fmt.Errorf("parse_log_pytest_pydantic: line %q has no status after a name: %w", line, logparse.ErrParserRaised)
			}
			m[tok[0]] = logparse.Status(tok[1])
		}
	}
	return m, nil
}
